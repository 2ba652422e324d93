/**
 * A registry of platforms, assembled from their modules: which platform a URL belongs to, the
 * host profiles (each platform's own, then the hosts without a platform) and the settings groups
 * lib/config.ts reads. Running a matched platform (its settings, the failure convention of
 * lib/platforms/types.ts) is ./run.ts.
 *
 * lib/platforms/index.ts builds the service's registry from its list of platforms; a test builds
 * its own (`createRegistry([...PLATFORMS, extra])`) and passes it through the ports
 * (PreviewPorts.platforms) with a config loaded for the same list (`loadConfig(env, list)`).
 *
 * This module imports no platform and not the configuration: both import it.
 */

import { type HostProfile, OTHER_HOST_PROFILES } from '../fetch/host-profiles.js';
import type { SettingsGroup } from '../settings.js';
import type { Platform, PlatformMatch } from './types.js';

export interface MatchedPlatform {
  platform: Platform;
  match: PlatformMatch;
}

export interface PlatformRegistry {
  /** The platforms, in match order. */
  readonly platforms: readonly Platform[];
  /** The host profiles: each platform's own, then OTHER_HOST_PROFILES. */
  readonly hostProfiles: readonly HostProfile[];
  /** The first platform whose URL patterns match `url`; none for a string that is not a URL. */
  match(url: URL | string): MatchedPlatform | undefined;
}

export function createRegistry(platforms: readonly Platform[]): PlatformRegistry {
  const names = new Set<string>();
  for (const p of platforms) {
    if (names.has(p.name)) throw new Error(`platform ${p.name} is registered twice`);
    names.add(p.name);
  }
  return {
    platforms,
    hostProfiles: [...platforms.flatMap((p) => (p.hostProfile ? [p.hostProfile] : [])), ...OTHER_HOST_PROFILES],
    match(url) {
      let u: URL;
      try {
        u = typeof url === 'string' ? new URL(url) : url;
      } catch {
        return undefined;
      }
      for (const platform of platforms) {
        const match = platform.match(u);
        if (match) return { platform, match };
      }
      return undefined;
    },
  };
}

/** The platforms' settings groups, for lib/config.ts to read (a platform's group is named as the platform). */
export function platformSettingsGroups(platforms: readonly Platform[]): SettingsGroup[] {
  return platforms.flatMap((platform) => {
    if (!platform.settings) return [];
    if (platform.settings.name !== platform.name) throw new Error(`platform ${platform.name} names its settings ${platform.settings.name}`);
    return [platform.settings];
  });
}
