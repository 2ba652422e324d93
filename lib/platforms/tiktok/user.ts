/**
 * A TikTok user (CLIPS_USER, `clipsUser`): the page's embedded user and stats; also the author a
 * video carries.
 */
import type { ClipsUser } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { fetchPlatformPage, isOk } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { bool, compact, obj, str } from '../shared/json.js';
import { parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { CANONICAL, ICONS, pageState } from './site.js';

export interface UserDraft {
  user: Omit<ClipsUser, 'avatar'>;
  avatar?: string;
}

export function userId(username: string): number {
  return platformObjectId('clips', 'user', username.toLowerCase());
}

export function userDraft(u: Record<string, unknown>, stats: Record<string, unknown> | undefined): UserDraft | undefined {
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

export async function extractUser(url: URL, username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
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
