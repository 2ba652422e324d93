/**
 * An Instagram post (PHOTOSHARE_POST, `photosharePost`): the Open Graph page served to the
 * Facebook crawler, then the `/embed/captioned` page; the time of posting from the shortcode when
 * no source says it.
 */
import type { MediaImage, PhotosharePost, PhotoshareUser, Video } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate, toSecond } from '../shared/dates.js';
import { fetchPage, fetchPlatformPage, isOk, optional } from '../shared/fetch.js';
import { firstImageSet, hostMedia, type MediaSource } from '../shared/host-media.js';
import { platformObjectId } from '../shared/ids.js';
import { arr, bool, compact, obj, parseJson, str } from '../shared/json.js';
import { cleanHtmlText, type ParsedPage, parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { ICONS, isLoginTitle, isLoginUrl, userId } from './site.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The time encoded in a shortcode: its media id's bits above 23 are ms since Instagram's epoch. */
export function shortcodeTime(code: string): string | undefined {
  if (code.length > 11 || !/^[A-Za-z0-9_-]+$/.test(code)) return undefined; // private-link codes are longer
  let n = 0n;
  for (const c of code) n = n * 64n + BigInt(ALPHABET.indexOf(c));
  const iso = isoDate(Number(n >> 23n) + 1314220021721);
  return iso && iso <= new Date(Date.now() + 86_400_000).toISOString() ? toSecond(iso) : undefined;
}

interface PostDraft {
  username?: string;
  name?: string;
  verified?: boolean;
  avatar?: string;
  publishedAt?: string;
  text?: string;
  likesCount?: number;
  commentsCount?: number;
  media: MediaSource[];
  title?: string;
}

export async function extractPost(url: URL, code: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  // The post page may fail: the embed page is the next source.
  const res = await optional(() => fetchPlatformPage(url.href, ctx));
  const page = res ? parsePlatformPage(res, ctx) : undefined;
  const draft: PostDraft = { media: [] };
  const login = !!page && (page.wall === 'login-redirect' || isLoginUrl(page.res.finalUrl) || isLoginTitle(page));
  let ogDescription: string | undefined;
  if (page && isOk(page.res.status) && !page.wall && !login) {
    fromOgPost(page, draft);
    ogDescription = page.meta('og:description', 'description');
  }

  // The embed page: the exact time, the owner (verified, avatar) and media URLs.
  if (!draft.username || !draft.publishedAt || draft.media.length === 0 || draft.verified === undefined) {
    // Optional too: what the post page gave may be enough.
    const embed = await optional(() => fetchPage(`${ctx.settings.baseUrl}/p/${code}/embed/captioned/`, ctx));
    if (embed && isOk(embed.status)) fromEmbed(parsePlatformPage(embed, ctx), draft);
  }

  const found = draft.username || draft.text || draft.media.length > 0;
  if (!found) {
    // The login redirect (or a page with none of the post): an honest ok:false, not "Login • Instagram".
    if (login && res) return { type: 'PHOTOSHARE_POST', ok: false, status: res.status, fields: {} };
    if (res && res.status === 404) return { type: 'PHOTOSHARE_POST', ok: false, status: 404, fields: {} };
    return undefined;
  }
  draft.publishedAt = draft.publishedAt ?? shortcodeTime(code);
  if (!draft.publishedAt) return undefined; // the spec requires publishedAt: the generic preview instead

  const [media, avatar] = await Promise.all([hostMedia(draft.media, ctx), ctx.hostImage(draft.avatar)]);
  const user: PhotoshareUser | undefined = draft.username
    ? compact({
        id: userId(draft.username),
        username: draft.username,
        verified: draft.verified ?? false,
        name: draft.name,
        ...(avatar ? { avatar: toImageSet(avatar) } : {}),
      })
    : undefined;
  const post: PhotosharePost = compact({
    id: platformObjectId('photoshare', 'post', code),
    publishedAt: draft.publishedAt,
    user,
    text: draft.text,
    media: media.length ? (media as (MediaImage | Video)[]) : undefined,
    likesCount: draft.likesCount,
    commentsCount: draft.commentsCount,
  });
  const image = firstImageSet(media);
  const who = draft.name ?? draft.username;
  return {
    type: 'PHOTOSHARE_POST',
    ok: true,
    status: 200,
    title: draft.title ?? (who ? `${who} on Instagram` : 'Instagram post'),
    // Instagram's own summary ("152K likes, 784 comments - user on April 19, 2021: “caption”") is
    // what every preview shows; the caption alone is photosharePost.text.
    ...((ogDescription ?? draft.text) ? { description: ogDescription ?? draft.text } : {}),
    ...(image ? { image } : {}),
    icons: ICONS,
    fields: { photosharePost: post },
  };
}

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

/** "April 19, 2021" / "Apr 19, 2021 at 6:18 AM" / "Jun 19, 2016 at 4:04am UTC" -> ISO (UTC). */
function parseEnglishDate(s: string): string | undefined {
  const m = /\b([A-Z][a-z]{2})[a-z]*\.? (\d{1,2}), (\d{4})(?: at (\d{1,2}):(\d{2}) ?([AaPp][Mm]))?/.exec(s);
  if (!m) return undefined;
  const month = MONTHS[m[1].toLowerCase()];
  if (month === undefined) return undefined;
  let hour = m[4] ? Number(m[4]) % 12 : 0;
  if (m[6] && /p/i.test(m[6])) hour += 12;
  return isoDate(Date.UTC(Number(m[3]), month, Number(m[2]), hour, m[5] ? Number(m[5]) : 0));
}

/**
 * The og description of a post:
 *   `152K likes, 784 comments - jaimelorentelo on April 19, 2021: "caption"`
 *   `See this Instagram photo by @minaalofficial • 105 likes`
 */
export function parsePostDescription(d: string): Partial<PostDraft> {
  const out: Partial<PostDraft> = {};
  const a = /^([\d.,\s]+[KkMm]?) likes?, ([\d.,\s]+[KkMm]?) comments? - ([A-Za-z0-9._]{1,30}) on ([^:]+?)(?:: ([\s\S]*))?$/.exec(d.trim());
  if (a) {
    out.likesCount = parseCount(a[1]);
    out.commentsCount = parseCount(a[2]);
    out.username = a[3];
    out.publishedAt = parseEnglishDate(a[4]);
    const caption = a[5]
      ?.trim()
      .replace(/\.$/, '')
      .trim()
      .replace(/^["“]([\s\S]*)["”]$/, '$1');
    if (caption) out.text = caption;
    return out;
  }
  const b = /^See this Instagram (?:photo|video|post) by @([A-Za-z0-9._]{1,30})(?: • ([\d.,]+[KkMm]?) likes?)?/.exec(d.trim());
  if (b) {
    out.username = b[1];
    if (b[2]) out.likesCount = parseCount(b[2]);
  }
  return out;
}

function fromOgPost(page: ParsedPage, d: PostDraft): void {
  const desc = page.meta('og:description', 'description');
  if (desc) Object.assign(d, compact(parsePostDescription(desc)));
  const ogTitle = page.meta('og:title');
  const title = page.data.title;
  for (const t of [ogTitle, title]) {
    if (!t) continue;
    // "Instagram video by Jaime Lorente • Apr 19, 2021 at 6:18 AM" / "Instagram photo by Minaal • Jun 19, 2016 at 4:04am UTC"
    const by = /^Instagram (?:photo|video|post|reel) by (.+?) • (.+)$/.exec(t);
    if (by) {
      d.name = d.name ?? by[1];
      d.publishedAt = parseEnglishDate(by[2]) ?? d.publishedAt;
      continue;
    }
    // "Jaime Lorente on Instagram: "caption"" / "Tesla on Instagram" / "Willyrex (@willyrex) • Instagram photo"
    const on = /^(.+?) on Instagram(?:: ["“]([\s\S]*)["”])?$/.exec(t);
    if (on) {
      d.name = d.name ?? on[1];
      if (on[2] && !d.text) d.text = on[2];
      continue;
    }
    const handle = /^(.+?) \(@([A-Za-z0-9._]{1,30})\) • Instagram/.exec(t);
    if (handle) {
      d.name = d.name ?? handle[1];
      d.username = d.username ?? handle[2];
    }
  }
  if (d.name && d.username && d.name === d.username) d.name = undefined;
  const image = page.meta('og:image', 'twitter:image');
  const video = page.meta('og:video:secure_url', 'og:video', 'og:video:url');
  if (image || video) d.media.push(video && /\.mp4(\?|$)/i.test(video) ? { kind: 'video', image, video } : { kind: 'image', image });
  if (ogTitle && !/^Login • Instagram$/i.test(ogTitle)) d.title = ogTitle;
}

/** The embed page: its shortcode_media JSON (old `__additionalDataLoaded`, newer `contextJSON`), else its HTML. */
function fromEmbed(page: ParsedPage, d: PostDraft): void {
  const media = embeddedMedia(page.html);
  if (media) {
    const owner = obj(media.owner) ?? {};
    d.username = d.username ?? str(owner.username);
    d.name = d.name ?? str(owner.full_name);
    d.verified = bool(owner.is_verified) ?? d.verified;
    d.avatar = d.avatar ?? str(owner.profile_pic_url);
    const taken = isoDate(media.taken_at_timestamp as number);
    if (taken) d.publishedAt = taken;
    const caption = str(obj(obj(arr(obj(media.edge_media_to_caption)?.edges)[0])?.node)?.text);
    d.text = d.text ?? caption;
    d.likesCount = d.likesCount ?? parseCount((obj(media.edge_media_preview_like)?.count ?? obj(media.edge_liked_by)?.count) as number);
    d.commentsCount = d.commentsCount ?? parseCount((obj(media.edge_media_to_comment)?.count ?? obj(media.edge_media_preview_comment)?.count) as number);
    if (d.media.length === 0) {
      const children = arr(obj(media.edge_sidecar_to_children)?.edges)
        .map((e) => obj(obj(e)?.node))
        .filter((x): x is Record<string, unknown> => !!x);
      for (const n of children.length ? children : [media]) {
        const isVideo = n.is_video === true && str(n.video_url);
        const alt = str(n.accessibility_caption);
        d.media.push(
          isVideo
            ? { kind: 'video', image: str(n.display_url), video: str(n.video_url) }
            : { kind: 'image', image: str(n.display_url), ...(alt ? { alt } : {}) },
        );
      }
    }
    return;
  }
  // The HTML of the embed.
  const h = page.html;
  const user =
    /class="[^"]*\bCaptionUsername\b[^"]*"[^>]*>([^<]+)</.exec(h)?.[1] ?? /class="[^"]*\bUsername\b[^"]*"[^>]*>\s*(?:<span[^>]*>)?([^<]+)</.exec(h)?.[1];
  if (user && /^[A-Za-z0-9._]{1,30}$/.test(user.trim())) d.username = d.username ?? user.trim();
  const cap = /<div class="[^"]*\bCaption\b[^"]*"[^>]*>([\s\S]*?)<div class="[^"]*\bCaptionComments\b/.exec(h)?.[1];
  if (cap && !d.text) {
    const text = cleanHtmlText(cap.replace(/<a [^>]*class="[^"]*CaptionUsername[^"]*"[^>]*>[^<]*<\/a>/, ''), true);
    if (text) d.text = text;
  }
  const img =
    /<img[^>]+class="[^"]*\bEmbeddedMediaImage\b[^"]*"[^>]+src="([^"]+)"/.exec(h)?.[1] ??
    /<img[^>]+src="([^"]+)"[^>]+class="[^"]*\bEmbeddedMediaImage\b/.exec(h)?.[1];
  if (img && d.media.length === 0) d.media.push({ kind: 'image', image: cleanHtmlText(img) });
  const likes = /class="[^"]*\bSocialProof\b[^"]*"[^>]*>[\s\S]*?([\d.,]+[KkMm]?) likes?/.exec(h)?.[1];
  if (likes && d.likesCount === undefined) d.likesCount = parseCount(likes);
  const avatar =
    /<img[^>]+class="[^"]*\bAvatar\b[^"]*"[^>]+src="([^"]+)"/.exec(h)?.[1] ?? /class="[^"]*\bAvatar\b[^"]*"[\s\S]{0,300}?<img[^>]+src="([^"]+)"/.exec(h)?.[1];
  if (avatar) d.avatar = d.avatar ?? cleanHtmlText(avatar);
}

function embeddedMedia(html: string): Record<string, unknown> | undefined {
  const extra = /window\.__additionalDataLoaded\(\s*['"]extra['"]\s*,\s*(\{[\s\S]*?\})\s*\);/.exec(html)?.[1];
  const fromExtra = obj(parseJson(extra));
  if (fromExtra) return obj(fromExtra.shortcode_media) ?? obj(obj(fromExtra.graphql)?.shortcode_media);
  const ctxJson = /"contextJSON"\s*:\s*("(?:\\.|[^"\\])*")/.exec(html)?.[1];
  if (ctxJson) {
    const inner = obj(parseJson(parseJson(ctxJson) as string));
    const m = obj(obj(inner?.gql_data)?.shortcode_media) ?? obj(inner?.shortcode_media) ?? obj(obj(obj(inner?.context)?.media));
    if (m) return m;
  }
  return undefined;
}
