/**
 * microblog (X / Twitter): posts `/{user}/status/{id}` and profiles `/{user}` on x.com,
 * twitter.com and mobile.twitter.com (t.co links arrive here after the generic fetch followed
 * their redirects).
 *
 * Posts, first source that answers:
 *  1. the public syndication endpoint the embed widget uses (cdn.syndication.twimg.com/tweet-result,
 *     token derived from the id as the widget does): text, createdAt, user (name, username, avatar,
 *     verified), likesCount, commentsCount (+ reposts/quotes/bookmarks/views where present), media
 *     (photos as MediaImage; videos and GIFs: the best MP4 variant probed as Video);
 *  2. oEmbed (publish.twitter.com): text, the day of posting, user name and username;
 *  3. the HTML X serves to preview bots (Twitterbot): og:title "Name (@user) on X", og:description
 *     (the text), og:image (the first photo or the avatar).
 * A deleted or protected post (syndication 404 / tombstone, oEmbed 404/403) is ok:false.
 *
 * Users: the public profile timeline (syndication.twitter.com/srv/timeline-profile), whose embedded
 * data carries the full user (name, bio, location, url, avatar, banner, verified, protected,
 * followers/following/posts counts, joinedAt); else the bot HTML (name, username, bio, avatar).
 * The upstream origins are its settings (below), given to it as `ctx.settings`.
 */
import type { MicroblogPost, MicroblogUser } from '../contract/link.js';
import { flattenJsonLd, ldTypes } from '../extract/json-ld.js';
import { toImageSet } from '../media/host-images.js';
import { defineSettings, httpUrl } from '../settings.js';
import {
  arr,
  bool,
  cleanHtmlText,
  compact,
  fetchPlatformPage,
  fetchSource,
  isOk,
  isoDate,
  obj,
  optional,
  type ParsedPage,
  parseCount,
  parseJson,
  parsePlatformPage,
  platformObjectId,
  scriptById,
  str,
} from './shared.js';
import { firstImageSet, hostMedia, type MediaSource } from './social-media.js';
import type { Platform, PlatformContextOf, PlatformMatch, PlatformPreview } from './types.js';

const settings = defineSettings('microblog', 'microblog (X / Twitter)', {
  syndicationUrl: {
    env: 'LINKPREVIEW_X_SYNDICATION_URL',
    type: httpUrl(),
    default: 'https://cdn.syndication.twimg.com',
    doc: "The embed widget's syndication origin: a post (`/tweet-result`), the first source.",
  },
  oembedUrl: {
    env: 'LINKPREVIEW_X_OEMBED_URL',
    type: httpUrl(),
    default: 'https://publish.twitter.com',
    doc: "X's oEmbed origin (`/oembed`): a post's text, day and author when syndication has none.",
  },
  timelineUrl: {
    env: 'LINKPREVIEW_X_TIMELINE_URL',
    type: httpUrl(),
    default: 'https://syndication.twitter.com',
    doc: "The profile timeline's origin (`/srv/timeline-profile/screen-name/{user}`): a user's full profile.",
  },
});

type Ctx = PlatformContextOf<typeof settings>;

const HOSTS = /^(www\.|mobile\.)?(x|twitter)\.com$/i;
/** First path segments that are X's own pages, not user names. */
const RESERVED = new Set([
  'home',
  'explore',
  'i',
  'search',
  'settings',
  'notifications',
  'messages',
  'login',
  'logout',
  'signup',
  'tos',
  'privacy',
  'hashtag',
  'intent',
  'share',
  'compose',
  'account',
  'about',
  'jobs',
  'download',
  'following',
  'followers',
  'lists',
  'bookmarks',
  'communities',
  'premium',
  'verified',
  'jack_dorsey_is_not_a_user',
  'oauth',
  'who_to_follow',
  'rules',
  'help',
  'web',
]);
const ICONS = [{ url: 'https://abs.twimg.com/favicons/twitter.3.ico' }];

