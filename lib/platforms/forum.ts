/**
 * forum (Reddit): posts (FORUM_POST), subreddits (FORUM_COMMUNITY) and users (FORUM_USER) from
 * the public `.json` endpoints (`/comments/{id}.json`, `/r/{sub}/about.json`,
 * `/user/{name}/about.json`), asked with linklens's own User-Agent. Key-less Reddit allows about
 * 10 requests a minute per address; a post costs two (the post and its subreddit's about.json,
 * the latter best-effort). A share link (`/r/{sub}/s/{code}`) is resolved by following its redirect.
 *
 * When the source fails (blocked, rate-limited, an HTML answer) the generic preview of the link is
 * used. What Reddit itself says is gone (a removed or deleted post, a private, banned or
 * quarantined subreddit, a suspended or deleted user) is reported as ok:false with the reason,
 * never as a page titled "Reddit - Dive into anything".
 * Base URLs and the OAuth client are its settings (below), given to it as `ctx.settings`.
 */
import { decodeHTML } from 'entities';
import type { ForumCommunity, ForumPost, ForumUser, ImageSet, MediaImage } from '../contract/link.js';
import { metaValues } from '../extract/rules.js';
import { cleanText } from '../extract/text.js';
import { header } from '../fetch/headers.js';
import { toImageSet } from '../media/host-images.js';
import { defineSettings, httpUrl, optionalText } from '../settings.js';
import { at, fetchSource, isoDate, type Json, num, obj, optional, parseJson, platformObjectId, SOURCE_LIMITS, str } from './shared.js';
import type { Platform, PlatformContextOf, PlatformMatch, PlatformPreview } from './types.js';

const MAX_GALLERY_IMAGES = 10;
const CANONICAL = 'https://www.reddit.com';

const settings = defineSettings('forum', 'forum (Reddit)', {
  baseUrl: {
    env: 'LINKPREVIEW_REDDIT_BASE_URL',
    type: httpUrl(),
    default: 'https://www.reddit.com',
    doc: "Reddit's web origin: the key-less `.json` endpoints and share links.",
  },
  oauthUrl: {
    env: 'LINKPREVIEW_REDDIT_OAUTH_URL',
    type: httpUrl(),
    default: 'https://oauth.reddit.com',
    doc: 'Where the API answers with an app-only OAuth token.',
  },
  tokenUrl: {
    env: 'LINKPREVIEW_REDDIT_TOKEN_URL',
    type: httpUrl(),
    default: 'https://www.reddit.com/api/v1/access_token',
    doc: 'Where the app-only OAuth token comes from.',
  },
  clientId: {
    env: 'REDDIT_CLIENT_ID',
    type: optionalText(),
    default: undefined,
    doc: 'With `REDDIT_CLIENT_SECRET`: app-only OAuth (higher rate limits). Unset: the key-less `.json` endpoints.',
  },
  clientSecret: {
    env: 'REDDIT_CLIENT_SECRET',
    type: optionalText(),
    default: undefined,
    doc: "The OAuth app's secret (with `REDDIT_CLIENT_ID`).",
  },
});

type Ctx = PlatformContextOf<typeof settings>;

function forumObjectId(kind: 'post' | 'community' | 'user', ownId: string): number {
  return platformObjectId('forum', kind, ownId);
}

const NAME = /^[A-Za-z0-9_-]{2,32}$/;

export function matchForum(url: URL): PlatformMatch | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const segs = url.pathname.split('/').filter(Boolean);
  if (host === 'redd.it' || host === 'www.redd.it') {
    return segs.length === 1 && /^[a-z0-9]{3,12}$/i.test(segs[0]) ? { kind: 'post', ids: { postId: segs[0].toLowerCase() } } : undefined;
  }
  if (!/^((www|old|new|np|m|i|amp|sh)\.)?reddit\.com$/.test(host)) return undefined;
  const [a, b, c, d] = segs;
  if (a === 'comments' && b && /^[a-z0-9]{3,12}$/i.test(b)) return { kind: 'post', ids: { postId: b.toLowerCase() } };
  if (a === 'r' && b && NAME.test(b)) {
    if (c === 'comments' && d && /^[a-z0-9]{3,12}$/i.test(d)) return { kind: 'post', ids: { postId: d.toLowerCase(), subreddit: b } };
    if (c === 's' && d && /^[A-Za-z0-9]{4,20}$/.test(d)) return { kind: 'share', ids: { subreddit: b, share: d } };
    if (!c || ['hot', 'new', 'top', 'rising', 'controversial', 'wiki', 'about'].includes(c)) return { kind: 'community', ids: { subreddit: b } };
    return undefined;
  }
  if ((a === 'user' || a === 'u') && b && NAME.test(b.replace(/^u_/, ''))) {
    if (c === 'comments' && d && /^[a-z0-9]{3,12}$/i.test(d)) return { kind: 'post', ids: { postId: d.toLowerCase() } };
    if (!c || ['submitted', 'overview', 'comments', 'posts'].includes(c)) return { kind: 'user', ids: { username: b } };
    return undefined;
  }
  return undefined;
}

