/**
 * The one place configuration is read. `loadConfig(env)` is pure (tests pass their own env);
 * it validates every variable and throws a ConfigError naming the bad one, so a misconfigured
 * deployment fails at start-up instead of on the first request.
 *
 * The settings are declared once each, with their variable, type, default and docs: the core ones
 * in lib/core-settings.ts, a platform's own in its module (its `settings`), read here as
 * `config.platforms.<name>`. docs/configuration.md is generated from the same declarations
 * (`npm run docs:config`).
 */
import { CORE_GROUPS, type CoreConfig } from './core-settings.js';
import { PLATFORMS } from './platforms/index.js';
import { assertUniqueVariables, readGroups, readSettings, type Env, type GroupValues, type SettingsGroup } from './settings.js';

export { ConfigError } from './settings.js';
export { CORE_GROUPS, DEFAULT_USER_AGENT, ENV } from './core-settings.js';

/** The settings groups the registered platforms declare (a platform without settings declares none). */
type DeclaredGroup<G> = G extends SettingsGroup<infer N> ? (string extends N ? never : G) : never;
type PlatformGroups = DeclaredGroup<NonNullable<(typeof PLATFORMS)[number]['settings']>>;

/** Each registered platform's settings by its name. */
export type PlatformsConfig = { [G in PlatformGroups as G['name']]: GroupValues<G> };

export interface Config extends CoreConfig {
  platforms: PlatformsConfig;
}

/** The registered platforms' settings groups (a platform's group is named as the platform). */
export const PLATFORM_GROUPS: readonly SettingsGroup[] = PLATFORMS.flatMap((platform) => {
  if (!platform.settings) return [];
  if (platform.settings.name !== platform.name) throw new Error(`platform ${platform.name} names its settings ${platform.settings.name}`);
  return [platform.settings];
});

// A variable read by two settings (a platform reusing a core name) is a mistake: it fails at load.
assertUniqueVariables([...CORE_GROUPS, ...PLATFORM_GROUPS]);

export function loadConfig(env: Env = process.env): Config {
  const platforms: Record<string, unknown> = {};
  for (const group of PLATFORM_GROUPS) platforms[group.name] = readSettings(group, env);
  return { ...readGroups(CORE_GROUPS, env), platforms: platforms as PlatformsConfig };
}
