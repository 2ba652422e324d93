/**
 * YouTube: a video link (watch, youtu.be, shorts, live, embed) plays on the no-cookie host
 * (lib/platforms/youtube/player.ts); a youtube.com or no-cookie embed address found in an oEmbed
 * answer or a page's player meta is moved to the no-cookie host too, its `start` kept.
 */
import { PLAYER_LIST } from '../../client/players.js';
import { player as platformPlayer, youtubePlayer } from '../../platforms/youtube/player.js';
import { matchYoutube } from '../../platforms/youtube/site.js';
import type { PlayerProvider } from '../types.js';

const EMBED_PATH = PLAYER_LIST.youtube.origins[1].path;

export const youtube: PlayerProvider = {
  ...PLAYER_LIST.youtube,
  fromLink(url) {
    const match = matchYoutube(url);
    return match ? platformPlayer(url, match) : undefined;
  },
  fromAddress(src) {
    const id = EMBED_PATH.exec(src.pathname)?.[1];
    const player = id ? youtubePlayer(id) : undefined;
    if (!player) return undefined;
    const url = new URL(player.url);
    const start = src.searchParams.get('start');
    if (start && /^\d{1,6}$/.test(start)) url.searchParams.set('start', start);
    return { url, size: { aspectRatio: player.aspectRatio } };
  },
};
