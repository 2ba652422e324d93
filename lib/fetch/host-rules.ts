/**
 * The operator's host rules (LINKPREVIEW_HOST_RULES): an ordered table of `pattern=actions`, the
 * first rule whose pattern matches a URL deciding what is done with it. This module owns the
 * syntax, the parsing (a malformed rule is refused at start, named) and the matching; it imports
 * nothing, so the settings (lib/core-settings.ts) parse the variable with it.
 *
 * The table's users: the guarded fetcher refuses a `deny`ed URL at every hop, sub-fetches included
 * (lib/fetch/safe-fetch.ts); the proxy route sends `proxy` hosts to the proxy first
 * (lib/fetch/proxy-route.ts); the preview renders `render` pages and stores nothing for a
 * `metadata-only` link (lib/preview/render.ts, lib/preview/run.ts); the players leave out a `no-embed` host's
 * (lib/embed/address.ts). The former host lists (LINKPREVIEW_PROXY_HOSTS,
 * LINKPREVIEW_RENDER_HOSTS) are entries of the same table, after the operator's rules.
 */
import { normalizeHost } from '../host.js';

/** What a rule does with the URLs it matches. */
export const HOST_ACTIONS = ['deny', 'metadata-only', 'no-embed', 'proxy', 'render', 'allow'] as const;
export type HostAction = (typeof HOST_ACTIONS)[number];

/** Where a rule came from: the table's own variable, or one of the former host lists. */
export type HostRuleSource = 'LINKPREVIEW_HOST_RULES' | 'LINKPREVIEW_PROXY_HOSTS' | 'LINKPREVIEW_RENDER_HOSTS';

export interface HostRule {
  /** The pattern as written (`example.com`, `*.example.com`, `example.com/reset/`, `*`). */
  pattern: string;
  /** The host it names, normalized, without `*.` (empty for `*`). */
  host: string;
  /** `*.example.com`: the subdomains only; `example.com` matches itself and its subdomains. */
  subdomainsOnly: boolean;
  /** A path prefix as written (its case kept, for messages). */
  path?: string;
  /** The prefix as compared (`rulePath`): a URL matches when its own `rulePath` starts with it. */
  matchPath?: string;
  actions: readonly HostAction[];
  source: HostRuleSource;
}

const PATTERN = /^(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)(\/\S*)?$/i;

/** Decodes every %XX of a text once (UTF-8 where it is valid, else byte by byte). */
function decodeOnce(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
}

/**
 * A path as a rule compares it. Servers read one path in many spellings, and a rule must match
 * every spelling its host would serve: percent-encoding is decoded until nothing changes (at most
 * four rounds: `%2572` is `%72` is `r`, as a server that decodes twice reads it); a backslash is a
 * slash (IIS, many frameworks); each segment's `;` parameters are cut (Tomcat, Jetty, Spring);
 * empty segments (`//`) and dot segments are removed; and the case is folded, since IIS, ASP.NET,
 * macOS and Windows file systems and many routers are case-insensitive. Folding makes a rule match
 * more paths, never fewer: for `deny` that is the safe side.
 */
