/**
 * clips (TikTok): videos `/@user/video/{id}` (and `/@user/photo/{id}`, `/embed/v2/{id}`), users
 * `/@user`; the vm./vt. short links arrive here after the generic fetch followed their redirects.
 *
 * The page's embedded JSON: `__UNIVERSAL_DATA_FOR_REHYDRATION__` (`webapp.video-detail` /
 * `webapp.user-detail`), else the older `SIGI_STATE` (ItemModule, UserModule). A video gives
 * text (desc), publishedAt (createTime), playsCount, likesCount (diggCount), commentsCount,
 * sharesCount, the cover as media, and the author with their stats. A user gives name, username,
 * bio, avatar, verified, visibility, followers/following/likes counts. oEmbed is the fallback for
 * videos (text, author, cover; the time from the id, whose high 32 bits are the Unix time).
 * oEmbed's origin is its setting (below), given to it as `ctx.settings`.
 */
import type { ClipsUser, ClipsVideo } from '../contract/link.js';
import { FACEBOOK_BOT } from '../fetch/host-profiles.js';
import { toImageSet } from '../media/host-images.js';
import { defineSettings, httpUrl } from '../settings.js';
import {
  bool,
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
import { hostImages } from './social-media.js';
import type { Platform, PlatformContextOf, PlatformMatch, PlatformPreview } from './types.js';

const settings = defineSettings('clips', 'clips (TikTok)', {
  baseUrl: {
    env: 'LINKPREVIEW_TIKTOK_BASE_URL',
    type: httpUrl(),
    default: 'https://www.tiktok.com',
    doc: "TikTok's web origin: oEmbed (`/oembed`), read when the video's page gives no data.",
  },
});

type Ctx = PlatformContextOf<typeof settings>;

/** TikTok's own address, in the records (a user's `url`) and in oEmbed's `url` parameter. */
const CANONICAL = 'https://www.tiktok.com';
const HOSTS = /^(www\.|m\.)?tiktok\.com$/i;
const ICONS = [{ url: 'https://www.tiktok.com/favicon.ico' }];

export function matchClips(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(url.hostname)) return undefined;
  const v = /^\/@([A-Za-z0-9._-]{1,40})\/(video|photo)\/(\d{8,25})(?:\/|$)/.exec(url.pathname);
  if (v) return { kind: 'video', ids: { username: v[1], videoId: v[3] } };
  const e = /^\/(?:embed\/v2|embed|v)\/(\d{8,25})(?:\.html)?(?:\/|$)/.exec(url.pathname);
  if (e) return { kind: 'video', ids: { videoId: e[1] } };
  const u = /^\/@([A-Za-z0-9._-]{1,40})\/?$/.exec(url.pathname);
  if (u) return { kind: 'user', ids: { username: u[1] } };
  return undefined;
}

/** The Unix time in the high 32 bits of a TikTok id. */
export function clipsIdTime(id: string): string | undefined {
  if (!/^\d{15,25}$/.test(id)) return undefined;
  return isoDate(Number(BigInt(id) >> 32n));
}

