/**
 * A YouTube channel (VIDEOHOST_USER, `videohostUser`): the channel page's `ytInitialData`
 * (channelMetadataRenderer and the header), the Data API when its key is set; and the channel as a
 * video's `user` (finishUser), shared with ./video.ts.
 */
import type { ImageSet, LinkRecord, VideohostUser } from '../../contract/link.js';
import { required } from '../../errors.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchPage, optional } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { at, type Json, num } from '../shared/json.js';
import { parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import { embeddedJson, findFirst, largestThumbnail, ytText } from './parse.js';
import type { Ctx } from './settings.js';
import { CANONICAL, decodeSafe, fetchJson, iconsOf, isConsentWall } from './site.js';

function channelObjectId(channelId: string): number {
  return platformObjectId('videohost', 'user', channelId);
}

export interface UserDraft {
  channelId?: string;
  handle?: string;
  name?: string;
  avatarUrl?: string;
  subscribersCount?: number;
  verified?: boolean;
}

export function handleFrom(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const m = /\/(@[^/?#]+)/.exec(url);
  return m ? decodeSafe(m[1]) : undefined;
}

/** "4,69 M de suscriptores" (simpleText) or, more precise when it has digits only, the accessibility label. */
export function exactOrCompact(text: Json | undefined): number | undefined {
  if (!text) return undefined;
  return parseCount(ytText(at(text, 'accessibility', 'accessibilityData', 'label') as string) ?? ytText(text)) ?? parseCount(ytText(text));
}

export function finishUser(u: UserDraft, avatar: ImageSet | undefined): VideohostUser {
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

export async function extractChannel(ids: Record<string, string>, ctx: Ctx): Promise<PlatformPreview | undefined> {
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
