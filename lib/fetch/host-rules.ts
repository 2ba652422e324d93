/**
 * The operator's host rules (LINKPREVIEW_HOST_RULES): an ordered table of `pattern=actions`, the
 * first rule whose pattern matches a URL deciding what is done with it. This module owns the
 * syntax, the parsing (a malformed rule is refused at start, named) and the matching; it imports
 * nothing, so the settings (lib/core-settings.ts) parse the variable with it.
 *
 * The table's users: the guarded fetcher refuses a `deny`ed URL at every hop, sub-fetches included
 * (lib/fetch/safe-fetch.ts); the proxy route sends `proxy` hosts to the proxy first
 * (lib/fetch/proxy-route.ts); the preview renders `render` pages and stores nothing for a
 * `metadata-only` link (lib/preview.ts); the players leave out a `no-embed` host's
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
  /** A path prefix the URL's path must start with. */
  path?: string;
  actions: readonly HostAction[];
  source: HostRuleSource;
}

const PATTERN = /^(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)(\/\S*)?$/;

/** One rule's text as a rule, or the reason it is malformed. */
function parseRule(text: string): HostRule | string {
  const eq = text.indexOf('=');
  if (eq < 0) return `rule "${text}" has no "=": write pattern=actions`;
  const pattern = text.slice(0, eq).trim().toLowerCase();
  const m = PATTERN.exec(pattern);
  if (!m || (m[1] === '*' && m[4])) return `rule "${text}": "${pattern}" is not a host, a *. wildcard, a host with a path prefix or *`;
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
    ...(m[4] ? { path: m[4] } : {}),
    actions: [...new Set(actions)] as HostAction[],
    source: 'LINKPREVIEW_HOST_RULES',
  };
}

/** The rules of LINKPREVIEW_HOST_RULES' text (`;`-separated, empty ones skipped), or the first malformed rule's reason. */
export function readHostRules(text: string): HostRule[] | string {
  const rules: HostRule[] = [];
  for (const part of text.split(';')) {
    if (!part.trim()) continue;
    const rule = parseRule(part.trim());
    if (typeof rule === 'string') return rule;
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
  for (const rule of rules) {
    if (rule.actions.includes('deny') || rule.actions.includes('proxy')) {
      out.push(rule);
      continue;
    }
    const actions: HostAction[] = [...rule.actions, 'proxy'];
    // Every URL of the rule on a listed host: the rule itself proxies.
    if (rule.host !== '' && listed.some((h) => rule.host === h || under(rule.host, h))) {
      out.push({ ...rule, actions });
      continue;
    }
    // A listed host inside the rule's hosts: its own copy of the rule first.
    for (const h of listed)
      if (rule.host === '' || under(h, rule.host)) out.push({ ...rule, pattern: `${h}${rule.path ?? ''}`, host: h, subdomainsOnly: false, actions });
    out.push(rule);
  }
  for (const h of listed) out.push({ pattern: h, host: h, subdomainsOnly: false, actions: ['proxy'], source: 'LINKPREVIEW_HOST_RULES' });
  return out;
}

function matches(rule: HostRule, host: string, path: string): boolean {
  if (rule.host !== '') {
    const sub = host.endsWith(`.${rule.host}`);
    if (!(sub || (!rule.subdomainsOnly && host === rule.host))) return false;
  }
  return !rule.path || path.startsWith(rule.path);
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

  verdict(target: URL | string): HostVerdict {
    if (this.empty) return NONE;
    const url = typeof target === 'string' ? safeUrl(target) : target;
    if (!url) return NONE;
    const host = normalizeHost(url.hostname);
    const rule = this.rules.find((r) => matches(r, host, url.pathname));
    const by = new Map<HostAction, HostRule>();
    for (const a of rule?.actions ?? []) by.set(a, rule as HostRule);
    if (!by.has('deny')) for (const r of this.listed) if (matches(r, host, url.pathname)) for (const a of r.actions) if (!by.has(a)) by.set(a, r);
    return { rule, actions: new Set(by.keys()), by };
  }

  /** The rule that denies the URL, or undefined. */
  denies(target: URL | string): HostRule | undefined {
    return this.verdict(target).by.get('deny');
  }

  /** True when `action` applies to the URL. */
  has(target: URL | string, action: HostAction): boolean {
    return this.verdict(target).actions.has(action);
  }
}

function safeUrl(text: string): URL | undefined {
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
