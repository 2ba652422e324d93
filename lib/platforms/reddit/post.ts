/**
 * A Reddit post (FORUM_POST, `forumPost`) from `/comments/{id}.json`, with its subreddit's
 * about.json (best-effort); a share link (`/r/{sub}/s/{code}`) resolved by following its redirect.
 */
import type { ForumPost, ImageSet, MediaImage } from '../../contract/link.js';
import { cleanText } from '../../extract/text.js';
import { toImageSet } from '../../media/host-images.js';
import { isoDate } from '../shared/dates.js';
import { optional } from '../shared/fetch.js';
import { at, type Json, num, str } from '../shared/json.js';
import type { PlatformPreview } from '../types.js';
import { buildCommunity, COMMUNITY_GONE } from './community.js';
import type { Ctx } from './settings.js';
import { CANONICAL, fetchJson, forumObjectId, gone, imageUrl, isVerdict, matchReddit } from './site.js';

const MAX_GALLERY_IMAGES = 10;

export async function extractShare(url: URL, subreddit: string, share: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const res = await ctx.fetch(`${ctx.settings.baseUrl}/r/${subreddit}/s/${share}`, {
    method: 'HEAD',
    maxBytes: 0,
    timeoutMs: ctx.config.fetchTimeoutMs,
    headers: { 'user-agent': ctx.config.userAgent },
  });
  const toCanonical = (u: string) => onCanonicalHost(u, ctx.settings.baseUrl);
  const target = matchReddit(new URL(toCanonical(res.finalUrl)));
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

export async function extractPost(postId: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
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