export function matchMicroblog(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(url.hostname)) return undefined;
  const parts = url.pathname.split('/').filter(Boolean);
  // /{user}/status/{id}[/photo/1], /{user}/statuses/{id}, /i/web/status/{id}, /i/status/{id}
  const st = /^\/(?:([A-Za-z0-9_]{1,15})|i\/web|i)\/status(?:es)?\/(\d{1,20})(?:\/|$)/.exec(url.pathname);
  if (st) return { kind: 'post', ids: { postId: st[2], ...(st[1] && st[1] !== 'i' ? { username: st[1] } : {}) } };
  if (parts.length === 1 && /^[A-Za-z0-9_]{1,15}$/.test(parts[0]) && !RESERVED.has(parts[0].toLowerCase())) {
    return { kind: 'user', ids: { username: parts[0] } };
  }
  return undefined;
}

/** The token the embed widget sends with a syndication request, derived from the post id. */
export function syndicationToken(id: string): string {
  return ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, '');
}

export const microblog: Platform<typeof settings> = {
  name: 'microblog',
  settings,
  hostProfile: {
    hosts: ['x.com', 'twitter.com', 't.co'],
    userAgent: 'Twitterbot/1.0 (compatible; linklens/1.0)',
    note: 'serves a small Open Graph page to preview bots instead of the JavaScript app / login flow',
  },
  match: matchMicroblog,
  async extract(url, match, ctx) {
    return match.kind === 'post' ? extractPost(url, match.ids.postId, match.ids.username, ctx) : extractUser(url, match.ids.username, ctx);
  },
};

// ---------------------------------------------------------------------------------------------
// Posts

async function extractPost(url: URL, postId: string, username: string | undefined, ctx: Ctx): Promise<PlatformPreview | undefined> {
  let goneStatus: number | undefined;

  // 1. Syndication.
  const synd = await optional(() => fetchSource(`${ctx.settings.syndicationUrl}/tweet-result?id=${postId}&lang=en&token=${syndicationToken(postId)}`, ctx));
  if (synd) {
    const j = obj(parseJson(synd.text));
    if (j && j.__typename === 'TweetTombstone') return gone(404, obj(obj(j.tombstone)?.text)?.text);
    const id = j && str(j.id_str);
    if (j && id) return fromSyndication(j, id, ctx);
    if (synd.status === 404) goneStatus = 404;
  }

  // 2. oEmbed (also tells a deleted or protected post: 404 / 403).
  const canonical = `https://twitter.com/${username ?? 'i'}/status/${postId}`;
  const oe = await optional(() => fetchSource(`${ctx.settings.oembedUrl}/oembed?url=${encodeURIComponent(canonical)}&omit_script=1&dnt=true`, ctx));
  if (oe) {
    const j = obj(parseJson(oe.text));
    const html = j && str(j.html);
    if (j && html) return fromOEmbed(j, html, postId, ctx);
    if (oe.status === 404 || oe.status === 403) goneStatus = oe.status;
  }
  if (goneStatus !== undefined && synd?.status === 404) return gone(goneStatus);

  // 3. The HTML X serves to preview bots.
  const page = await tryPage(url.href, ctx);
  if (page) {
    const p = fromCrawlerPost(page, postId, username);
    if (p) return finishPost(p, ctx);
  }
  return undefined;
}

/** The bot HTML, the last source: a FetchFailure propagates (the generic preview). */
async function tryPage(url: string, ctx: Ctx): Promise<ParsedPage | undefined> {
  const res = await fetchPlatformPage(url, ctx);
  if (!isOk(res.status)) return undefined;
  const page = parsePlatformPage(res, ctx);
  return page.wall ? undefined : page;
}

function gone(status: number, reason?: unknown): PlatformPreview {
  return { type: 'MICROBLOG_POST', ok: false, status, ...(str(reason) ? { description: str(reason) } : {}), fields: {} };
}

interface PostDraft {
  post: Omit<MicroblogPost, 'media' | 'user'>;
  user: Omit<MicroblogUser, 'avatar' | 'cover'>;
  avatar?: string;
  media: MediaSource[];
  /** An image for the record when there is no media (og:image of the bot page). */
  fallbackImage?: string;
  language?: string;
  /** The bot page's own og:title, kept as the record's title. */
  title?: string;
}

