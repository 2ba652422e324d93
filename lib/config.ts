/**
 * The one place configuration is read. `loadConfig(env)` is pure (tests pass their own env);
 * it validates every variable and throws a ConfigError naming the bad one, so a misconfigured
 * deployment fails at start-up instead of on the first request.
 *
 * The settings are declared once each, with their variable, type, default and docs: the core ones
 * in lib/core-settings.ts, a platform's own in its site's folder (its `settings`), read here into
 * `config.platforms.<name>` and given to the platform as `ctx.settings`. docs/configuration.md is
 * generated from the same declarations (`npm run docs:config`).
 *
 * This module sits above the platforms (it reads their list). A module the platforms import takes
 * `CoreConfig` (lib/core-settings.ts), never `Config`: `npm run lint:cycles` fails otherwise.
 */
import { CORE_GROUPS, type CoreConfig } from './core-settings.js';
import { listedHostWarnings } from './fetch/host-rules.js';
import { PLATFORMS } from './platforms/index.js';
import { platformSettingsGroups } from './platforms/registry.js';
import type { Platform } from './platforms/types.js';
import { assertUniqueVariables, type Env, type GroupValues, readGroups, readSettings, type SettingsGroup } from './settings.js';

export { CORE_GROUPS, DEFAULT_USER_AGENT, DEFAULTS, ENV } from './core-settings.js';
export { ConfigError } from './settings.js';

/** The settings groups the registered platforms declare (a platform without settings declares none). */
type DeclaredGroup<G> = G extends SettingsGroup<infer N> ? (string extends N ? never : G) : never;
type PlatformGroups = DeclaredGroup<NonNullable<(typeof PLATFORMS)[number]['settings']>>;

/** Each registered platform's settings by its name. */
export type PlatformsConfig = { [G in PlatformGroups as G['name']]: GroupValues<G> };

export interface Config extends CoreConfig {
  platforms: PlatformsConfig;
}

/** The registered platforms' settings groups, in the registry's order. */
export const PLATFORM_GROUPS: readonly SettingsGroup[] = platformSettingsGroups(PLATFORMS);

// A variable read by two settings (a platform reusing a core name) is a mistake: it fails at load.
assertUniqueVariables([...CORE_GROUPS, ...PLATFORM_GROUPS]);

/**
 * The configuration from `env`. `platforms`: the platforms whose settings are read (a test that
 * registers an extra platform passes the same list it builds its registry from).
 */
export function loadConfig(env: Env = process.env, platforms: readonly Platform[] = PLATFORMS): Config {
  const groups = platforms === PLATFORMS ? PLATFORM_GROUPS : platformSettingsGroups(platforms);
  if (groups !== PLATFORM_GROUPS) assertUniqueVariables([...CORE_GROUPS, ...groups]);
  const values: Record<string, unknown> = {};
  for (const group of groups) values[group.name] = readSettings(group, env);
  return { ...readGroups(CORE_GROUPS, env), platforms: values as PlatformsConfig };
}

/** What a server or a Lambda logs once at start about its environment: a former host list (LINKPREVIEW_PROXY_HOSTS, LINKPREVIEW_RENDER_HOSTS) and the host rules to write instead. */
export function configWarnings(env: Env = process.env): string[] {
  return listedHostWarnings(env);
}
