/**
 * An X post (MICROBLOG_POST, `microblogPost`), first source that answers: syndication, oEmbed, the
 * bot page. A deleted or protected post is ok:false.
 */
import type { MicroblogPost, MicroblogUser } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchSource, optional } from '../shared/fetch.js';
import { firstImageSet, hostMedia, type MediaSource } from '../shared/host-media.js';
import { platformObjectId } from '../shared/ids.js';
import { arr, bool, compact, obj, parseJson, str } from '../shared/json.js';
import { cleanHtmlText, type ParsedPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { biggerAvatar, firstTwimg, ICONS, MEDIA_PATHS, tryPage, userId, userTitle, verifiedFlag } from './site.js';

/** The token the embed widget sends with a syndication request, derived from the post id. */
export function syndicationToken(id: string): string {
  return ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, '');
}

export async function extractPost(url: URL, postId: string, username: string | undefined, ctx: Ctx): Promise<PlatformPreview | undefined> {
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
    const alt = str(md.ext_alt_text);
    if (type === 'photo') draft.media.push({ kind: 'image', image: photoUrl(str(md.media_url_https)), ...(alt ? { alt } : {}) });
    else if (type === 'video' || type === 'animated_gif') {
      draft.media.push({
        kind: 'video',
        image: str(md.media_url_https),
        video: bestMp4(arr(obj(md.video_info)?.variants)),
        author: screen ? `@${screen}` : undefined,
        ...(alt ? { alt } : {}),
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
