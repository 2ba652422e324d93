/**
 * The platform registry: one line per platform, in match order. (An explicit list, because
 * bundling breaks directory scanning.) A new platform is one file plus one line here; its
 * settings (a Platform's `settings`) are read by lib/config.ts from this list, so the list keeps
 * each platform's own type (`as const`).
 */
import type { Platform, PlatformMatch } from './types.js';
import { videohost } from './videohost.js';
import { codehost } from './codehost.js';
import { forum } from './forum.js';
import { microblog } from './microblog.js';
import { photoshare } from './photoshare.js';
import { clips } from './clips.js';
import { retailer } from './retailer.js';
import { marketplace } from './marketplace.js';

export const PLATFORMS = [
  videohost,
  codehost,
  forum,
  microblog,
  photoshare,
  clips,
  retailer,
  marketplace,
] as const satisfies readonly Platform[];

export function matchPlatform(url: URL): { platform: Platform; match: PlatformMatch } | undefined {
  for (const platform of PLATFORMS) {
    const match = platform.match(url);
    if (match) return { platform, match };
  }
  return undefined;
}
