/**
 * Apple Music and Apple Podcasts: the same page on Apple's embed hosts. `music.apple.com/<cc>/<album|
 * playlist|song|music-video>/<name>/<id>` plays at `embed.music.apple.com/...` (a song, or an album's
 * `?i=<song>`, in the 175 px bar; an album or a playlist in the 450 px player; a music video 16:9);
 * `podcasts.apple.com/<cc>/podcast/<name>/id<id>` at `embed.podcasts.apple.com/...` (an episode,
 * `?i=<episode>`, 175 px; a show 450 px). Only `i` of the query is kept.
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { Player, PlayerProvider } from '../types.js';
import { hostIsOneOf } from './shared.js';

/** The player paths (lib/client/players.ts), which are the links' paths too. */
const MUSIC_PATH = PLAYER_LIST.appleMusic.origins[0].path;
const PODCAST_PATH = PLAYER_LIST.applePodcasts.origins[0].path;

/** The same path on `host`, with `i` (a song or an episode) when it names one. */
function on(host: string, from: URL): { url: URL; item: boolean } {
  const url = new URL(`https://${host}${from.pathname}`);
  const i = from.searchParams.get('i');
  if (i && /^\d{1,15}$/.test(i)) url.searchParams.set('i', i);
  return { url, item: url.searchParams.has('i') };
}

function musicPlayer(from: URL): Player | undefined {
  const kind = MUSIC_PATH.exec(from.pathname)?.[1];
  if (!kind) return undefined;
  const { url, item } = on('embed.music.apple.com', from);
  if (kind === 'music-video') return { type: 'video', url: url.href, provider: 'Apple Music', aspectRatio: 16 / 9 };
  return { type: 'audio', url: url.href, provider: 'Apple Music', height: item || kind === 'song' ? 175 : 450 };
}

function podcastPlayer(from: URL): Player | undefined {
  if (!PODCAST_PATH.test(from.pathname)) return undefined;
  const { url, item } = on('embed.podcasts.apple.com', from);
  return { type: 'audio', url: url.href, provider: 'Apple Podcasts', height: item ? 175 : 450 };
}

const sized = (p: Player | undefined) => p && { url: new URL(p.url), size: { height: p.height, aspectRatio: p.aspectRatio } };

export const appleMusic: PlayerProvider = {
  ...PLAYER_LIST.appleMusic,
  fromLink: (url) => (hostIsOneOf(url, 'music.apple.com', 'geo.music.apple.com') ? musicPlayer(url) : undefined),
  fromAddress: (src) => sized(musicPlayer(src)),
};

export const applePodcasts: PlayerProvider = {
  ...PLAYER_LIST.applePodcasts,
  fromLink: (url) => (hostIsOneOf(url, 'podcasts.apple.com') ? podcastPlayer(url) : undefined),
  fromAddress: (src) => sized(podcastPlayer(src)),
};
