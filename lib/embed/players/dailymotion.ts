/**
 * Dailymotion: a video (`dailymotion.com/video/<id>`, `dai.ly/<id>`) plays in a player the
 * operator made in Dailymotion's Studio, `geo.dailymotion.com/player/<player id>.html?video=<id>`
 * (LINKPREVIEW_EMBED_DAILYMOTION_PLAYER). Dailymotion refuses embed addresses without a player id
 * since September 2026, so without the setting a link gets only a player its page names itself
 * (a geo.dailymotion.com or /embed/video/ address in its player metas or oEmbed answer).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const VIDEO_ID = /^(x[a-z0-9]{4,12})(?:_[^/]*)?$/i;

export const dailymotion: PlayerProvider = {
  ...PLAYER_LIST.dailymotion,
  fromLink(url, ctx) {
    const playerId = ctx.config.dailymotionPlayer;
    if (!playerId) return undefined;
    const segs = segments(url);
    const raw = hostIsOneOf(url, 'dai.ly') ? segs[0] : hostIsOneOf(url, 'dailymotion.com', 'www.dailymotion.com') && segs[0] === 'video' ? segs[1] : undefined;
    const id = raw ? VIDEO_ID.exec(raw)?.[1] : undefined;
    if (!id) return undefined;
    return { type: 'video', url: `https://geo.dailymotion.com/player/${playerId}.html?video=${id}`, provider: 'Dailymotion', aspectRatio: 16 / 9 };
  },
};