export function rulePath(path: string): string {
  let p = path;
  for (let i = 0; i < 4; i++) {
    const next = decodeOnce(p);
    if (next === p) break;
    p = next;
  }
  const segments = p.replace(/\\/g, '/').split('/');
  const trailing = segments.length > 1 && segments[segments.length - 1].split(';', 1)[0] === '';
  const out: string[] = [];
  for (const raw of segments) {
    const seg = raw.split(';', 1)[0];
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const joined = `/${out.join('/')}`;
  return (trailing && out.length ? `${joined}/` : joined).toLowerCase();
}

/** Why a path prefix can never match a URL's path, or undefined when it can. */
function unmatchablePath(path: string): string | undefined {
  if (/[?#]/.test(path)) return 'a path prefix never holds "?" or "#" (the query and fragment are not matched)';
  return undefined;
}

/** One rule's text as a rule, or the reason it is malformed. */
function parseRule(text: string): HostRule | string {
  const eq = text.indexOf('=');
  if (eq < 0) return `rule "${text}" has no "=": write pattern=actions`;
  const written = text.slice(0, eq).trim();
  const m = PATTERN.exec(written);
  if (!m || (m[1] === '*' && m[4])) return `rule "${text}": "${written.toLowerCase()}" is not a host, a *. wildcard, a host with a path prefix or *`;
  const why = m[4] ? unmatchablePath(m[4]) : undefined;
  if (why) return `rule "${text}" can never match: ${why}`;
  const pattern = `${m[1].toLowerCase()}${m[4] ?? ''}`;
  const actions = text
    .slice(eq + 1)
    .split(',')
    .map((a) => a.trim().toLowerCase())
    .filter(Boolean);
  if (!actions.length) return `rule "${text}" has no action`;
  const unknown = actions.find((a) => !(HOST_ACTIONS as readonly string[]).includes(a));
  if (unknown) return `rule "${text}": unknown action "${unknown}" (${HOST_ACTIONS.join(', ')})`;
  if (actions.includes('deny') && actions.length > 1) return `rule "${text}": deny goes alone`;
  const wildcard = !!m[2];
  return {
    pattern,
    host: m[1] === '*' ? '' : normalizeHost(m[1].replace(/^\*\./, '')),
    subdomainsOnly: wildcard,
    ...(m[4] ? { path: m[4], matchPath: rulePath(m[4]) } : {}),
    actions: [...new Set(actions)] as HostAction[],
    source: 'LINKPREVIEW_HOST_RULES',
  };
}

/** True when every URL `inner` matches, `outer` matches too (so a rule `inner` after `outer` is never reached). */
function covers(outer: HostRule, inner: HostRule): boolean {
  if (outer.host !== '') {
    if (inner.host === '') return false;
    const under = inner.host.endsWith(`.${outer.host}`);
    const same = inner.host === outer.host;
    if (!(under || (same && (!outer.subdomainsOnly || inner.subdomainsOnly)))) return false;
  }
  if (!outer.matchPath) return true;
  return !!inner.matchPath && pathUnder(inner.matchPath, outer.matchPath);
}

/** True when a compared path lies under a compared prefix (`/reset/` covers `/reset/x` and `/reset`). */
function pathUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) || (prefix.endsWith('/') && path === prefix.slice(0, -1));
}

/** The rules of LINKPREVIEW_HOST_RULES' text (`;`-separated, empty ones skipped), or the first malformed or unreachable rule's reason. */
export function readHostRules(text: string): HostRule[] | string {
  const rules: HostRule[] = [];
  for (const part of text.split(';')) {
    if (!part.trim()) continue;
    const rule = parseRule(part.trim());
    if (typeof rule === 'string') return rule;
    const before = rules.find((r) => covers(r, rule));
    if (before) return `rule "${part.trim()}" can never match: the earlier rule "${before.pattern}=${before.actions.join(',')}" decides every URL it names`;
    rules.push(rule);
  }
  return rules;
}

/** The rules as the variable writes them. */
export function showHostRules(rules: readonly HostRule[]): string {
  return rules.map((r) => `${r.pattern}=${r.actions.join(',')}`).join(';');
}

/** A former host list's entries as rules of one action (`*.x` and `.x` match x and its subdomains, as they did). */
export function listedHostRules(hosts: readonly string[], action: 'proxy' | 'render', source: HostRuleSource): HostRule[] {
  return hosts
    .map((h) => ({ pattern: h, host: normalizeHost(h.trim()).replace(/^\*?\./, ''), subdomainsOnly: false, actions: [action], source }))
    .filter((r) => r.host !== '');
}

/**
 * The operator's rules with a proxy host list merged in as rules of the table itself, giving the
 * same verdicts as the list's entries after the rules (`hostRulesOf`): what the CDK construct
 * writes for its proxy's `hosts`, so no deployment it makes sets LINKPREVIEW_PROXY_HOSTS. A rule
 * whose URLs all lie on a listed host (or its subdomains) gets `proxy`; a rule that covers more
 * gets, just before it, a copy narrowed to each listed host inside it, with `proxy`; a `deny` rule
 * is left as it is; then `<host>=proxy` for the URLs no rule matches.
 */
export function withProxyHosts(rules: readonly HostRule[], hosts: readonly string[]): HostRule[] {
  const listed = [...new Set(listedHostRules(hosts, 'proxy', 'LINKPREVIEW_HOST_RULES').map((r) => r.host))];
  const under = (host: string, parent: string) => host.endsWith(`.${parent}`);
  const out: HostRule[] = [];
  // A rule an earlier one decides for already is left out (it could never match, and would be refused as such).
  const push = (rule: HostRule) => {
    if (!out.some((r) => covers(r, rule))) out.push(rule);
  };
  for (const rule of rules) {
    if (rule.actions.includes('deny') || rule.actions.includes('proxy')) {
      push(rule);
      continue;
    }
    const actions: HostAction[] = [...rule.actions, 'proxy'];
    // Every URL of the rule on a listed host: the rule itself proxies.
    if (rule.host !== '' && listed.some((h) => rule.host === h || under(rule.host, h))) {
      push({ ...rule, actions });
      continue;
    }
    // A listed host inside the rule's hosts: its own copy of the rule first.
    for (const h of listed)
      if (rule.host === '' || under(h, rule.host)) push({ ...rule, pattern: `${h}${rule.path ?? ''}`, host: h, subdomainsOnly: false, actions });
    push(rule);
  }
  for (const h of listed) push({ pattern: h, host: h, subdomainsOnly: false, actions: ['proxy'], source: 'LINKPREVIEW_HOST_RULES' });
  return out;
}

/** `path`: the URL's path as compared (`rulePath`). */
function matches(rule: HostRule, host: string, path: string): boolean {
  if (rule.host !== '') {
    const sub = host.endsWith(`.${rule.host}`);
    if (!(sub || (!rule.subdomainsOnly && host === rule.host))) return false;
  }
  return !rule.matchPath || pathUnder(path, rule.matchPath);
}

/** What the table says of one URL: the rule that decided, and the actions that apply. */
export interface HostVerdict {
  /** The first of the operator's rules that matched (undefined: none did). */
  rule?: HostRule;
  actions: ReadonlySet<HostAction>;
  /** Each action's rule, for the reason a log or a record gives. */
  by: ReadonlyMap<HostAction, HostRule>;
}

const NONE: HostVerdict = { actions: new Set(), by: new Map() };

/**
 * The table: the operator's rules in order, then the former lists' entries. The first of the
 * operator's rules that matches decides; a former list's entry adds its action (`proxy`,
 * `render`) to whatever that decided, unless it is `deny`.
 */
export class HostRules {
  constructor(
    readonly rules: readonly HostRule[],
    readonly listed: readonly HostRule[] = [],
  ) {}

  /** True when the table has no rule at all. */
  get empty(): boolean {
    return this.rules.length === 0 && this.listed.length === 0;
  }

  /** What the table says of a URL; `asHost`: judge it as if its host were this one (an address's named host). */
  verdict(target: URL | string, asHost?: string): HostVerdict {
    if (this.empty) return NONE;
    const url = typeof target === 'string' ? parsedUrl(target) : target;
    if (!url) return NONE;
    const host = normalizeHost(asHost ?? url.hostname);
    const path = rulePath(url.pathname);
    const rule = this.rules.find((r) => matches(r, host, path));
    const by = new Map<HostAction, HostRule>();
    for (const a of rule?.actions ?? []) by.set(a, rule as HostRule);
    if (!by.has('deny')) for (const r of this.listed) if (matches(r, host, path)) for (const a of r.actions) if (!by.has(a)) by.set(a, r);
    return { rule, actions: new Set(by.keys()), by };
  }

  /** The named hosts of the `deny` rules (no wildcard, no `*`): the hosts whose addresses are denied too. */
  get deniedHosts(): string[] {
    return [...new Set(this.rules.filter((r) => r.actions.includes('deny') && r.host !== '' && !r.subdomainsOnly).map((r) => r.host))];
  }

  /** The rule that denies the URL (judged as `asHost` when given), or undefined. */
  denies(target: URL | string, asHost?: string): HostRule | undefined {
    return this.verdict(target, asHost).by.get('deny');
  }

  /** True when `action` applies to the URL. */
  has(target: URL | string, action: HostAction): boolean {
    return this.verdict(target).actions.has(action);
  }
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** The settings the table is made of. */
export interface HostRuleSettings {
  hostRules?: readonly HostRule[];
  proxyHosts?: readonly string[];
  renderHosts?: readonly string[];
}

const tables = new WeakMap<object, HostRules>();

/** The table a configuration describes (built once per configuration object). */
export function hostRulesOf(settings: HostRuleSettings): HostRules {
  let table = tables.get(settings);
  if (!table) {
    table = new HostRules(settings.hostRules ?? [], [
      ...listedHostRules(settings.proxyHosts ?? [], 'proxy', 'LINKPREVIEW_PROXY_HOSTS'),
      ...listedHostRules(settings.renderHosts ?? [], 'render', 'LINKPREVIEW_RENDER_HOSTS'),
    ]);
    tables.set(settings, table);
  }
  return table;
}

/** The start-up warnings of the former host lists: each is read, and the LINKPREVIEW_HOST_RULES entries to write instead. */
export function listedHostWarnings(env: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  for (const [name, action] of [
    ['LINKPREVIEW_PROXY_HOSTS', 'proxy'],
    ['LINKPREVIEW_RENDER_HOSTS', 'render'],
  ] as const) {
    const hosts = (env[name] ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    if (!hosts.length) continue;
    const form = hosts.map((h) => `${h.replace(/^\*?\./, '')}=${action}`).join(';');
    lines.push(`${name} is still read, as entries of the host rules: set LINKPREVIEW_HOST_RULES="${form}" instead`);
  }
  return lines;
}
