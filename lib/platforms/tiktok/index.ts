/**
 * TikTok (platform `clips`): videos (CLIPS_VIDEO, `clipsVideo`: ./video.ts) `/@user/video/{id}`
 * (and `/@user/photo/{id}`, `/embed/v2/{id}`), users (CLIPS_USER, `clipsUser`: ./user.ts) `/@user`; the vm./vt. short links arrive here after the generic fetch followed their redirects.
 *
 * The page's embedded JSON: `__UNIVERSAL_DATA_FOR_REHYDRATION__` (`webapp.video-detail` /
 * `webapp.user-detail`), else the older `SIGI_STATE` (ItemModule, UserModule). A video gives
 * text (desc), publishedAt (createTime), playsCount, likesCount (diggCount), commentsCount,
 * sharesCount, the cover as media, and the author with their stats. A user gives name, username,
 * bio, avatar, verified, visibility, followers/following/likes counts. oEmbed is the fallback for
 * videos (text, author, cover; the time from the id, whose high 32 bits are the Unix time).
 * oEmbed's origin is its setting (./settings.ts), given to it as `ctx.settings`.
 */
import { FACEBOOK_BOT } from '../../fetch/host-profiles.js';
import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { player } from './player.js';
import { settings } from './settings.js';
import { extractUser } from './user.js';
import { extractVideo } from './video.js';

const HOSTS = /^(www\.|m\.)?tiktok\.com$/i;

export function matchTiktok(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(hostOf(url))) return undefined;
  const v = /^\/@([A-Za-z0-9._-]{1,40})\/(video|photo)\/(\d{8,25})(?:\/|$)/.exec(url.pathname);
  if (v) return { kind: 'video', ids: { username: v[1], videoId: v[3] } };
  const e = /^\/(?:embed\/v2|embed|v)\/(\d{8,25})(?:\.html)?(?:\/|$)/.exec(url.pathname);
  if (e) return { kind: 'video', ids: { videoId: e[1] } };
  const u = /^\/@([A-Za-z0-9._-]{1,40})\/?$/.exec(url.pathname);
  if (u) return { kind: 'user', ids: { username: u[1] } };
  return undefined;
}

export const tiktok: Platform<typeof settings> = {
  name: 'clips',
  siteName: 'TikTok',
  settings,
  hostProfile: {
    hosts: ['tiktok.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to preview bots',
  },
  match: matchTiktok,
  player,
  async extract(url, match, ctx) {
    return match.kind === 'video' ? extractVideo(url, match.ids.videoId, match.ids.username, ctx) : extractUser(url, match.ids.username, ctx);
  },
};
