/**
 * The service's platforms, in match order: an explicit list, because bundling breaks directory
 * scanning. A new platform is its module (URL patterns, host profile, settings, record objects:
 * see ./types.ts) and its entry here; the registry (host profiles, matching), the configuration
 * (lib/config.ts reads each platform's settings) and docs/configuration.md are assembled from this
 * list. It keeps each platform's own type (`as const`), so `Config['platforms']` knows every
 * platform's settings.
 */

import { clips } from './clips.js';
import { codehost } from './codehost.js';
import { forum } from './forum.js';
import { marketplace } from './marketplace.js';
import { microblog } from './microblog.js';
import { photoshare } from './photoshare.js';
import { createRegistry } from './registry.js';
import { retailer } from './retailer.js';
import type { Platform } from './types.js';
import { videohost } from './videohost.js';

export const PLATFORMS = [videohost, codehost, forum, microblog, photoshare, clips, retailer, marketplace] as const satisfies readonly Platform[];

/** The registry of PLATFORMS: what the pipeline uses unless its ports name another (tests). */
export const PLATFORM_REGISTRY = createRegistry(PLATFORMS);
