/**
 * A YouTube video (VIDEOHOST_VIDEO, `videohostVideo`): the watch page's `ytInitialPlayerResponse`
 * and `ytInitialData`, the Data API when its key is set, oEmbed when the page gives no player data.
 */
import type { VideohostVideo } from '../../contract/link.js';
import { cleanText } from '../../extract/text.js';
import { toImageSet } from '../../media/host-images.js';
import { exactCount, parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchPage, optional } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { at, type Json, num } from '../shared/json.js';
import { parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import { exactOrCompact, finishUser, handleFrom, type UserDraft } from './channel.js';
import { embeddedJson, findAll, findFirst, isoDurationSeconds, largestThumbnail, ytText } from './parse.js';
import type { Ctx } from './settings.js';
import { CANONICAL, fetchJson, iconsOf, isConsentWall, matchYoutube } from './site.js';

function videoObjectId(videoId: string): number {
  return platformObjectId('videohost', 'video', videoId);
}

export async function extractVideo(videoId: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const yt = ctx.settings;
  const watchUrl = `${yt.baseUrl}/watch?v=${videoId}`;
  const apiUrl = yt.apiKey ? `${yt.apiUrl}/videos?part=snippet,statistics,contentDetails&id=${videoId}&key=${encodeURIComponent(yt.apiKey)}` : undefined;
  const reuse = ctx.page && matchYoutube(new URL(ctx.page.finalUrl))?.ids.videoId === videoId && ctx.page.status === 200 ? ctx.page : undefined;
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
