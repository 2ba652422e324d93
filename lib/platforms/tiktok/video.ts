/**
 * A TikTok video (CLIPS_VIDEO, `clipsVideo`): the page's embedded item (text, publishedAt, counts,
 * the cover as media, the author with their stats), else oEmbed (the time from the id).
 */
import type { ClipsVideo } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchPlatformPage, fetchSource, isOk, optional } from '../shared/fetch.js';
import { hostImageUrls } from '../shared/host-media.js';
import { platformObjectId } from '../shared/ids.js';
import { compact, obj, parseJson, str } from '../shared/json.js';
import { type ParsedPage, parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { CANONICAL, ICONS, pageState } from './site.js';
import { type UserDraft, userDraft, userId } from './user.js';

/** The Unix time in the high 32 bits of a TikTok id. */
export function clipsIdTime(id: string): string | undefined {
  if (!/^\d{15,25}$/.test(id)) return undefined;
  return isoDate(Number(BigInt(id) >> 32n));
}

interface VideoDraft {
  video: Omit<ClipsVideo, 'media' | 'user'>;
  user?: UserDraft;
  cover?: string;
}

export async function extractVideo(url: URL, videoId: string, username: string | undefined, ctx: Ctx): Promise<PlatformPreview | undefined> {
  // The page may fail: oEmbed is the next source.
  const res = await optional(() => fetchPlatformPage(url.href, ctx));
  const page = res && isOk(res.status) ? parsePlatformPage(res, ctx) : undefined;
  const status = res?.status ?? 0;
  if (page && !page.wall) {
    const item = videoItem(page.html, videoId);
    if (item && 'gone' in item) return { type: 'CLIPS_VIDEO', ok: false, status: item.gone, fields: {} };
    if (item) return finishVideo(itemDraft(item.item, videoId), page, ctx);
  }

  // oEmbed.
  const canonical = `${CANONICAL}/@${username ?? 'tiktok'}/video/${videoId}`;
  const oe = await fetchSource(`${ctx.settings.baseUrl}/oembed?url=${encodeURIComponent(canonical)}`, ctx);
  const j = obj(parseJson(oe.text));
  if (j && (str(j.title) || str(j.author_unique_id))) {
    const handle = str(j.author_unique_id) ?? username;
    const draft: VideoDraft = {
      video: compact({ id: platformObjectId('clips', 'video', videoId), publishedAt: clipsIdTime(videoId), text: str(j.title) }),
      user: handle ? { user: compact({ id: userId(handle), username: handle, name: str(j.author_name), url: `${CANONICAL}/@${handle}` }) } : undefined,
      cover: str(j.thumbnail_url),
    };
    return finishVideo(draft, page, ctx);
  }
  if ((oe.status === 400 || oe.status === 404) && status === 404) return { type: 'CLIPS_VIDEO', ok: false, status: 404, fields: {} };
  return undefined;
}

type Item = Record<string, unknown>;

/** The video's item: `webapp.video-detail.itemInfo.itemStruct`, else SIGI ItemModule[id]; `{gone}` for a removed/private one. */
function videoItem(html: string, videoId: string): { item: Item } | { gone: number } | undefined {
  const { scope, sigi } = pageState(html);
  const detail = obj(scope?.['webapp.video-detail']);
  if (detail) {
    const item = obj(obj(detail.itemInfo)?.itemStruct);
    if (item && str(item.id)) return { item };
    const code = Number(detail.statusCode);
    // 10204: not found / removed; 10216, 10222: private.
    if (code === 10204) return { gone: 404 };
    if (code === 10216 || code === 10222) return { gone: 403 };
  }
  const mod = obj(sigi?.ItemModule);
  if (mod) {
    const item = obj(mod[videoId]) ?? obj(Object.values(mod)[0]);
    if (item) {
      const users = obj(obj(sigi?.UserModule)?.users);
      const stats = obj(obj(sigi?.UserModule)?.stats);
      const handle = str(item.author);
      const author = handle ? obj(users?.[handle]) : undefined;
      return {
        item: {
          ...item,
          ...(handle && author
            ? { author, authorStats: obj(stats?.[handle]) ?? item.authorStats }
            : { author: { uniqueId: handle, nickname: str(item.nickname) } }),
        },
      };
    }
  }
  return undefined;
}

function itemDraft(item: Item, videoId: string): VideoDraft {
  const stats = { ...obj(item.stats), ...Object.fromEntries(Object.entries(obj(item.statsV2) ?? {}).filter(([, v]) => v !== undefined && v !== null)) };
  const v = obj(item.video) ?? {};
  const id = str(item.id) ?? videoId;
  const author = obj(item.author);
  const authorStats = obj(item.authorStatsV2) ?? obj(item.authorStats);
  return {
    video: compact({
      id: platformObjectId('clips', 'video', id),
      publishedAt: isoDate(Number(item.createTime)) ?? clipsIdTime(id),
      text: str(item.desc),
      playsCount: parseCount(stats.playCount as string),
      likesCount: parseCount(stats.diggCount as string),
      commentsCount: parseCount(stats.commentCount as string),
      sharesCount: parseCount(stats.shareCount as string),
    }),
    user: author ? userDraft(author, authorStats) : undefined,
    cover: str(v.originCover) ?? str(v.cover) ?? str(v.dynamicCover) ?? str(obj(obj(item.imagePost)?.cover)?.imageURL),
  };
}

async function finishVideo(d: VideoDraft, page: ParsedPage | undefined, ctx: Ctx): Promise<PlatformPreview> {
  const [media, avatar] = await Promise.all([hostImageUrls([d.cover], ctx), ctx.hostImage(d.user?.avatar)]);
  const user = d.user ? { ...d.user.user, ...(avatar ? { avatar: toImageSet(avatar) } : {}) } : undefined;
  const video: ClipsVideo = compact({ ...d.video, user, media: media.length ? media : undefined });
  const who = user?.name ?? user?.username;
  const ogTitle = page?.meta('og:title');
  return {
    type: 'CLIPS_VIDEO',
    ok: true,
    status: 200,
    title: ogTitle && !/^TikTok( - Make Your Day)?$/i.test(ogTitle) ? ogTitle : who ? `${who} on TikTok` : 'TikTok video',
    ...(video.text ? { description: video.text } : {}),
    ...(media[0] ? { image: toImageSet(media[0]) } : {}),
    icons: ICONS,
    fields: { clipsVideo: video },
  };
}
