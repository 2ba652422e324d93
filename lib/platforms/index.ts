/**
 * The service's platforms, in match order: an explicit list, because bundling breaks directory
 * scanning. A site is one folder under lib/platforms/ named after it (youtube/, github/, ...),
 * whose index.ts exports its Platform (URL patterns, host profile, settings, the record objects
 * it builds: see ./types.ts), and its entry here; the registry (host profiles, matching), the
 * configuration (lib/config.ts reads each platform's settings) and docs/configuration.md are
 * assembled from this list. It keeps each platform's own type (`as const`), so
 * `Config['platforms']` knows every platform's settings. Adding a site: docs/platforms.md.
 */

import { amazon } from './amazon/index.js';
import { etsy } from './etsy/index.js';
import { github } from './github/index.js';
import { instagram } from './instagram/index.js';
import { reddit } from './reddit/index.js';
import { createRegistry } from './registry.js';
import { tiktok } from './tiktok/index.js';
import type { Platform } from './types.js';
import { x } from './x/index.js';
import { youtube } from './youtube/index.js';

export const PLATFORMS = [youtube, github, reddit, x, instagram, tiktok, amazon, etsy] as const satisfies readonly Platform[];

/** The registry of PLATFORMS: what the pipeline uses unless its ports name another (tests). */
export const PLATFORM_REGISTRY = createRegistry(PLATFORMS);