async function fromSyndication(j: Record<string, unknown>, id: string, ctx: Ctx): Promise<PlatformPreview> {
  const u = obj(j.user) ?? {};
  const uid = str(u.id_str);
  const screen = str(u.screen_name);
  const created = isoDate(j.created_at) ?? snowflakeTime(id);
  const draft: PostDraft = {
    post: compact({
      id: platformObjectId('microblog', 'post', id),
      createdAt: created,
      publishedAt: created,
      text: displayText(j),
      likesCount: parseCount(j.favorite_count as number),
      commentsCount: parseCount(j.conversation_count as number) ?? parseCount(j.reply_count as number),
      repostsCount: parseCount(j.retweet_count as number),
      quotesCount: parseCount(j.quote_count as number),
      bookmarksCount: parseCount(j.bookmark_count as number),
      viewsCount: parseCount(obj(j.views)?.count as string),
      updatedAt: editedAt(j),
    }),
    user: compact({
      id: userId(screen ?? uid ?? ''),
      username: screen,
      name: str(u.name),
      verified: verifiedFlag(u),
      protected: bool(u.protected),
    }),
    avatar: biggerAvatar(str(u.profile_image_url_https)),
    media: [],
    language: str(j.lang) && j.lang !== 'und' && j.lang !== 'zxx' ? str(j.lang) : undefined,
  };
  for (const m of arr(j.mediaDetails)) {
    const md = obj(m);
    if (!md) continue;
    const type = str(md.type);
    if (type === 'photo') draft.media.push({ kind: 'image', image: photoUrl(str(md.media_url_https)) });
    else if (type === 'video' || type === 'animated_gif') {
      draft.media.push({
        kind: 'video',
        image: str(md.media_url_https),
        video: bestMp4(arr(obj(md.video_info)?.variants)),
        author: screen ? `@${screen}` : undefined,
      });
    }
  }
  const v = obj(j.video);
  if (draft.media.length === 0 && v) {
    const best = arr(v.variants)
      .map(obj)
      .find((x) => x && /mp4/.test(String(x.type)))?.src;
    draft.media.push({ kind: 'video', image: str(v.poster), video: str(best) });
  }
  return finishPost(draft, ctx);
}

/** The post text as shown: inside display_text_range (no trailing media link), t.co links expanded. */
function displayText(j: Record<string, unknown>): string | undefined {
  let text = str(j.text) ?? str(j.full_text);
  if (!text) return undefined;
  const range = arr(j.display_text_range);
  if (range.length === 2 && typeof range[0] === 'number' && typeof range[1] === 'number') {
    text = Array.from(text)
      .slice(range[0] as number, range[1] as number)
      .join('');
  }
  for (const e of arr(obj(j.entities)?.urls)) {
    const o = obj(e);
    const short = str(o?.url);
    const expanded = str(o?.expanded_url);
    if (short && expanded) text = text.split(short).join(expanded);
  }
  return cleanHtmlText(text, true);
}

function editedAt(j: Record<string, unknown>): string | undefined {
  const ec = obj(j.edit_control);
  const ids = arr(ec?.edit_tweet_ids)
    .map(str)
    .filter((x): x is string => !!x);
  if (!j.isEdited || ids.length < 2) return undefined;
  return snowflakeTime(ids[ids.length - 1]);
}

function bestMp4(variants: unknown[]): string | undefined {
  const mp4 = variants.map(obj).filter((v): v is Record<string, unknown> => !!v && /mp4/i.test(String(v.content_type ?? v.type)) && !!str(v.url ?? v.src));
  mp4.sort((a, b) => (Number(b.bitrate) || 0) - (Number(a.bitrate) || 0));
  return str(mp4[0]?.url ?? mp4[0]?.src);
}

function photoUrl(u: string | undefined): string | undefined {
  if (!u) return undefined;
  // The largest rendition of a photo (`name=large`); the plain URL is a medium one.
  return /\?/.test(u) ? u : `${u}?name=large`;
}

function biggerAvatar(u: string | undefined): string | undefined {
  return u?.replace(/_(normal|bigger|mini|200x200)(\.[a-z]+)$/i, '_400x400$2');
}