export const clips: Platform<typeof settings> = {
  name: 'clips',
  settings,
  hostProfile: {
    hosts: ['tiktok.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to preview bots',
  },
  match: matchClips,
  async extract(url, match, ctx) {
    return match.kind === 'video' ? extractVideo(url, match.ids.videoId, match.ids.username, ctx) : extractUser(url, match.ids.username, ctx);
  },
};

/** The embedded state: the rehydration scope, else SIGI_STATE. */
function pageState(html: string): { scope?: Record<string, unknown>; sigi?: Record<string, unknown> } {
  const universal = obj(parseJson(scriptById(html, '__UNIVERSAL_DATA_FOR_REHYDRATION__')));
  const scope = obj(universal?.__DEFAULT_SCOPE__);
  const sigiRaw = scriptById(html, 'SIGI_STATE') ?? /window\['SIGI_STATE'\]\s*=\s*(\{[\s\S]*?\});\s*window\[/.exec(html)?.[1];
  const sigi = obj(parseJson(sigiRaw));
  return { ...(scope ? { scope } : {}), ...(sigi ? { sigi } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Videos

interface VideoDraft {
  video: Omit<ClipsVideo, 'media' | 'user'>;
  user?: UserDraft;
  cover?: string;
}

async function extractVideo(url: URL, videoId: string, username: string | undefined, ctx: Ctx): Promise<PlatformPreview | undefined> {
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
  const [media, avatar] = await Promise.all([hostImages([d.cover], ctx), ctx.hostImage(d.user?.avatar)]);
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

// ---------------------------------------------------------------------------------------------
// Users

interface UserDraft {
  user: Omit<ClipsUser, 'avatar'>;
  avatar?: string;
}

function userId(username: string): number {
  return platformObjectId('clips', 'user', username.toLowerCase());
}

function userDraft(u: Record<string, unknown>, stats: Record<string, unknown> | undefined): UserDraft | undefined {
  const handle = str(u.uniqueId);
  if (!handle) return undefined;
  const priv = bool(u.privateAccount) ?? bool(u.secret);
  return {
    user: compact({
      id: userId(handle),
      username: handle,
      name: str(u.nickname),
      bio: str(u.signature),
      url: `${CANONICAL}/@${handle}`,
      followersCount: parseCount(stats?.followerCount as string),
      followingCount: parseCount(stats?.followingCount as string),
      likesCount: parseCount((stats?.heartCount ?? stats?.heart) as string),
      visibility: priv === undefined ? undefined : priv ? 'PRIVATE' : 'PUBLIC',
      verified: bool(u.verified),
    }),
    avatar: str(u.avatarLarger) ?? str(u.avatarMedium) ?? str(u.avatarThumb),
  };
}

function userFromState(html: string, username: string): UserDraft | { gone: number } | undefined {
  const { scope, sigi } = pageState(html);
  const detail = obj(scope?.['webapp.user-detail']);
  if (detail) {
    const info = obj(detail.userInfo);
    const d = info ? userDraft(obj(info.user) ?? {}, obj(info.statsV2) ?? obj(info.stats)) : undefined;
    if (d) return d;
    const code = Number(detail.statusCode);
    if (code === 10221 || code === 10202) return { gone: 404 };
  }
  const um = obj(sigi?.UserModule);
  if (um) {
    const users = obj(um.users) ?? {};
    const key = Object.keys(users).find((k) => k.toLowerCase() === username.toLowerCase()) ?? Object.keys(users)[0];
    const u = key ? obj(users[key]) : undefined;
    if (key && u) return userDraft(u, obj(obj(um.stats)?.[key]));
  }
  return undefined;
}

async function extractUser(url: URL, username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const res = await fetchPlatformPage(url.href, ctx);
  if (!isOk(res.status)) return res.status === 404 ? { type: 'CLIPS_USER', ok: false, status: 404, fields: {} } : undefined;
  const page = parsePlatformPage(res, ctx);
  if (page.wall) return undefined;
  const d = userFromState(page.html, username);
  if (!d) return undefined;
  if ('gone' in d) return { type: 'CLIPS_USER', ok: false, status: d.gone, fields: {} };
  const avatar = await ctx.hostImage(d.avatar);
  const user: ClipsUser = { ...d.user, ...(avatar ? { avatar: toImageSet(avatar) } : {}) };
  return {
    type: 'CLIPS_USER',
    ok: true,
    status: res.status,
    title: `${user.name ?? user.username} (@${user.username}) | TikTok`,
    ...(user.bio ? { description: user.bio } : {}),
    ...(avatar ? { image: toImageSet(avatar) } : {}),
    icons: ICONS,
    fields: { clipsUser: user },
  };
}