export const forum: Platform<typeof settings> = {
  name: 'forum',
  settings,
  hostProfile: {
    hosts: ['reddit.com'],
    userAgent: 'Mozilla/5.0 (compatible; Discordbot/2.0; linklens/1.0)',
    note: 'serves Open Graph HTML to preview bots instead of the "blocked" page for unknown clients',
  },
  match: matchForum,
  async extract(url, match, ctx) {
    switch (match.kind) {
      case 'post':
        return extractPost(match.ids.postId, ctx);
      case 'share':
        return extractShare(url, match.ids.subreddit, match.ids.share, ctx);
      case 'community':
        return extractCommunity(match.ids.subreddit, ctx);
      case 'user':
        return extractUser(match.ids.username, ctx);
      default:
        return undefined;
    }
  },
  // Reddit's page read generically (the .json source blocked): its og tags are templates
  // ("From the lotus community on Reddit: …", "Explore this post and more from the lotus
  // community"), while <title> ("Post title : r/lotus") and the meta description (the post's
  // first lines) are the post's own.
  pageRules: {
    title: [{ name: 'reddit <title>', get: (c) => (c.page.title && / : (r\/)?[A-Za-z0-9_]{2,32}$/.test(c.page.title) ? c.page.title : undefined) }],
    description: [{ name: 'reddit meta description', get: (c) => metaValues(c.page, 'description') }],
  },
};

// ---------------------------------------------------------------------------------------------
// Fetching

interface Answer {
  status: number;
  json?: unknown;
  /** Reddit's own JSON error body (`{"reason": "private", "error": 403}`), when it sent one. */
  reason?: string;
  /** The answer was Reddit's JSON (even an error), not an HTML block page or a proxy's 404. */
  isJson: boolean;
}

/** App-only OAuth tokens, per client id, reused until a minute before they expire. */
const tokens = new Map<string, { token: string; expires: number }>();

/**
 * The app-only OAuth token when REDDIT_CLIENT_ID/SECRET are set (client_credentials grant through
 * the guarded fetcher); undefined when not configured or the token call fails (key-less .json then).
 */
async function redditToken(ctx: Ctx): Promise<string | undefined> {
  const { clientId: id, clientSecret: secret, tokenUrl } = ctx.settings;
  if (!id || !secret) return undefined;
  const cached = tokens.get(id);
  if (cached && cached.expires > Date.now()) return cached.token;
  // The token call may fail: the key-less .json is the next source.
  const res = await optional(() =>
    ctx.fetch(tokenUrl, {
      method: 'POST',
      body: 'grant_type=client_credentials',
      maxBytes: 64 * 1024,
      onTooLarge: 'fail',
      timeoutMs: Math.min(SOURCE_LIMITS.timeoutMs, ctx.config.fetchTimeoutMs),
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': ctx.config.userAgent,
      },
    }),
  );
  const body = res?.status === 200 ? obj(parseJson(res.body.toString('utf8'))) : undefined;
  if (!body || typeof body.access_token !== 'string') return undefined;
  const ttl = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  tokens.set(id, { token: body.access_token, expires: Date.now() + Math.max(0, ttl - 60) * 1000 });
  return body.access_token;
}

