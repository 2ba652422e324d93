/**
 * A registry of platforms, assembled from their modules: which platform a URL belongs to, the
 * host profiles (each platform's own, then the hosts without a platform), the settings groups
 * lib/config.ts reads, and the runner that gives a platform its settings and applies the failure
 * convention (lib/platforms/types.ts).
 *
 * lib/platforms/index.ts builds the service's registry from its list of platforms; a test builds
 * its own (`createRegistry([...PLATFORMS, extra])`) and passes it through the ports
 * (PreviewPorts.platforms) with a config loaded for the same list (`loadConfig(env, list)`).
 *
 * This module imports no platform and not the configuration: both import it.
 */

import type { CoreConfig } from '../core-settings.js';
import { type HostProfile, OTHER_HOST_PROFILES } from '../fetch/host-profiles.js';
import { FetchFailure } from '../fetch/safe-fetch.js';
import type { SettingsGroup } from '../settings.js';
import type { Platform, PlatformContext, PlatformMatch, PlatformPreview, PlatformSettingsValues } from './types.js';

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

/** What the pipeline gives a platform run: the context but for the platform's own parts, and the configuration with every platform's settings. */
export type PlatformRun = Omit<PlatformContext, 'config' | 'settings' | 'hostProfile'> & {
  config: CoreConfig & { platforms: PlatformSettingsValues };
};

/**
 * Runs a matched platform with its own settings and host profile. An upstream failure it throws
 * (FetchFailure) is the generic preview, as `undefined` is; anything else is a bug and propagates.
 */
export async function extractPlatform(url: URL, { platform, match }: MatchedPlatform, run: PlatformRun): Promise<PlatformPreview | undefined> {
  const settings = run.config.platforms[platform.name];
  if (platform.settings && !settings) throw new Error(`no settings for platform ${platform.name}: load the config with the same platforms as the registry`);
  try {
    return await platform.extract(url, match, {
      ...run,
      settings: settings ?? {},
      ...(platform.hostProfile ? { hostProfile: platform.hostProfile } : {}),
    });
  } catch (err) {
    if (err instanceof FetchFailure) return undefined;
    throw err;
  }
}
