/**
 * CodePen: a pen, `codepen.io/<user>/pen/<id>` (or its /details/ and /full/ pages), plays at
 * `codepen.io/<user>/embed/<id>?default-tab=result`, 300 px high (CodePen's default embed height).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const USER = /^[A-Za-z0-9_-]{1,60}$/;
const PEN = /^[A-Za-z0-9]{3,20}$/;

export const codepen: PlayerProvider = {
  ...PLAYER_LIST.codepen,
  fromLink(url) {
    const [user, page, id, ...rest] = segments(url);
    if (!hostIsOneOf(url, 'codepen.io') || !user || !USER.test(user) || !['pen', 'details', 'full'].includes(page ?? '') || !id || !PEN.test(id) || rest.length)
      return undefined;
    return { type: 'rich', url: `https://codepen.io/${user}/embed/${id}?default-tab=result`, provider: 'CodePen', height: 300 };
  },
};
