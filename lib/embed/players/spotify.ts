/**
 * Spotify: `open.spotify.com/[intl-xx/]<track|album|playlist|episode|show|artist>/<id>` plays at
 * `open.spotify.com/embed/<kind>/<id>`: the compact 152 px bar for a track or an episode, the
 * 352 px player with its list for the others (Spotify's two embed heights).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { Player, PlayerProvider } from '../types.js';
import { hostIsOneOf } from './shared.js';

const KINDS = 'track|album|playlist|episode|show|artist';
const LINK = new RegExp(`^/(?:intl-[a-z]{2}(?:-[a-z]{2})?/)?(${KINDS})/([A-Za-z0-9]{22})/?$`);
const PLAYER_PATH = PLAYER_LIST.spotify.origins[0].path;

function spotifyPlayer(kind: string, id: string): Player {
  const compact = kind === 'track' || kind === 'episode';
  return { type: 'audio', url: `https://open.spotify.com/embed/${kind}/${id}`, provider: 'Spotify', height: compact ? 152 : 352 };
}

export const spotify: PlayerProvider = {
  ...PLAYER_LIST.spotify,
  fromLink(url) {
    const m = hostIsOneOf(url, 'open.spotify.com', 'play.spotify.com') ? LINK.exec(url.pathname) : null;
    return m ? spotifyPlayer(m[1], m[2]) : undefined;
  },
  fromAddress(src) {
    const m = PLAYER_PATH.exec(src.pathname);
    if (!m) return undefined;
    const player = spotifyPlayer(m[1], m[2]);
    return { url: new URL(player.url), size: { height: player.height } };
  },
};
