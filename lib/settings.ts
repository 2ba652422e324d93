/**
 * The settings toolkit: how a setting is declared (its environment variable, its type, its
 * default, one line of docs) and how a group of them is read from an environment.
 *
 * lib/core-settings.ts declares the service's own settings; a platform module declares its own
 * next to its code (`const settings = defineSettings('<platform name>', 'Title', { ... })`, set
 * as the Platform's `settings`, read into `config.platforms.<name>` and given to the platform as
 * `ctx.settings`). lib/config.ts assembles both;
 * docs/configuration.md is generated from them (`npm run docs:config`).
 *
 * This module imports neither the config nor a platform: both import it.
 */
import * as v from 'valibot';

export class ConfigError extends Error {}

/** How a variable's text becomes a value, and what the docs say it accepts. */
export interface SettingType<T> {
  /** The validation of a set variable; its messages name the variable (`env`). */
  schema(env: string): v.GenericSchema<string, T>;
  /** The accepted values, as docs/configuration.md shows them. */
  allowed: string;
  /** A value as the docs show it (default: the value itself, `unset` when empty). */
  show?(value: T): string;
}

export interface Setting<T> {
  /** The environment variable. */
  env: string;
  type: SettingType<T>;
  /** The value when the variable is unset. */
  default: NoInfer<T>;
  /** One line for docs/configuration.md. */
  doc: string;
  /** The default as the docs show it, when the value alone says too little (e.g. "the npm package's binary"). */
  defaultDoc?: string;
  /** The value may hold credentials: an error about it never repeats it. */
  secret?: boolean;
}

/** Settings as a table: the key is the property the value is read under. */
export type SettingsTable<T> = { [K in keyof T]: Setting<T[K]> };

/** A named group of settings: a section of the core configuration, or one platform's own. */
export interface SettingsGroup<N extends string = string, T = Record<string, unknown>> {
  /** The section id; for a platform, its name (the key under `config.platforms`). */
  name: N;
  /** The section's heading in docs/configuration.md. */
  title: string;
  settings: SettingsTable<T>;
  /** Markdown shown under the section's table in docs/configuration.md (the actions of a setting, examples). */
  note?: string;
}

/** The values a table of settings gives. */
export type SettingsValues<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** The values of a group of settings. */
export type GroupValues<G extends SettingsGroup> = SettingsValues<G['settings']>;

/** Declares a group of settings; each value's type comes from its `type`, and the default is checked against it. `note`: markdown for the docs, under the table. */
export function defineSettings<const N extends string, T>(name: N, title: string, settings: SettingsTable<T>, note?: string): SettingsGroup<N, T> {
  return { name, title, settings, ...(note ? { note } : {}) };
}

export type Env = Record<string, string | undefined>;

/** Reads a group's settings from `env` (unset variables take their default); a bad value throws a ConfigError naming its variable. */
export function readSettings<G extends SettingsGroup>(group: G, env: Env): GroupValues<G> {
  const values: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(group.settings) as [string, Setting<unknown>][]) {
    const raw = env[setting.env];
    if (raw === undefined) {
      values[key] = setting.default;
      continue;
    }
    const result = v.safeParse(setting.type.schema(setting.env), raw, { abortPipeEarly: true });
    if (!result.success) {
      const issue = result.issues[0];
      throw new ConfigError(`Invalid configuration: ${issue.message}${setting.secret ? '' : ` (got ${JSON.stringify(issue.input)})`}`);
    }
    values[key] = result.output;
  }
  return values as GroupValues<G>;
}

// ---- Types -----------------------------------------------------------------------------------

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** true/false (also 1/0, yes/no, on/off, any case); empty is false. */
export function trueOrFalse(): SettingType<boolean> {
  return {
    allowed: '`true`, `false` (or `1`/`0`, `yes`/`no`, `on`/`off`)',
    schema: (env) =>
      v.pipe(
        v.string(),
        v.trim(),
        v.toLowerCase(),
        v.picklist([...TRUE, ...FALSE, ''], `${env} must be true or false`),
        v.transform((s) => TRUE.includes(s)),
      ),
  };
}

/** A whole number from `min` to `max`. */
export function int(min: number, max: number, show: (n: number) => string = String): SettingType<number> {
  return {
    allowed: `${show(min)} to ${show(max)}`,
    show,
    schema: (env) =>
      v.pipe(
        v.string(),
        v.trim(),
        v.regex(/^\d+$/, `${env} must be a whole number`),
        v.transform(Number),
        v.minValue(min, `${env} must be at least ${min}`),
        v.maxValue(max, `${env} must be at most ${max}`),
      ),
  };
}

