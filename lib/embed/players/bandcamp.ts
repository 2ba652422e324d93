/**
 * Bandcamp: an album or a track page names its player, `bandcamp.com/EmbeddedPlayer/.../album=<id>/
 * .../track=<id>/`, in its `twitter:player` (and `og:video`). linklens takes the album and track ids
 * from it and builds its own: the 120 px player with a small artwork and no list
 * (`size=large/tracklist=false/artwork=small`). The same for such an address on any page (Bandcamp
 * sites on their own domains).
 */
import { PLAYER_LIST } from '../../client/players.js';
import { hostOf, onHost } from '../../host.js';
import type { Player, PlayerProvider } from '../types.js';
import { metaContent } from './shared.js';

const PLAYER_PATH = PLAYER_LIST.bandcamp.origins[0].path;

function bandcampPlayer(src: URL): Player | undefined {
  if (!PLAYER_PATH.test(src.pathname)) return undefined;
  const album = /\/album=(\d{1,15})(?=\/|$)/.exec(src.pathname)?.[1];
  const track = /\/track=(\d{1,15})(?=\/|$)/.exec(src.pathname)?.[1];
  if (!album && !track) return undefined;
  const parts = [
    ...(album ? [`album=${album}`] : []),
    'size=large',
    'tracklist=false',
    'artwork=small',
    ...(track ? [`track=${track}`] : []),
    'transparent=true',
  ];
  return { type: 'audio', url: `https://bandcamp.com/EmbeddedPlayer/${parts.join('/')}/`, provider: 'Bandcamp', height: 120 };
}

export const bandcamp: PlayerProvider = {
  ...PLAYER_LIST.bandcamp,
  fromLink(url, ctx) {
    if (!onHost(url.hostname, 'bandcamp.com') || !/^\/(album|track)\/[\w-]+\/?$/.test(url.pathname)) return undefined;
    const named = metaContent(ctx.page, 'twitter:player') ?? metaContent(ctx.page, 'og:video');
    let src: URL | undefined;
    try {
      src = named ? new URL(named.replace(/^\/\//, 'https://')) : undefined;
    } catch {
      return undefined;
    }
    return src && /^(https?:)$/.test(src.protocol) && hostOf(src) === 'bandcamp.com' ? bandcampPlayer(src) : undefined;
  },
  fromAddress(src) {
    const player = bandcampPlayer(src);
    return player && { url: new URL(player.url), size: { height: player.height } };
  },
};
