/**
 * The platform registry: one line per platform, in match order. (An explicit list, because
 * bundling breaks directory scanning.) A new platform is one file plus one line here.
 */
import type { Platform, PlatformMatch } from './types.js';
import { microblog } from './microblog.js';

export const PLATFORMS: Platform[] = [
  microblog,
];

export function matchPlatform(url: URL): { platform: Platform; match: PlatformMatch } | undefined {
  for (const platform of PLATFORMS) {
    const match = platform.match(url);
    if (match) return { platform, match };
  }
  return undefined;
}
