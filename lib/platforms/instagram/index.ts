/**
 * Instagram (platform `photoshare`): posts (PHOTOSHARE_POST, `photosharePost`: ./post.ts)
 * `/p/{code}`, `/reel/{code}`, `/reels/{code}`, `/tv/{code}` (also under `/{user}/p/{code}`), and
 * profiles (PHOTOSHARE_USER, `photoshareUser`: ./user.ts) `/{username}`.
 *
 * Posts: the Open Graph page Instagram serves to the Facebook crawler. Its description reads
 * "152K likes, 784 comments - user on April 19, 2021: "caption"" (likesCount, commentsCount,
 * username, day, text); og:title / <title> give the name ("Name on Instagram", "Instagram video by
 * Name • Apr 19, 2021 at 6:18 AM"); og:image and og:video the media. Then the `/embed/captioned`
 * page: its embedded shortcode_media JSON (exact time, counts, owner with verified flag and
 * avatar, display and video URLs), else its HTML (caption, username, image). The time of posting
 * is also encoded in the shortcode (the media id's high bits), used when no source says it.
 *
 * Users: og:description "1,234 Followers, 56 Following, 789 Posts - See Instagram photos and
 * videos from Name (@user)", og:title, og:image (avatar), `is_verified` / `is_private` in the page.
 * The login redirect is an ok:false record, never a preview titled "Login • Instagram".
 * The embed page's origin is its setting (./settings.ts), given to it as `ctx.settings`.
 */
import { FACEBOOK_BOT } from '../../fetch/host-profiles.js';
import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { player } from './player.js';
import { extractPost } from './post.js';
import { settings } from './settings.js';
import { HOSTS } from './site.js';
import { extractUser } from './user.js';

const RESERVED = new Set([
  'accounts',
  'explore',
  'direct',
  'stories',
  'about',
  'developer',
  'legal',
  'p',
  'reel',
  'reels',
  'tv',
  'web',
  'static',
  'emails',
  'challenge',
  'privacy',
  'terms',
  'press',
  'api',
  'oauth',
  'graphql',
  'ar',
  'session',
  'directory',
  'topics',
  'lite',
  'download',
]);

export function matchInstagram(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(hostOf(url))) return undefined;
  const post = /^\/(?:[A-Za-z0-9._]{1,30}\/)?(p|reels?|tv)\/([A-Za-z0-9_-]{5,40})(?:\/|$)/.exec(url.pathname);
  if (post) return { kind: 'post', ids: { shortcode: post[2], form: post[1] === 'reels' ? 'reel' : post[1] } };
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts.length === 1 && /^[A-Za-z0-9._]{1,30}$/.test(parts[0]) && !RESERVED.has(parts[0].toLowerCase())) {
    return { kind: 'user', ids: { username: parts[0] } };
  }
  return undefined;
}

export const instagram: Platform<typeof settings> = {
  name: 'photoshare',
  siteName: 'Instagram',
  themeColor: '#ffffff',
  settings,
  hostProfile: {
    hosts: ['instagram.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to the Facebook crawler instead of the login redirect',
  },
  match: matchInstagram,
  player,
  async extract(url, match, ctx) {
    return match.kind === 'post' ? extractPost(url, match.ids.shortcode, ctx) : extractUser(url, match.ids.username, ctx);
  },
};
