/**
 * An Instagram post's player (docs/embeds.md): its embed page, `www.instagram.com/<p|reel|tv>/<code>/embed/`,
 * the page Instagram's own embed script frames, a post-sized box.
 */
import type { Player } from '../../embed/types.js';
import type { PlatformMatch } from '../types.js';

export function player(_url: URL, match: PlatformMatch): Player | undefined {
  const { shortcode, form } = match.ids;
  if (match.kind !== 'post' || !shortcode || !/^[A-Za-z0-9_-]{5,40}$/.test(shortcode)) return undefined;
  const kind = form === 'reel' || form === 'tv' ? form : 'p';
  return { type: 'rich', url: `https://www.instagram.com/${kind}/${shortcode}/embed/`, provider: 'Instagram', width: 540, height: 700 };
}
