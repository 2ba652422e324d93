/**
 * Figma: a file, `figma.com/<design|file|proto|board|slides|deck>/<key>/<name>`, plays at
 * `embed.figma.com/<design|proto|board|slides|deck>/<key>?embed-host=linklens` (developers.figma.com/docs/embeds:
 * `embed-host` names the embedding app and is required), the node kept, 450 px high (Figma's example).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const KEY = /^[A-Za-z0-9]{10,128}$/;
const KINDS = new Set(['design', 'file', 'proto', 'board', 'slides', 'deck']);

export const figma: PlayerProvider = {
  ...PLAYER_LIST.figma,
  fromLink(url) {
    const [kind, key] = segments(url);
    if (!hostIsOneOf(url, 'figma.com', 'www.figma.com') || !kind || !KINDS.has(kind) || !key || !KEY.test(key)) return undefined;
    const player = new URL(`https://embed.figma.com/${kind === 'file' ? 'design' : kind}/${key}`);
    const node = url.searchParams.get('node-id');
    if (node && /^[0-9]+[-:][0-9]+$/.test(node)) player.searchParams.set('node-id', node);
    player.searchParams.set('embed-host', 'linklens');
    return { type: 'rich', url: player.href, provider: 'Figma', height: 450 };
  },
};
