/**
 * The players of the platforms that have one (X posts, Instagram posts, TikTok videos, Reddit
 * posts), as common players: a link of theirs previewed generically (the platform's own source
 * failed) still gets the player its platform module names (lib/platforms/<site>/player.ts), and an
 * address on their player hosts found in an oEmbed answer or a page's meta is kept. YouTube's is
 * ./youtube.ts.
 */
import { PLAYER_LIST } from '../../client/players.js';
import { instagram as instagramPlatform } from '../../platforms/instagram/index.js';
import { reddit as redditPlatform } from '../../platforms/reddit/index.js';
import { tiktok as tiktokPlatform } from '../../platforms/tiktok/index.js';
import type { Platform } from '../../platforms/types.js';
import { x as xPlatform } from '../../platforms/x/index.js';
import type { PlayerProvider } from '../types.js';

function fromPlatform(platform: Platform, provider: Omit<PlayerProvider, 'fromLink'>): PlayerProvider {
  return {
    ...provider,
    fromLink(url) {
      const match = platform.match(url);
      return match ? platform.player?.(url, match) : undefined;
    },
  };
}

export const x = fromPlatform(xPlatform, PLAYER_LIST.x);

export const instagram = fromPlatform(instagramPlatform, PLAYER_LIST.instagram);

export const tiktok = fromPlatform(tiktokPlatform, PLAYER_LIST.tiktok);

export const reddit = fromPlatform(redditPlatform, PLAYER_LIST.reddit);
