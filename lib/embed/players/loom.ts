/** Loom: a recording, `loom.com/share/<id>`, plays at `www.loom.com/embed/<id>`, 16:9. */
import { PLAYER_LIST } from '../../client/players.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const ID = /^[0-9a-f]{32}$/;

export const loom: PlayerProvider = {
  ...PLAYER_LIST.loom,
  fromLink(url) {
    const [share, id, ...rest] = segments(url);
    if (!hostIsOneOf(url, 'loom.com', 'www.loom.com') || (share !== 'share' && share !== 'embed') || !id || !ID.test(id) || rest.length) return undefined;
    return { type: 'video', url: `https://www.loom.com/embed/${id}`, provider: 'Loom', aspectRatio: 16 / 9 };
  },
};