async function fetchJson(path: string, ctx: Ctx): Promise<Answer> {
  const token = await redditToken(ctx);
  const { oauthUrl, baseUrl } = ctx.settings;
  const { res } = await fetchSource(`${token ? oauthUrl : baseUrl}${path}`, ctx, {
    accept: 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
  // Reddit's JSON, an error included; an HTML block page or a proxy's answer is none.
  const looksJson = /json/i.test(header(res.headers, 'content-type') ?? '') || /^\s*[[{]/.test(res.body.toString('utf8', 0, 64));
  const json = looksJson ? parseJson(res.body.toString('utf8')) : undefined;
  const reason = str(obj(json)?.reason);
  return { status: res.status, json, reason, isJson: json !== undefined };
}

/** A JSON error that is Reddit's word on the object (not a rate limit or a block). */
function isVerdict(a: Answer): boolean {
  return a.isJson && (a.status === 404 || a.status === 403 || a.status === 410);
}

/** Reddit's image URLs come HTML-escaped (`&amp;`) unless raw_json=1 was honoured. */
const imageUrl = (v: unknown) => {
  const s = str(v);
  if (!s || !/^https?:\/\//i.test(s)) return undefined;
  return decodeHTML(s);
};

// ---------------------------------------------------------------------------------------------
// Posts

async function extractShare(url: URL, subreddit: string, share: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const res = await ctx.fetch(`${ctx.settings.baseUrl}/r/${subreddit}/s/${share}`, {
    method: 'HEAD',
    maxBytes: 0,
    timeoutMs: ctx.config.fetchTimeoutMs,
    headers: { 'user-agent': ctx.config.userAgent },
  });
  const toCanonical = (u: string) => onCanonicalHost(u, ctx.settings.baseUrl);
  const target = matchForum(new URL(toCanonical(res.finalUrl)));
  if (target?.kind !== 'post') return undefined;
  const out = await extractPost(target.ids.postId, ctx);
  if (!out) return undefined;
  // The link's own trail: the share link, then where it led (on Reddit's host, whatever base URL answered).
  const trail = [url.href, ...res.trail.slice(1).map(toCanonical)];
  return { ...out, trail };
}

/** A URL under the configured base URL, as the same path on www.reddit.com. */
function onCanonicalHost(u: string, base: string): string {
  if (u.startsWith(`${base}/`)) return `${CANONICAL}${u.slice(base.length)}`;
  return u;
}

async function extractPost(postId: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const answer = await fetchJson(`/comments/${postId}.json?raw_json=1&limit=1&depth=1`, ctx);
  if (answer.status === 429 || !answer.isJson) return undefined; // rate-limited or blocked: the generic preview
  if (isVerdict(answer)) {
    const why =
      answer.reason && COMMUNITY_GONE[answer.reason]
        ? `This post is in a community that is not public: ${COMMUNITY_GONE[answer.reason]}`
        : 'This post does not exist or was deleted.';
    return gone('FORUM_POST', answer.status, why, { forumPost: { id: forumObjectId('post', `t3_${postId}`), xId: postId } });
  }
  const post = (Array.isArray(answer.json) ? at(answer.json[0], 'data', 'children', 0, 'data') : undefined) as Json | undefined;
  if (answer.status !== 200 || !post || !str(post.id)) return undefined;

  const subreddit = str(post.subreddit);
  // The subreddit's about.json is best-effort: the post carries its community's name and counts too.
  const about = subreddit ? await optional(() => fetchJson(`/r/${subreddit}/about.json?raw_json=1`, ctx)) : undefined;
  const communityData = about?.status === 200 ? (at(about.json, 'data') as Json | undefined) : undefined;

  const kind = postType(post);
  const mediaSources = mediaOf(post, kind);
  const [media, community] = await Promise.all([
    Promise.all(mediaSources.map((src) => ctx.hostImage(src))),
    buildCommunity(
      communityData ?? {
        display_name: post.subreddit,
        name: post.subreddit_id,
        subscribers: post.subreddit_subscribers,
        subreddit_type: post.subreddit_type,
        over18: post.over_18,
      },
      ctx,
    ),
  ]);
  const hosted = media.filter((m): m is MediaImage => !!m);

  const id = str(post.name) ?? `t3_${postId}`;
  const out: ForumPost = { id: forumObjectId('post', id), xId: str(post.id) };
  out.createdAt = isoDate(post.created_utc);
  out.publishedAt = out.createdAt;
  const edited = isoDate(post.edited);
  if (edited) out.updatedAt = edited;
  const author = str(post.author);
  if (author && author !== '[deleted]') {
    out.user = { id: forumObjectId('user', str(post.author_fullname) ?? author.toLowerCase()), username: author };
  }
  out.community = community;
  const selftext = typeof post.selftext === 'string' ? post.selftext.trim() : '';
  const removal = removedReason(post);
  if (kind === 'TEXT' && selftext && !removal) out.text = selftext;
  if (num(post.score) !== undefined) out.likesCount = num(post.score);
  if (num(post.num_comments) !== undefined) out.commentsCount = num(post.num_comments);
  out.type = kind;
  if (hosted.length) out.media = hosted;
  for (const k of Object.keys(out) as (keyof ForumPost)[]) if (out[k] === undefined) delete out[k];

  const title = cleanText(str(post.title), 500);
  if (removal) {
    // Reddit still answers for a removed post; the preview says what happened instead of showing it as content.
    return { type: 'FORUM_POST', ok: false, status: answer.status, ...(title ? { title } : {}), description: removal, fields: { forumPost: out } };
  }
  const description = cleanText(selftext, 1000) ?? `${str(post.subreddit_name_prefixed) ?? `r/${subreddit}`}${author ? ` • u/${author}` : ''}`;
  const image: ImageSet | undefined = hosted[0] ? toImageSet(hosted[0]) : undefined;
  return {
    type: 'FORUM_POST',
    ok: true,
    status: answer.status,
    title: title ?? `${postId}`,
    description,
    ...(image ? { image } : {}),
    fields: { forumPost: out },
  };
}

export function postType(p: Json): NonNullable<ForumPost['type']> {
  if (p.is_gallery === true || (p.gallery_data && p.media_metadata)) return 'GALLERY';
  const hint = str(p.post_hint) ?? '';
  if (p.is_video === true || hint === 'hosted:video' || hint === 'rich:video' || at(p, 'media', 'reddit_video')) return 'VIDEO';
  if (hint === 'image' || /^https?:\/\/(i\.redd\.it|i\.imgur\.com)\/.+\.(jpe?g|png|gif|webp)$/i.test(str(p.url_overridden_by_dest) ?? str(p.url) ?? ''))
    return 'IMAGE';
  if (p.is_self === true) return 'TEXT';
  return 'LINK';
}

/** The images of a post, largest first: gallery items in order, the image, a video's poster, a link's preview. */
function mediaOf(p: Json, kind: NonNullable<ForumPost['type']>): string[] {
  if (kind === 'GALLERY') {
    const items = (at(p, 'gallery_data', 'items') ?? []) as Json[];
    const meta = (p.media_metadata ?? {}) as Record<string, Json>;
    const out: string[] = [];
    for (const it of items) {
      const m = meta[String(it?.media_id)];
      if (!m || m.status === 'failed') continue;
      const u = imageUrl(at(m, 's', 'u')) ?? imageUrl(at(m, 's', 'gif'));
      if (u) out.push(u);
      if (out.length >= MAX_GALLERY_IMAGES) break;
    }
    return out;
  }
  const preview = imageUrl(at(p, 'preview', 'images', 0, 'source', 'url'));
  if (kind === 'IMAGE') return [imageUrl(p.url_overridden_by_dest) ?? imageUrl(p.url) ?? preview].filter((u): u is string => !!u);
  if (kind === 'VIDEO' || kind === 'LINK') return preview ? [preview] : [];
  return preview ? [preview] : [];
}

function removedReason(p: Json): string | undefined {
  const by = str(p.removed_by_category);
  const text = typeof p.selftext === 'string' ? p.selftext.trim() : '';
  if (by === 'deleted' || by === 'author' || (text === '[deleted]' && p.author === '[deleted]')) return 'This post was deleted by its author.';
  if (by === 'moderator' || by === 'automod_filtered' || text === '[removed]') return 'This post was removed by the moderators.';
  if (by === 'reddit' || by === 'anti_evil_ops' || by === 'community_ops') return 'This post was removed by Reddit.';
  if (by === 'copyright_takedown') return 'This post was removed after a copyright notice.';
  if (by) return `This post was removed (${by}).`;
  return undefined;
}

function gone(type: PlatformPreview['type'], status: number, description: string, fields: PlatformPreview['fields']): PlatformPreview {
  return { type, ok: false, status, description, fields };
}

// ---------------------------------------------------------------------------------------------
// Communities

async function buildCommunity(d: Json, ctx: Ctx): Promise<ForumCommunity> {
  const name = str(d.display_name);
  const own = str(d.name) ?? (name ? name.toLowerCase() : 'unknown');
  const [avatar, banner] = await Promise.all([
    ctx.hostImage(imageUrl(d.community_icon) ?? imageUrl(d.icon_img)),
    ctx.hostImage(imageUrl(d.banner_background_image) ?? imageUrl(d.banner_img) ?? imageUrl(d.mobile_banner_image)),
  ]);
  const c: ForumCommunity = { id: forumObjectId('community', own) };
  if (name) c.name = name;
  if (str(d.title)) c.title = str(d.title);
  const description = str(d.public_description) ?? str(d.description);
  if (description) c.description = description;
  if (str(d.subreddit_type)) c.type = str(d.subreddit_type);
  if (num(d.subscribers) !== undefined) c.subscribersCount = num(d.subscribers);
  const active = num(d.active_user_count) ?? num(d.accounts_active);
  if (active !== undefined) c.activeUsersCount = active;
  if (isoDate(d.created_utc)) c.createdDate = isoDate(d.created_utc);
  if (typeof d.over18 === 'boolean') c.nsfw = d.over18;
  if (banner) c.banner = toImageSet(banner);
  if (avatar) c.avatar = toImageSet(avatar);
  return c;
}

const COMMUNITY_GONE: Record<string, string> = {
  private: 'This community is private.',
  banned: 'This community was banned.',
  quarantined: 'This community is quarantined.',
  gold_only: 'This community is for premium members only.',
};

async function extractCommunity(subreddit: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const answer = await fetchJson(`/r/${subreddit}/about.json?raw_json=1`, ctx);
  if (answer.status === 429 || !answer.isJson) return undefined;
  const fields = { forumCommunity: { id: forumObjectId('community', subreddit.toLowerCase()), name: subreddit } };
  if (isVerdict(answer)) {
    return gone('FORUM_COMMUNITY', answer.status, COMMUNITY_GONE[answer.reason ?? ''] ?? 'This community does not exist.', fields);
  }
  const d = at(answer.json, 'data') as Json | undefined;
  // A name Reddit does not know answers with a search listing, not a t5.
  if (answer.status !== 200 || at(answer.json, 'kind') !== 't5' || !d) {
    return answer.status === 200 ? gone('FORUM_COMMUNITY', 404, 'This community does not exist.', fields) : undefined;
  }
  const community = await buildCommunity(d, ctx);
  const prefixed = str(d.display_name_prefixed) ?? `r/${community.name ?? subreddit}`;
  return {
    type: 'FORUM_COMMUNITY',
    ok: true,
    status: answer.status,
    title: community.title ? `${community.title} (${prefixed})` : prefixed,
    description: community.description ?? '',
    ...(community.avatar ? { image: community.avatar } : community.banner ? { image: community.banner } : {}),
    fields: { forumCommunity: community },
  };
}

// ---------------------------------------------------------------------------------------------
// Users

async function extractUser(username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const answer = await fetchJson(`/user/${username}/about.json?raw_json=1`, ctx);
  if (answer.status === 429 || !answer.isJson) return undefined;
  const stub = { forumUser: { id: forumObjectId('user', username.toLowerCase()), username } };
  if (isVerdict(answer)) return gone('FORUM_USER', answer.status, 'This account does not exist or was deleted.', stub);
  const d = at(answer.json, 'data') as Json | undefined;
  if (answer.status !== 200 || !d) return undefined;
  if (d.is_suspended === true)
    return gone('FORUM_USER', answer.status, 'This account has been suspended.', { forumUser: { ...stub.forumUser, username: str(d.name) ?? username } });

  const profile = (d.subreddit ?? {}) as Json;
  const [avatar, flattened, banner] = await Promise.all([
    ctx.hostImage(imageUrl(d.icon_img) ?? imageUrl(profile.icon_img)),
    ctx.hostImage(imageUrl(d.snoovatar_img)),
    ctx.hostImage(imageUrl(profile.banner_img)),
  ]);
  const name = str(d.name) ?? username;
  const u: ForumUser = { id: forumObjectId('user', str(d.id) ? `t2_${d.id}` : name.toLowerCase()), username: name };
  const display = str(profile.title);
  if (display) u.name = display;
  const bio = str(profile.public_description);
  if (bio) u.bio = bio;
  if (flattened) u.flattenedAvatar = toImageSet(flattened);
  if (avatar) u.avatar = toImageSet(avatar);
  if (banner) u.banner = toImageSet(banner);
  const post = num(d.link_karma);
  const comment = num(d.comment_karma);
  const total = num(d.total_karma) ?? (post !== undefined && comment !== undefined ? post + comment : undefined);
  if (total !== undefined) u.karma = total;
  if (post !== undefined) u.postKarma = post;
  if (comment !== undefined) u.commentKarma = comment;
  if (isoDate(d.created_utc)) u.joinedAt = isoDate(d.created_utc);
  return {
    type: 'FORUM_USER',
    ok: true,
    status: answer.status,
    title: display ? `${display} (u/${name})` : `u/${name}`,
    description: bio ?? '',
    ...(u.avatar ? { image: u.avatar } : {}),
    fields: { forumUser: u },
  };
}
