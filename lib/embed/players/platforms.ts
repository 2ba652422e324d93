/**
 * The players of the platforms that have one (X posts, Instagram posts, TikTok videos, Reddit
 * posts), as common players: a link of theirs previewed generically (the platform's own source
 * failed) still gets the player its platform module names (lib/platforms/<site>/player.ts), and an
 * address on their player hosts found in an oEmbed answer or a page's meta is kept. YouTube's is
 * ./youtube.ts.
 */
import { instagram as instagramPlatform } from '../../platforms/instagram/index.js';
import { reddit as redditPlatform } from '../../platforms/reddit/index.js';
import { tiktok as tiktokPlatform } from '../../platforms/tiktok/index.js';
import type { Platform } from '../../platforms/types.js';
import { x as xPlatform } from '../../platforms/x/index.js';
import type { PlayerOrigin, PlayerProvider } from '../types.js';

function fromPlatform(platform: Platform, provider: Omit<PlayerProvider, 'fromLink'>): PlayerProvider {
  return {
    ...provider,
    fromLink(url) {
      const match = platform.match(url);
      return match ? platform.player?.(url, match) : undefined;
    },
  };
}

const only = (origin: string, path: RegExp): PlayerOrigin[] => [{ origin, path }];

export const x = fromPlatform(xPlatform, { name: 'X', type: 'rich', origins: only('https://platform.twitter.com', /^\/embed\/Tweet\.html$/) });

export const instagram = fromPlatform(instagramPlatform, {
  name: 'Instagram',
  type: 'rich',
  origins: only('https://www.instagram.com', /^\/(p|reel|tv)\/[A-Za-z0-9_-]{5,40}\/embed(\/captioned)?\/?$/),
});

export const tiktok = fromPlatform(tiktokPlatform, {
  name: 'TikTok',
  type: 'video',
  origins: only('https://www.tiktok.com', /^\/(player\/v1|embed\/v2|embed)\/\d{8,25}\/?$/),
});

export const reddit = fromPlatform(redditPlatform, {
  name: 'Reddit',
  type: 'rich',
  origins: only('https://embed.reddit.com', /^\/r\/[A-Za-z0-9_]{2,32}\/comments\/[a-z0-9]{3,12}(\/[^/]*)?\/?$/),
});
