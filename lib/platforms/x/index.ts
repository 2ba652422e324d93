/**
 * X / Twitter (platform `microblog`): posts (MICROBLOG_POST, `microblogPost`: ./post.ts) and users
 * (MICROBLOG_USER, `microblogUser`: ./user.ts). Posts `/{user}/status/{id}` and profiles `/{user}` on x.com,
 * twitter.com and mobile.twitter.com (t.co links arrive here after the generic fetch followed
 * their redirects).
 *
 * Posts, first source that answers:
 *  1. the public syndication endpoint the embed widget uses (cdn.syndication.twimg.com/tweet-result,
 *     token derived from the id as the widget does): text, createdAt, user (name, username, avatar,
 *     verified), likesCount, commentsCount (+ reposts/quotes/bookmarks/views where present), media
 *     (photos as MediaImage; videos and GIFs: the best MP4 variant probed as Video);
 *  2. oEmbed (publish.twitter.com): text, the day of posting, user name and username;
 *  3. the HTML X serves to preview bots (Twitterbot): og:title "Name (@user) on X", og:description
 *     (the text), og:image (the first photo or the avatar).
 * A deleted or protected post (syndication 404 / tombstone, oEmbed 404/403) is ok:false.
 *
 * Users: the public profile timeline (syndication.twitter.com/srv/timeline-profile), whose embedded
 * data carries the full user (name, bio, location, url, avatar, banner, verified, protected,
 * followers/following/posts counts, joinedAt); else the bot HTML (name, username, bio, avatar).
 * The upstream origins are its settings (./settings.ts), given to it as `ctx.settings`.
 */

import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { player } from './player.js';
import { extractPost } from './post.js';
import { settings } from './settings.js';
import { extractUser } from './user.js';

const HOSTS = /^(www\.|mobile\.)?(x|twitter)\.com$/i;

/** First path segments that are X's own pages, not user names. */
const RESERVED = new Set([
  'home',
  'explore',
  'i',
  'search',
  'settings',
  'notifications',
  'messages',
  'login',
  'logout',
  'signup',
  'tos',
  'privacy',
  'hashtag',
  'intent',
  'share',
  'compose',
  'account',
  'about',
  'jobs',
  'download',
  'following',
  'followers',
  'lists',
  'bookmarks',
  'communities',
  'premium',
  'verified',
  'jack_dorsey_is_not_a_user',
  'oauth',
  'who_to_follow',
  'rules',
  'help',
  'web',
]);

export function matchX(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(hostOf(url))) return undefined;
  const parts = url.pathname.split('/').filter(Boolean);
  // /{user}/status/{id}[/photo/1], /{user}/statuses/{id}, /i/web/status/{id}, /i/status/{id}
  const st = /^\/(?:([A-Za-z0-9_]{1,15})|i\/web|i)\/status(?:es)?\/(\d{1,20})(?:\/|$)/.exec(url.pathname);
  if (st) return { kind: 'post', ids: { postId: st[2], ...(st[1] && st[1] !== 'i' ? { username: st[1] } : {}) } };
  if (parts.length === 1 && /^[A-Za-z0-9_]{1,15}$/.test(parts[0]) && !RESERVED.has(parts[0].toLowerCase())) {
    return { kind: 'user', ids: { username: parts[0] } };
  }
  return undefined;
}

export const x: Platform<typeof settings> = {
  name: 'microblog',
  siteName: 'X',
  themeColor: '#000000',
  settings,
  hostProfile: {
    hosts: ['x.com', 'twitter.com', 't.co'],
    userAgent: 'Twitterbot/1.0 (compatible; linklens/1.0)',
    note: 'serves a small Open Graph page to preview bots instead of the JavaScript app / login flow',
  },
  match: matchX,
  player,
  async extract(url, match, ctx) {
    return match.kind === 'post' ? extractPost(url, match.ids.postId, match.ids.username, ctx) : extractUser(url, match.ids.username, ctx);
  },
};
