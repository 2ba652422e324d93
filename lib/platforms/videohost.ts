/**
 * videohost (YouTube): videos (VIDEOHOST_VIDEO) and channels (VIDEOHOST_USER).
 *
 * Sources, key-less first:
 *  - the watch page's embedded `ytInitialPlayerResponse` (videoDetails, microformat) and
 *    `ytInitialData` (likes, comments, the channel's avatar/subscribers/badge), fetched with the
 *    SOCS consent cookie so the EU interstitial never stands in for the video;
 *  - the channel page's `ytInitialData` (channelMetadataRenderer and the header);
 *  - oEmbed when the page gives no player data (consent wall, bot check);
 *  - the Data API v3 when YOUTUBE_API_KEY is set: exact counts, channel joinedAt and viewsCount.
 * Upstream base URLs and the key are its settings (below), given to it as `ctx.settings`.
 */
import type { ImageSet, LinkRecord, VideohostUser, VideohostVideo } from '../contract/link.js';
import { required } from '../errors.js';
import { type IconCandidate, iconCandidates } from '../extract/icons.js';
import type { PageData } from '../extract/parse-page.js';
import { cleanText } from '../extract/text.js';
import type { FetchResult } from '../fetch/safe-fetch.js';
import { toImageSet } from '../media/host-images.js';
import { defineSettings, httpUrl, text } from '../settings.js';
import {
  at,
  exactCount,
  fetchPage,
  fetchSource,
  isoDate,
  type Json,
  num,
  obj,
  optional,
  parseCount,
  parseJson,
  parsePlatformPage,
  platformObjectId,
} from './shared.js';
import type { Platform, PlatformContextOf, PlatformMatch, PlatformPreview } from './types.js';
import { embeddedJson, findAll, findFirst, isoDurationSeconds, largestThumbnail, ytText } from './videohost-parse.js';

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const CANONICAL = 'https://www.youtube.com';

const settings = defineSettings('videohost', 'videohost (YouTube)', {
  baseUrl: {
    env: 'LINKPREVIEW_YOUTUBE_BASE_URL',
    type: httpUrl(),
    default: 'https://www.youtube.com',
    doc: "YouTube's web origin: watch and channel pages, oEmbed.",
  },
  apiUrl: {
    env: 'LINKPREVIEW_YOUTUBE_API_URL',
    type: httpUrl(),
    default: 'https://www.googleapis.com/youtube/v3',
    doc: 'The YouTube Data API v3.',
  },
  apiKey: {
    env: 'YOUTUBE_API_KEY',
    type: text(),
    default: '',
    doc: 'Enables the Data API v3: exact counts, channel joinedAt and viewsCount. Unset: key-less sources only.',
  },
});

type Ctx = PlatformContextOf<typeof settings>;

function videoObjectId(videoId: string): number {
  return platformObjectId('videohost', 'video', videoId);
}
function channelObjectId(channelId: string): number {
  return platformObjectId('videohost', 'user', channelId);
}

export function matchVideohost(url: URL): PlatformMatch | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const segs = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeSafe(s));
  if (host === 'youtu.be' || host === 'www.youtu.be') {
    return segs[0] && VIDEO_ID.test(segs[0]) ? { kind: 'video', ids: { videoId: segs[0] } } : undefined;
  }
  if (!/^((www|m|music|gaming)\.)?youtube\.com$/.test(host) && !/^(www\.)?youtube-nocookie\.com$/.test(host)) return undefined;
  const first = segs[0] ?? '';
  if (first === 'watch') {
    const v = url.searchParams.get('v') ?? '';
    return VIDEO_ID.test(v) ? { kind: 'video', ids: { videoId: v } } : undefined;
  }
  if (['shorts', 'live', 'embed', 'v', 'e'].includes(first)) {
    return segs[1] && VIDEO_ID.test(segs[1]) ? { kind: 'video', ids: { videoId: segs[1] } } : undefined;
  }
  if (first.startsWith('@') && first.length > 1) return { kind: 'channel', ids: { handle: first } };
  if (first === 'channel' && /^UC[A-Za-z0-9_-]{22}$/.test(segs[1] ?? '')) return { kind: 'channel', ids: { channelId: segs[1] } };
  if (first === 'c' && segs[1]) return { kind: 'channel', ids: { custom: segs[1] } };
  if (first === 'user' && segs[1]) return { kind: 'channel', ids: { user: segs[1] } };
  return undefined;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export const videohost: Platform<typeof settings> = {
  name: 'videohost',
  settings,
  hostProfile: {
    hosts: ['youtube.com', 'youtu.be', 'youtube-nocookie.com'],
    // SOCS=CAI: the "reject all" consent choice; skips the consent.youtube.com redirect in the EU.
    // Sent on the watch and channel pages whatever host the base URL names.
    cookies: { SOCS: 'CAI', CONSENT: 'PENDING+987' },
    note: 'EU consent interstitial (consent.youtube.com) avoided with the SOCS consent cookie',
  },
  match: matchVideohost,
  async extract(_url, match, ctx) {
    return match.kind === 'video' ? extractVideo(match.ids.videoId, ctx) : extractChannel(match.ids, ctx);
  },
};

