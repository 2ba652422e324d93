/** TED: a talk, `ted.com/talks/<slug>`, plays at `embed.ted.com/talks/<slug>`, 16:9. */
import { PLAYER_LIST } from '../../client/players.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const SLUG = /^[a-z0-9_]{3,200}$/i;

export const ted: PlayerProvider = {
  ...PLAYER_LIST.ted,
  fromLink(url) {
    const [talks, slug, ...rest] = segments(url);
    if (!hostIsOneOf(url, 'ted.com', 'www.ted.com') || talks !== 'talks' || !slug || rest.length || !SLUG.test(slug)) return undefined;
    return { type: 'video', url: `https://embed.ted.com/talks/${slug}`, provider: 'TED', aspectRatio: 16 / 9 };
  },
};
