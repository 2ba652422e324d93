/**
 * SoundCloud: a track (`soundcloud.com/<user>/<track>`) or a set (`soundcloud.com/<user>/sets/<set>`)
 * plays in SoundCloud's widget, `w.soundcloud.com/player/?url=<the link>`: the classic 166 px bar
 * for a track, 450 px with the list for a set (SoundCloud's own embed heights). A widget address
 * found elsewhere keeps only its `url` (a SoundCloud address).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { Player, PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

/** First path segments that are SoundCloud's own pages, not users. */
const RESERVED = new Set([
  'discover',
  'stream',
  'search',
  'you',
  'upload',
  'charts',
  'pages',
  'settings',
  'messages',
  'notifications',
  'people',
  'popular',
  'tags',
  'terms-of-use',
  'jobs',
  'mobile',
  'pro',
  'imprint',
  'logout',
  'signin',
]);
const NAME = /^[A-Za-z0-9_-]{1,100}$/;

function widget(target: string, set: boolean): Player {
  const url = new URL('https://w.soundcloud.com/player/');
  url.searchParams.set('url', target);
  return { type: 'audio', url: url.href, provider: 'SoundCloud', height: set ? 450 : 166 };
}

export const soundcloud: PlayerProvider = {
  ...PLAYER_LIST.soundcloud,
  fromLink(url) {
    if (!hostIsOneOf(url, 'soundcloud.com', 'www.soundcloud.com', 'm.soundcloud.com')) return undefined;
    const [user, second, third, ...rest] = segments(url);
    if (!user || RESERVED.has(user.toLowerCase()) || !NAME.test(user) || !second || rest.length) return undefined;
    const set = second === 'sets';
    if (set ? !third || !NAME.test(third) : third !== undefined || !NAME.test(second)) return undefined;
    return widget(`https://soundcloud.com/${[user, second, third].filter(Boolean).join('/')}`, set);
  },
  /** Only on its place (lib/client/players.ts), whose check of `url` takes a SoundCloud page or API resource. */
  fromAddress(src) {
    const target = src.searchParams.get('url');
    if (!target) return undefined;
    const player = widget(target, /\/(sets|playlists)\//.test(target));
    return { url: new URL(player.url), size: { height: player.height } };
  },
};
