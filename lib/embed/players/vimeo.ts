/**
 * Vimeo: `vimeo.com/<id>` (also under /channels/<name>/, /groups/<name>/videos/, /album/<n>/video/,
 * and an unlisted video's `vimeo.com/<id>/<hash>`) plays at `player.vimeo.com/video/<id>`, with the
 * privacy hash as `h` (what Vimeo's own embed code carries for an unlisted video).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { Player, PlayerProvider } from '../types.js';
import { hostIsOneOf } from './shared.js';

const LINK = /^\/(?:channels\/[\w-]+\/|groups\/[\w-]+\/videos\/|album\/\d+\/video\/|video\/)?(\d{1,12})(?:\/([0-9a-f]{6,20}))?\/?$/i;
const PLAYER_PATH = PLAYER_LIST.vimeo.origins[0].path;

function vimeoPlayer(id: string, hash: string | null | undefined): Player {
  const url = new URL(`https://player.vimeo.com/video/${id}`);
  if (hash && /^[0-9a-f]{6,20}$/i.test(hash)) url.searchParams.set('h', hash);
  return { type: 'video', url: url.href, provider: 'Vimeo', aspectRatio: 16 / 9 };
}

export const vimeo: PlayerProvider = {
  ...PLAYER_LIST.vimeo,
  fromLink(url) {
    if (hostIsOneOf(url, 'player.vimeo.com')) {
      const id = PLAYER_PATH.exec(url.pathname)?.[1];
      return id ? vimeoPlayer(id, url.searchParams.get('h')) : undefined;
    }
    if (!hostIsOneOf(url, 'vimeo.com', 'www.vimeo.com')) return undefined;
    const m = LINK.exec(url.pathname);
    return m ? vimeoPlayer(m[1], m[2] ?? url.searchParams.get('h')) : undefined;
  },
  fromAddress(src) {
    const id = PLAYER_PATH.exec(src.pathname)?.[1];
    return id ? { url: new URL(vimeoPlayer(id, src.searchParams.get('h')).url) } : undefined;
  },
};