function fromOEmbed(j: Record<string, unknown>, html: string, postId: string, _ctx: Ctx): Promise<PlatformPreview> {
  const p = /<p[^>]*>([\s\S]*?)<\/p>/i.exec(html)?.[1];
  const lang = /<p[^>]*\blang="([a-z-]+)"/i.exec(html)?.[1];
  const links = [...html.matchAll(/<a [^>]*>([^<]*)<\/a>/gi)];
  const dateText = links.length ? links[links.length - 1][1] : undefined;
  const day = dateText ? isoDate(`${dateText} 00:00:00 UTC`) : undefined;
  const created = snowflakeTime(postId) ?? day;
  const authorUrl = str(j.author_url);
  const screen = authorUrl ? /\/([A-Za-z0-9_]{1,15})\/?$/.exec(authorUrl)?.[1] : undefined;
  const draft: PostDraft = {
    post: compact({ id: platformObjectId('microblog', 'post', postId), createdAt: created, publishedAt: created, text: cleanHtmlText(p, true) }),
    user: compact({ id: userId(screen ?? str(j.author_name) ?? ''), username: screen, name: str(j.author_name) }),
    media: [],
    language: lang && lang !== 'und' && lang !== 'zxx' ? lang : undefined,
  };
  return finishPost(draft, _ctx);
}

/** The bot HTML: `Name (@user) on X` + og:description, or the app's `Name on X: "text" / X` title. */
function fromCrawlerPost(page: ParsedPage, postId: string, username: string | undefined): PostDraft | undefined {
  const ogTitle = page.meta('og:title', 'twitter:title') ?? page.data.title;
  if (!ogTitle) return undefined;
  let name: string | undefined;
  let screen = username;
  let text = page.meta('og:description', 'twitter:description', 'description');
  const a = /^(.*?) \(@([A-Za-z0-9_]{1,15})\) on (?:X|Twitter)$/s.exec(ogTitle);
  const b = /^(.*?) on (?:X|Twitter): ["“]([\s\S]*)["”] \/ (?:X|Twitter)$/.exec(ogTitle);
  const c = /^(.*?) on (?:X|Twitter)$/.exec(ogTitle);
  if (a) {
    name = a[1];
    screen = a[2];
  } else if (b) {
    name = b[1];
    text = text ?? b[2];
  } else if (c) {
    name = c[1];
  } else return undefined;
  text = text?.replace(/^[“"]([\s\S]*)[”"]$/, '$1');
  const og = page.meta('og:image', 'twitter:image');
  // X's generic og:image stands in when the HTML is rendered: the post's own media is then the
  // first media image in the markup (the main post comes first in the conversation).
  const image = og && !/\/rweb\/ssr\/default\//.test(og) ? og : (firstTwimg(page.html, MEDIA_PATHS) ?? og);
  const isMedia = image && MEDIA_PATHS.test(image);
  const created = snowflakeTime(postId);
  return {
    post: compact({ id: platformObjectId('microblog', 'post', postId), createdAt: created, publishedAt: created, text: cleanHtmlText(text, true) }),
    user: compact({ id: userId(screen ?? name ?? ''), username: screen, name }),
    media: isMedia ? [{ kind: 'image', image }] : [],
    // A post without media: the image the page declares, X's generic card included (what every
    // other preview shows for a text-only post), rather than none.
    fallbackImage: isMedia || !image ? undefined : image,
    title: a ? ogTitle : undefined,
    language: page.data.lang?.split('-')[0],
  };
}

const MEDIA_PATHS = /\/(media|tweet_video_thumb|ext_tw_video_thumb|amplify_video_thumb)\//;