/** `auto`, or a whole number from `min` to `max`. */
export function autoOrInt(min: number, max: number): SettingType<number | 'auto'> {
  return {
    allowed: `\`auto\`, or ${min} to ${max}`,
    schema: (env) =>
      v.pipe(
        v.string(),
        v.trim(),
        v.toLowerCase(),
        v.check(
          (s) => s === 'auto' || (/^\d+$/.test(s) && Number(s) >= min && Number(s) <= max),
          `${env} must be auto or a whole number from ${min} to ${max}`,
        ),
        v.transform((s) => (s === 'auto' ? ('auto' as const) : Number(s))),
      ),
  };
}

/** A byte count as the docs show it: in the largest binary unit it is a whole number of. */
function showBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return String(n);
}

/** A byte count from `min` to `max`. */
export function bytes(min: number, max: number): SettingType<number> {
  return int(min, max, showBytes);
}

/** The items of a comma-separated value, trimmed, empty ones dropped. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** A comma-separated list; items are trimmed and empty ones dropped. */
export function list(): SettingType<string[]> {
  return {
    allowed: 'comma-separated',
    schema: () => v.pipe(v.string(), v.transform(splitList)),
  };
}

/** An http(s) base URL; a trailing slash is dropped. */
export function httpUrl(): SettingType<string> {
  return {
    allowed: 'http(s) URL',
    schema: (env) =>
      v.pipe(
        v.string(),
        v.trim(),
        v.regex(/^https?:\/\/[^/]+/i, `${env} must be an http(s) URL`),
        v.transform((s) => s.replace(/\/+$/, '')),
      ),
  };
}

/** Text, trimmed (`trim: false` keeps it as given); `nonEmpty` refuses an empty value. */
export function text(options: { trim?: boolean; nonEmpty?: boolean; allowed?: string } = {}): SettingType<string> {
  const { trim = true, nonEmpty = false } = options;
  return {
    allowed: options.allowed ?? (nonEmpty ? 'non-empty text' : 'text'),
    schema: (env) =>
      v.pipe(
        v.string(),
        v.transform((s) => (trim ? s.trim() : s)),
        v.check((s) => !nonEmpty || s.length > 0, `${env} must not be empty`),
      ),
  };
}

/** Trimmed text, where empty is the same as unset (credentials: client ids, secrets). */
export function optionalText(): SettingType<string | undefined> {
  return {
    allowed: 'text',
    schema: () =>
      v.pipe(
        v.string(),
        v.trim(),
        v.transform((s) => s || undefined),
      ),
  };
}

/** One of `values`, exactly as written. */
export function oneOf<const V extends string>(values: readonly V[]): SettingType<V> {
  const names = values.map((x) => `\`${x}\``);
  return {
    allowed: names.join(', '),
    schema: (env) => v.pipe(v.string(), v.picklist(values, `${env} must be ${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`)),
  };
}

// ---- Several groups --------------------------------------------------------------------------

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The values of several groups, as one object (keys are unique across them: see `envNames`). */
export type GroupsValues<Gs extends readonly SettingsGroup[]> = UnionToIntersection<GroupValues<Gs[number]>> extends infer I ? { [K in keyof I]: I[K] } : never;

/** Reads several groups into one object. */
export function readGroups<const Gs extends readonly SettingsGroup[]>(groups: Gs, env: Env): GroupsValues<Gs> {
  return Object.assign({}, ...groups.map((g) => readSettings(g, env))) as GroupsValues<Gs>;
}

/** Each setting's variable by its key; throws when two settings share a key or a variable. */
export function envNames<const Gs extends readonly SettingsGroup[]>(groups: Gs): { readonly [K in keyof GroupsValues<Gs>]: string } {
  assertUniqueVariables(groups);
  const names: Record<string, string> = {};
  for (const group of groups) {
    for (const [key, setting] of Object.entries(group.settings) as [string, Setting<unknown>][]) {
      if (key in names) throw new Error(`setting ${key} is declared twice`);
      names[key] = setting.env;
    }
  }
  return names as { readonly [K in keyof GroupsValues<Gs>]: string };
}

/** Throws when two settings read the same variable. */
export function assertUniqueVariables(groups: readonly SettingsGroup[]): void {
  const seen = new Set<string>();
  for (const group of groups) {
    for (const setting of Object.values(group.settings) as Setting<unknown>[]) {
      if (seen.has(setting.env)) throw new Error(`${setting.env} is declared twice`);
      seen.add(setting.env);
    }
  }
}

/** Each setting's default by its key (the CDK constructs take theirs from here). */
export function settingDefaults<const Gs extends readonly SettingsGroup[]>(groups: Gs): GroupsValues<Gs> {
  const defaults: Record<string, unknown> = {};
  for (const group of groups) {
    for (const [key, setting] of Object.entries(group.settings) as [string, Setting<unknown>][]) defaults[key] = setting.default;
  }
  return defaults as GroupsValues<Gs>;
}