// ---------------------------------------------------------------------------------------------
// Fetching

/** A JSON object from the API or oEmbed (`json` only on a 2xx answer that is one). A FetchFailure propagates. */
async function fetchJson(url: string, ctx: Ctx): Promise<{ status: number; json?: Json }> {
  const { status, text } = await fetchSource(url, ctx, { accept: 'application/json' });
  return { status, json: obj(parseJson(text)) };
}

/** The site icons the page declares, best first (the page extraction's ranking), then YouTube's favicon. */
function iconsOf(page: PageData | undefined): IconCandidate[] {
  return iconCandidates(page ?? { links: [] }, `${CANONICAL}/`, `${CANONICAL}/`);
}

function isConsentWall(res: FetchResult): boolean {
  try {
    const u = new URL(res.finalUrl);
    return /^consent\./i.test(u.hostname) || (/^\/(ml|consent)/.test(u.pathname) && u.searchParams.has('continue'));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Videos

async function extractVideo(videoId: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const yt = ctx.settings;
  const watchUrl = `${yt.baseUrl}/watch?v=${videoId}`;
  const apiUrl = yt.apiKey ? `${yt.apiUrl}/videos?part=snippet,statistics,contentDetails&id=${videoId}&key=${encodeURIComponent(yt.apiKey)}` : undefined;
  const reuse = ctx.page && matchVideohost(new URL(ctx.page.finalUrl))?.ids.videoId === videoId && ctx.page.status === 200 ? ctx.page : undefined;
  // Either source may fail: the other (then oEmbed) stands in.
  const [res, api] = await Promise.all([reuse ?? optional(() => fetchPage(watchUrl, ctx)), apiUrl ? optional(() => fetchJson(apiUrl, ctx)) : undefined]);

  const page = res && res.status === 200 && !isConsentWall(res) ? parsePlatformPage(res, ctx) : undefined;
  const html = page?.html ?? '';
  const player = html ? embeddedJson(html, 'ytInitialPlayerResponse') : undefined;
  const data = html ? embeddedJson(html, 'ytInitialData') : undefined;
  const apiItem = at(api?.json, 'items', 0) as Json | undefined;
  const details = at(player, 'videoDetails') as Json | undefined;

  let draft: VideoDraft | undefined;
  if (player && details && details.videoId === videoId) draft = fromPlayer(player, data);
  if (apiItem) draft = mergeApi(draft, apiItem);

  if (!draft) {
    // Unavailable (removed, private): the player says so on a 200 page. Reported as such, not as a page.
    const playability = at(player, 'playabilityStatus') as Json | undefined;
    const apiSaysGone = api?.json && Array.isArray(api.json.items) && api.json.items.length === 0;
    if ((playability && playability.status !== 'OK' && !details) || apiSaysGone) {
      const reason =
        ytText(playability?.reason) ??
        cleanText(String(at(playability, 'errorScreen', 'playerErrorMessageRenderer', 'reason', 'simpleText') ?? '')) ??
        'This video is unavailable.';
      return {
        type: 'VIDEOHOST_VIDEO',
        ok: false,
        status: res?.status ?? api?.status ?? 0,
        description: reason,
        fields: { videohostVideo: { id: videoObjectId(videoId), videoId } },
      };
    }
    // No player data (consent wall, bot check, blocked): oEmbed, else the generic preview.
    return fromOEmbed(videoId, ctx, res?.status ?? 0);
  }

  const [thumb, avatar] = await Promise.all([ctx.hostImage(draft.thumbnailUrl), ctx.hostImage(draft.user?.avatarUrl)]);
  const video: VideohostVideo = { id: videoObjectId(videoId), videoId };
  if (draft.user) video.user = finishUser(draft.user, avatar ? toImageSet(avatar) : undefined);
  if (draft.publishedAt) video.publishedAt = draft.publishedAt;
  if (draft.title) video.title = draft.title;
  if (draft.description !== undefined) video.description = draft.description;
  if (draft.duration) video.duration = draft.duration;
  if (draft.viewsCount !== undefined) video.viewsCount = draft.viewsCount;
  if (draft.likesCount !== undefined) video.likesCount = draft.likesCount;
  if (draft.commentsCount !== undefined) video.commentsCount = draft.commentsCount;
  const image = thumb ? toImageSet(thumb) : undefined;
  if (image) video.thumbnail = image;
  return {
    type: 'VIDEOHOST_VIDEO',
    ok: true,
    status: res?.status && !isConsentWall(res) ? res.status : 200,
    icons: iconsOf(page?.data),
    title: draft.title,
    // The watch page's own summary (the first ~160 characters on one line, as every preview shows
    // it); the full text is videohostVideo.description.
    description: page?.meta('og:description', 'description', 'twitter:description') ?? draft.description ?? '',
    ...(image ? { image } : {}),
    fields: { videohostVideo: video },
  };
}

interface UserDraft {
  channelId?: string;
  handle?: string;
  name?: string;
  avatarUrl?: string;
  subscribersCount?: number;
  verified?: boolean;
}

interface VideoDraft {
  title?: string;
  description?: string;
  duration?: number;
  viewsCount?: number;
  likesCount?: number;
  commentsCount?: number;
  publishedAt?: string;
  thumbnailUrl?: string;
  user?: UserDraft;
}

function handleFrom(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const m = /\/(@[^/?#]+)/.exec(url);
  return m ? decodeSafe(m[1]) : undefined;
}

function fromPlayer(player: Json, data: Json | undefined): VideoDraft {
  const vd = at(player, 'videoDetails') as Json;
  const mf = (at(player, 'microformat', 'playerMicroformatRenderer') ?? {}) as Json;
  const d: VideoDraft = {
    title: cleanText(typeof vd.title === 'string' ? vd.title : ytText(mf.title), 500),
    description: typeof vd.shortDescription === 'string' ? vd.shortDescription.trim() : (ytText(mf.description) ?? ''),
    duration: num(vd.lengthSeconds) || num(mf.lengthSeconds) || undefined,
    viewsCount: num(vd.viewCount) ?? num(mf.viewCount),
    publishedAt: isoDate(mf.publishDate ?? mf.uploadDate),
    thumbnailUrl: largestThumbnail(at(vd, 'thumbnail', 'thumbnails')) ?? largestThumbnail(at(mf, 'thumbnail', 'thumbnails')),
  };
  const channelId =
    (typeof vd.channelId === 'string' ? vd.channelId : undefined) ?? (typeof mf.externalChannelId === 'string' ? mf.externalChannelId : undefined);
  const user: UserDraft = {
    channelId,
    name: typeof vd.author === 'string' ? vd.author : typeof mf.ownerChannelName === 'string' ? mf.ownerChannelName : undefined,
    handle: handleFrom(mf.ownerProfileUrl),
  };
  if (data) {
    d.likesCount = likesFrom(data);
    d.commentsCount = commentsFrom(data);
    const owner = findFirst(data, 'videoOwnerRenderer') as Json | undefined;
    if (owner) {
      user.avatarUrl = largestThumbnail(at(owner, 'thumbnail', 'thumbnails'));
      const subs = at(owner, 'subscriberCountText') as Json | undefined;
      user.subscribersCount = exactOrCompact(subs);
      user.verified = JSON.stringify(owner.badges ?? []).includes('VERIFIED');
      user.handle ??= handleFrom(
        at(owner, 'navigationEndpoint', 'browseEndpoint', 'canonicalBaseUrl') ??
          at(owner, 'title', 'runs', 0, 'navigationEndpoint', 'browseEndpoint', 'canonicalBaseUrl'),
      );
    }
  }
  if (channelId || user.handle) d.user = user;
  return d;
}

/** "4,69 M de suscriptores" (simpleText) or, more precise when it has digits only, the accessibility label. */
function exactOrCompact(text: Json | undefined): number | undefined {
  if (!text) return undefined;
  return parseCount(ytText(at(text, 'accessibility', 'accessibilityData', 'label') as string) ?? ytText(text)) ?? parseCount(ytText(text));
}

function likesFrom(data: Json): number | undefined {
  for (const b of findAll(data, 'buttonViewModel', 200) as Json[]) {
    if (b && b.iconName === 'LIKE') {
      return (
        exactCount(typeof b.accessibilityText === 'string' && /\d/.test(b.accessibilityText) ? b.accessibilityText : undefined) ??
        parseCount(typeof b.title === 'string' ? b.title : undefined)
      );
    }
  }
  for (const t of findAll(data, 'toggleButtonRenderer', 200) as Json[]) {
    if (at(t, 'defaultIcon', 'iconType') === 'LIKE') {
      const label = at(t, 'defaultText', 'accessibility', 'accessibilityData', 'label');
      return exactCount(typeof label === 'string' ? label : undefined) ?? parseCount(ytText(t.defaultText));
    }
  }
  return undefined;
}

function commentsFrom(data: Json): number | undefined {
  for (const p of findAll(data, 'engagementPanelSectionListRenderer', 50) as Json[]) {
    if (p?.panelIdentifier === 'engagement-panel-comments-section' || p?.targetId === 'engagement-panel-comments-section') {
      const n = parseCount(ytText(at(p, 'header', 'engagementPanelTitleHeaderRenderer', 'contextualInfo')));
      if (n !== undefined) return n;
    }
  }
  const entry = findFirst(data, 'commentsEntryPointHeaderRenderer') as Json | undefined;
  return entry ? parseCount(ytText(entry.commentCount)) : undefined;
}

function mergeApi(draft: VideoDraft | undefined, item: Json): VideoDraft {
  const sn = (item.snippet ?? {}) as Json;
  const st = (item.statistics ?? {}) as Json;
  const cd = (item.contentDetails ?? {}) as Json;
  const d: VideoDraft = draft ?? {};
  d.title ??= typeof sn.title === 'string' ? sn.title : undefined;
  d.description ??= typeof sn.description === 'string' ? sn.description : undefined;
  d.duration ??= isoDurationSeconds(typeof cd.duration === 'string' ? cd.duration : undefined) || undefined;
  d.publishedAt = isoDate(sn.publishedAt) ?? d.publishedAt;
  // The API's counts are exact: they win over the page's rounded ones.
  d.viewsCount = num(st.viewCount) ?? d.viewsCount;
  d.likesCount = num(st.likeCount) ?? d.likesCount;
  d.commentsCount = num(st.commentCount) ?? d.commentsCount;
  const thumbs = sn.thumbnails as Record<string, { url?: string }> | undefined;
  d.thumbnailUrl ??= thumbs?.maxres?.url ?? thumbs?.standard?.url ?? thumbs?.high?.url ?? thumbs?.medium?.url ?? thumbs?.default?.url;
  if (typeof sn.channelId === 'string') {
    d.user ??= { channelId: sn.channelId };
    d.user.channelId ??= sn.channelId;
    d.user.name ??= typeof sn.channelTitle === 'string' ? sn.channelTitle : undefined;
  }
  return d;
}

function finishUser(u: UserDraft, avatar: ImageSet | undefined): VideohostUser {
  const key = required(u.channelId ?? u.handle, "the user's channel id or handle");
  const user: VideohostUser = { id: channelObjectId(key), username: u.handle ?? key };
  if (u.name) user.name = u.name;
  if (u.channelId) user.externalId = u.channelId;
  user.url = u.handle ? `${CANONICAL}/${u.handle}` : `${CANONICAL}/channel/${u.channelId}`;
  if (avatar) user.avatar = avatar;
  if (u.subscribersCount !== undefined) user.subscribersCount = u.subscribersCount;
  if (u.verified !== undefined) user.verified = u.verified;
  return user;
}

async function fromOEmbed(videoId: string, ctx: Ctx, pageStatus: number): Promise<PlatformPreview | undefined> {
  const target = `${CANONICAL}/watch?v=${videoId}`;
  const o = await fetchJson(`${ctx.settings.baseUrl}/oembed?url=${encodeURIComponent(target)}&format=json`, ctx);
  const j = o.json;
  if (!j || typeof j.title !== 'string') return undefined; // nothing usable: the generic preview of the link
  const thumb = await ctx.hostImage(typeof j.thumbnail_url === 'string' ? j.thumbnail_url : undefined);
  const handle = handleFrom(j.author_url);
  const channelId = typeof j.author_url === 'string' ? /\/channel\/(UC[A-Za-z0-9_-]{22})/.exec(j.author_url)?.[1] : undefined;
  const video: VideohostVideo = { id: videoObjectId(videoId), videoId, title: j.title };
  if (handle || channelId) {
    video.user = finishUser({ handle, channelId, name: typeof j.author_name === 'string' ? j.author_name : undefined }, undefined);
  }
  const image = thumb ? toImageSet(thumb) : undefined;
  if (image) video.thumbnail = image;
  return {
    type: 'VIDEOHOST_VIDEO',
    ok: true,
    status: pageStatus >= 200 && pageStatus < 300 ? pageStatus : 200,
    title: j.title,
    description: '',
    ...(image ? { image } : {}),
    fields: { videohostVideo: video },
  };
}

// ---------------------------------------------------------------------------------------------
// Channels

async function extractChannel(ids: Record<string, string>, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const yt = ctx.settings;
  const path = ids.handle
    ? `/${encodeURIComponent(ids.handle).replace(/^%40/, '@')}`
    : ids.channelId
      ? `/channel/${ids.channelId}`
      : ids.custom
        ? `/c/${encodeURIComponent(ids.custom)}`
        : `/user/${encodeURIComponent(ids.user)}`;
  // The page may fail: the Data API, when it has a key, stands in.
  const res = await optional(() => fetchPage(`${yt.baseUrl}${path}`, ctx));
  const page = res && res.status === 200 && !isConsentWall(res) ? parsePlatformPage(res, ctx) : undefined;
  const html = page?.html ?? '';
  const data = html ? embeddedJson(html, 'ytInitialData') : undefined;
  const meta = at(data, 'metadata', 'channelMetadataRenderer') as Json | undefined;

  const draft: ChannelDraft = data && meta ? fromChannelData(data, meta) : { handle: ids.handle, externalId: ids.channelId };
  if (yt.apiKey) {
    const q = draft.externalId
      ? `id=${draft.externalId}`
      : ids.handle
        ? `forHandle=${encodeURIComponent(ids.handle)}`
        : ids.user
          ? `forUsername=${encodeURIComponent(ids.user)}`
          : '';
    if (q) {
      const api = await optional(() =>
        fetchJson(`${yt.apiUrl}/channels?part=snippet,statistics,brandingSettings&${q}&key=${encodeURIComponent(yt.apiKey)}`, ctx),
      );
      const item = at(api?.json, 'items', 0) as Json | undefined;
      if (item) mergeChannelApi(draft, item);
    }
  }
  if (!draft.name || !(draft.externalId || draft.handle)) return undefined; // not a channel page we can read: the generic preview

  const [avatar, banner] = await Promise.all([ctx.hostImage(draft.avatarUrl), ctx.hostImage(draft.bannerUrl)]);
  const externalId = draft.externalId;
  const key = required(externalId ?? draft.handle, "the channel's id or handle");
  const user: VideohostUser = { id: channelObjectId(key), username: draft.handle ?? key };
  user.name = draft.name;
  if (draft.description !== undefined) user.description = draft.description;
  if (externalId) user.externalId = externalId;
  user.url = draft.handle ? `${CANONICAL}/${draft.handle}` : `${CANONICAL}/channel/${externalId}`;
  if (avatar) user.avatar = toImageSet(avatar);
  if (banner) user.banner = toImageSet(banner);
  if (draft.subscribersCount !== undefined) user.subscribersCount = draft.subscribersCount;
  if (draft.videosCount !== undefined) user.videosCount = draft.videosCount;
  if (draft.viewsCount !== undefined) user.viewsCount = draft.viewsCount;
  if (draft.joinedAt) user.joinedAt = draft.joinedAt;
  user.visibility = 'PUBLIC';
  if (draft.isFamilySafe !== undefined) user.isFamilySafe = draft.isFamilySafe;
  if (draft.verified !== undefined) user.verified = draft.verified;
  const fields: Partial<LinkRecord> = { videohostUser: user };
  return {
    type: 'VIDEOHOST_USER',
    ok: true,
    status: res?.status ?? 200,
    icons: iconsOf(page?.data),
    title: draft.name,
    description: draft.description ?? '',
    ...(user.avatar ? { image: user.avatar } : {}),
    fields,
  };
}

interface ChannelDraft {
  name?: string;
  description?: string;
  handle?: string;
  externalId?: string;
  avatarUrl?: string;
  bannerUrl?: string;
  subscribersCount?: number;
  videosCount?: number;
  viewsCount?: number;
  joinedAt?: string;
  isFamilySafe?: boolean;
  verified?: boolean;
}

const SUBSCRIBERS = /subscri|abonn|suscri|iscritt|inscrit|assinant|подпис|订阅|登録|구독/i;
const VIDEOS = /vid[eé]o|видео|視頻|视频|動画|동영상/i;

function fromChannelData(data: Json, meta: Json): ChannelDraft {
  const d: ChannelDraft = {
    name: typeof meta.title === 'string' ? meta.title : undefined,
    description: typeof meta.description === 'string' ? meta.description.trim() : undefined,
    externalId: typeof meta.externalId === 'string' ? meta.externalId : undefined,
    avatarUrl: largestThumbnail(at(meta, 'avatar', 'thumbnails')),
    isFamilySafe: typeof meta.isFamilySafe === 'boolean' ? meta.isFamilySafe : undefined,
    handle: handleFrom(meta.vanityChannelUrl) ?? (Array.isArray(meta.ownerUrls) ? handleFrom(meta.ownerUrls[0]) : undefined),
  };
  const c4 = findFirst(data, 'c4TabbedHeaderRenderer') as Json | undefined;
  const phv = findFirst(data, 'pageHeaderViewModel') as Json | undefined;
  if (c4) {
    d.handle ??= ytText(c4.channelHandleText);
    d.subscribersCount = exactOrCompact(c4.subscriberCountText as Json | undefined);
    d.videosCount = parseCount(ytText(c4.videosCountText));
    d.bannerUrl = largestThumbnail(at(c4, 'banner', 'thumbnails'));
    d.avatarUrl ??= largestThumbnail(at(c4, 'avatar', 'thumbnails'));
    d.verified = JSON.stringify(c4.badges ?? []).includes('VERIFIED');
  } else if (phv) {
    const parts: string[] = [];
    for (const row of (at(phv, 'metadata', 'contentMetadataViewModel', 'metadataRows') ?? []) as Json[]) {
      for (const part of (row?.metadataParts ?? []) as Json[]) {
        const t = ytText(at(part, 'text'));
        if (t) parts.push(t);
      }
    }
    d.handle ??= parts.find((p) => p.startsWith('@'));
    const counts = parts.filter((p) => !p.startsWith('@') && /\d/.test(p));
    d.subscribersCount = parseCount(counts.find((p) => SUBSCRIBERS.test(p)) ?? counts[0]);
    d.videosCount = parseCount(counts.find((p) => VIDEOS.test(p)) ?? counts[1]);
    d.bannerUrl = largestThumbnail(at(phv, 'banner', 'imageBannerViewModel', 'image', 'sources'));
    d.avatarUrl ??= largestThumbnail(at(phv, 'image', 'decoratedAvatarViewModel', 'avatar', 'avatarViewModel', 'image', 'sources'));
    d.verified = /CHECK_CIRCLE|VERIFIED/.test(JSON.stringify(phv.title ?? {}));
  }
  return d;
}

function mergeChannelApi(d: ChannelDraft, item: Json): void {
  const sn = (item.snippet ?? {}) as Json;
  const st = (item.statistics ?? {}) as Json;
  d.externalId ??= typeof item.id === 'string' ? item.id : undefined;
  d.name ??= typeof sn.title === 'string' ? sn.title : undefined;
  d.description ??= typeof sn.description === 'string' ? sn.description : undefined;
  d.handle ??= typeof sn.customUrl === 'string' && sn.customUrl.startsWith('@') ? sn.customUrl : undefined;
  d.joinedAt = isoDate(sn.publishedAt) ?? d.joinedAt;
  if (st.hiddenSubscriberCount !== true) d.subscribersCount = num(st.subscriberCount) ?? d.subscribersCount;
  d.videosCount = num(st.videoCount) ?? d.videosCount;
  d.viewsCount = num(st.viewCount) ?? d.viewsCount;
  const thumbs = sn.thumbnails as Record<string, { url?: string }> | undefined;
  d.avatarUrl ??= thumbs?.high?.url ?? thumbs?.medium?.url ?? thumbs?.default?.url;
  d.bannerUrl ??= at(item, 'brandingSettings', 'image', 'bannerExternalUrl') as string | undefined;
}