/** The first pbs.twimg.com image URL in the HTML whose path matches. */
function firstTwimg(html: string, path: RegExp): string | undefined {
  for (const m of html.matchAll(/https:\/\/pbs\.twimg\.com\/[^"'\s)&<>]+\.(?:jpe?g|png|webp)/g)) {
    if (path.test(m[0])) return m[0];
  }
  return undefined;
}

async function finishPost(d: PostDraft, ctx: Ctx): Promise<PlatformPreview> {
  const [media, avatar] = await Promise.all([hostMedia(d.media, ctx), ctx.hostImage(d.avatar)]);
  const user: MicroblogUser = { ...d.user, ...(avatar ? { avatar: toImageSet(avatar) } : {}) };
  const post: MicroblogPost = { ...d.post, user, ...(media.length ? { media } : {}) };
  const image = firstImageSet(media) ?? (avatar ? toImageSet(avatar) : undefined);
  return {
    type: 'MICROBLOG_POST',
    ok: true,
    status: 200,
    title: d.title ?? userTitle(user),
    ...(post.text ? { description: post.text } : {}),
    ...(d.language ? { language: d.language } : {}),
    ...(image ? { image } : d.fallbackImage ? { imageSource: d.fallbackImage } : {}),
    icons: ICONS,
    fields: { microblogPost: post },
  };
}

/** The creation time in an X (snowflake) id: ms since 2010-11-04 in the bits above 22. */
function snowflakeTime(id: string): string | undefined {
  if (!/^\d{15,20}$/.test(id)) return undefined;
  return isoDate(Number(BigInt(id) >> 22n) + 1288834974657);
}

/** Users are identified by their lower-cased username, which every source (and the URL) gives. */
function userId(username: string): number {
  return platformObjectId('microblog', 'user', username.toLowerCase());
}

function verifiedFlag(u: Record<string, unknown>): boolean | undefined {
  if (u.is_blue_verified === true || u.verified === true || str(u.verified_type)) return true;
  return u.is_blue_verified === false || u.verified === false ? false : undefined;
}

function userTitle(u: Pick<MicroblogUser, 'name' | 'username'>): string {
  if (u.name && u.username) return `${u.name} (@${u.username}) on X`;
  if (u.username) return `@${u.username} on X`;
  return u.name ? `${u.name} on X` : 'Post on X';
}

// ---------------------------------------------------------------------------------------------
// Users

async function extractUser(url: URL, username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  // 1. The public profile timeline: the full user object inside its embedded data.
  const tl = await optional(() =>
    fetchSource(`${ctx.settings.timelineUrl}/srv/timeline-profile/screen-name/${encodeURIComponent(username)}?showReplies=false`, ctx, { accept: 'text/html' }),
  );
  const fromTimeline = tl?.text ? timelineUser(tl.text, username) : undefined;
  if (fromTimeline) return finishUser(fromTimeline, ctx);

  // 2. The bot HTML of the profile.
  const page = await tryPage(url.href, ctx);
  if (page) {
    const u = crawlerUser(page);
    if (u) return finishUser(u, ctx);
  }
  return undefined;
}

interface UserDraft {
  user: Omit<MicroblogUser, 'avatar' | 'cover'>;
  avatar?: string;
  cover?: string;
}

/** The user object of the profile timeline's `__NEXT_DATA__` (the account's own posts carry it). */
function timelineUser(html: string, username: string): UserDraft | undefined {
  const data = obj(parseJson(scriptById(html, '__NEXT_DATA__')));
  const props = obj(obj(data?.props)?.pageProps);
  if (!props) return undefined;
  const want = username.toLowerCase();
  let found: Record<string, unknown> | undefined;
  for (const e of arr(obj(props.timeline)?.entries)) {
    const tweet = obj(obj(obj(e)?.content)?.tweet);
    for (const cand of [obj(tweet?.user), obj(obj(tweet?.retweeted_status)?.user)]) {
      if (cand && str(cand.screen_name)?.toLowerCase() === want) {
        found = cand;
        break;
      }
    }
    if (found) break;
  }
  if (!found) return undefined;
  return legacyUser(found);
}

/** A v1.1-style user object (timeline data) as a draft MicroblogUser. */
function legacyUser(u: Record<string, unknown>): UserDraft {
  const screen = str(u.screen_name);
  const url = expandedProfileUrl(u);
  const banner = str(u.profile_banner_url);
  return {
    user: compact({
      id: userId(screen ?? str(u.id_str) ?? ''),
      username: screen,
      name: str(u.name),
      bio: expandText(str(u.description), arr(obj(obj(u.entities)?.description)?.urls)),
      url,
      location: str(u.location),
      verified: verifiedFlag(u),
      protected: bool(u.protected),
      sensitive: bool(u.possibly_sensitive),
      followersCount: parseCount(u.followers_count as number),
      followingCount: parseCount(u.friends_count as number),
      postsCount: parseCount(u.statuses_count as number),
      joinedAt: isoDate(u.created_at),
    }),
    avatar: biggerAvatar(str(u.profile_image_url_https) ?? str(u.profile_image_url)),
    cover: banner ? (/\/\d+x\d+$/.test(banner) ? banner : `${banner}/1500x500`) : undefined,
  };
}

function expandedProfileUrl(u: Record<string, unknown>): string | undefined {
  const urls = arr(obj(obj(u.entities)?.url)?.urls).map(obj);
  return str(urls[0]?.expanded_url) ?? str(u.url);
}

function expandText(text: string | undefined, urls: unknown[]): string | undefined {
  if (!text) return undefined;
  let out = text;
  for (const e of urls.map(obj)) {
    const short = str(e?.url);
    const expanded = str(e?.expanded_url);
    if (short && expanded) out = out.split(short).join(expanded);
  }
  return out;
}

function crawlerUser(page: ParsedPage): UserDraft | undefined {
  const title = page.meta('og:title', 'twitter:title') ?? page.data.title;
  if (!title) return undefined;
  const m = /^(.*?) \(@([A-Za-z0-9_]{1,15})\) (?:on X|on Twitter|\/ X|\/ Twitter)$/s.exec(title);
  if (!m) return undefined;
  const og = page.meta('og:image', 'twitter:image');
  // Without a profile og:image (rendered HTML carries X's generic one), the avatar is the first
  // large profile image in the markup: the profile header's.
  const image = og && /profile_images/.test(og) ? og : firstTwimg(page.html, /\/profile_images\/[^"'\s)&]*_(?:400x400|200x200)\./);
  const ld = profileSchema(page, m[2]);
  return {
    user: compact({
      id: userId(m[2]),
      username: m[2],
      name: m[1],
      bio: cleanHtmlText(page.meta('og:description', 'description')) ?? ld?.bio,
      location: ld?.location,
      followersCount: ld?.followersCount,
      followingCount: ld?.followingCount,
      postsCount: ld?.postsCount,
      joinedAt: ld?.joinedAt,
    }),
    avatar: image && /profile_images/.test(image) ? biggerAvatar(image) : ld?.avatar ? biggerAvatar(ld.avatar) : undefined,
  };
}

/**
 * The schema.org ProfilePage X renders into a profile (`UserProfileSchema`): the bio, location,
 * join date and the follower/following/post counters, for the account named by the URL only.
 */
function profileSchema(page: ParsedPage, username: string): (Partial<Omit<MicroblogUser, 'avatar'>> & { avatar?: string }) | undefined {
  for (const node of flattenJsonLd(page.data.jsonLd)) {
    if (!ldTypes(node).includes('profilepage')) continue;
    const person = obj(node.mainEntity) ?? obj(node.author);
    if (!person || str(person.additionalName)?.toLowerCase() !== username.toLowerCase()) continue;
    const counter = (kind: RegExp) => {
      for (const c of arr(person.interactionStatistic).map(obj)) {
        if (kind.test(String(c?.interactionType ?? '')) || kind.test(String(c?.name ?? ''))) return parseCount(c?.userInteractionCount as number);
      }
      return undefined;
    };
    const bio = str(person.description)
      ?.replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n');
    const image = obj(person.image);
    return compact({
      bio,
      location: str(obj(person.homeLocation)?.name),
      followersCount: counter(/FollowAction|^Follows$/),
      followingCount: counter(/SubscribeAction|^Friends$/),
      postsCount: counter(/WriteAction|^Tweets$/),
      joinedAt: isoDate(node.dateCreated),
      avatar: str(image?.contentUrl) ?? str(person.image),
    });
  }
  return undefined;
}

async function finishUser(d: UserDraft, ctx: Ctx): Promise<PlatformPreview> {
  const [avatar, cover] = await Promise.all([ctx.hostImage(d.avatar), ctx.hostImage(d.cover)]);
  const user: MicroblogUser = { ...d.user, ...(avatar ? { avatar: toImageSet(avatar) } : {}), ...(cover ? { cover: toImageSet(cover) } : {}) };
  return {
    type: 'MICROBLOG_USER',
    ok: true,
    status: 200,
    title: userTitle(user),
    ...(user.bio ? { description: user.bio } : {}),
    ...(avatar ? { image: toImageSet(avatar) } : {}),
    icons: ICONS,
    fields: { microblogUser: user },
  };
}
