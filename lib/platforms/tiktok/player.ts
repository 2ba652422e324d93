/**
 * A TikTok video's player (docs/embeds.md): TikTok's Embed Player, `www.tiktok.com/player/v1/<id>`
 * (developers.tiktok.com/doc/embed-player), a portrait box.
 */
import type { Player } from '../../embed/types.js';
import type { PlatformMatch } from '../types.js';

export function player(_url: URL, match: PlatformMatch): Player | undefined {
  const id = match.kind === 'video' ? match.ids.videoId : undefined;
  if (!id || !/^\d{8,25}$/.test(id)) return undefined;
  return { type: 'video', url: `https://www.tiktok.com/player/v1/${id}`, provider: 'TikTok', width: 325, height: 578 };
}
