/**
 * `deny` on what is connected to, not only on names: the addresses a denied host resolves to are
 * denied for every name that resolves to them and for IP literals (`http://11.0.0.2/`,
 * `http://184549378/`, `http://[::ffff:11.0.0.2]/`), with the rule's path, if it has one, applied as
 * if the URL named the denied host. The guarded fetcher checks an IP literal before connecting and
 * every resolved address at connect time (`ruleCheckedLookup`), on every hop, sub-fetch and browser
 * request, direct or through the proxy.
 *
 * The named hosts of the `deny` rules are resolved on the first fetch that needs them and again once
 * their resolution is older than `refreshMs` (a minute), in the background; an address stays denied
 * until `keepMs` (ten minutes) after the last resolution that returned it, so a host that rotates
 * its addresses leaves no gap. A denied host that shares an address with other hosts (a CDN's, a
 * shared host's) denies them too: a rule means "never connect there". A wildcard rule
 * (`*.corp.example`) has no named host to resolve; its subdomains are denied by name.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LinkNotAllowedError } from '../errors.js';
import type { Resolver } from './address-guard.js';
import type { HostRule, HostRules } from './host-rules.js';

export const DENIED_ADDRESS_TIMES = { refreshMs: 60_000, keepMs: 10 * 60_000, resolveTimeoutMs: 2_000, maxHosts: 256 };

/** The forms one address is compared in: canonical text, and the IPv4 address an IPv6 form carries (mapped, NAT64, 6to4). */
export function addressKeys(ip: string): string[] {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return [];
  const addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv4') return [addr.toString()];
  const v6 = addr as ipaddr.IPv6;
  const keys = [v6.toNormalizedString()];
  const p = v6.parts;
  const v4 = (hi: number) => `${p[hi] >> 8}.${p[hi] & 0xff}.${p[hi + 1] >> 8}.${p[hi + 1] & 0xff}`;
  if (v6.isIPv4MappedAddress()) keys.push(v6.toIPv4Address().toString());
  else if (v6.match(ipaddr.IPv6.parseCIDR('64:ff9b::/96'))) keys.push(v4(6));
  else if (p[0] === 0x2002) keys.push(v4(1));
  return keys;
}

interface Seen {
  hosts: Set<string>;
  at: number;
}

/** The addresses of one table's denied hosts, as last resolved. */
export class DeniedAddresses {
  private readonly byAddress = new Map<string, Seen>();
  private resolvedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;

  constructor(
    readonly rules: HostRules,
    private readonly resolve: Resolver,
    private readonly now: () => number = Date.now,
    private readonly times = DENIED_ADDRESS_TIMES,
  ) {}

  /** The named hosts whose addresses include `ip` (none: the address is no denied host's). */
  async hostsAt(ip: string): Promise<string[]> {
    await this.fresh();
    const hosts = new Set<string>();
    const now = this.now();
    for (const key of addressKeys(ip)) {
      const seen = this.byAddress.get(key);
      if (seen && now - seen.at <= this.times.keepMs) for (const h of seen.hosts) hosts.add(h);
    }
    return [...hosts];
  }

  /** The deny rule that refuses `url` when connected at `ip` (the URL judged as each host that address is), or undefined. */
  async denyingRule(url: URL, ip: string): Promise<HostRule | undefined> {
    for (const host of await this.hostsAt(ip)) {
      const rule = this.rules.denies(url, host);
      if (rule) return rule;
    }
    return undefined;
  }

  /** Resolves the denied hosts when never done (awaited) or older than refreshMs (in the background). */
  private async fresh(): Promise<void> {
    const age = this.now() - this.resolvedAt;
    if (age < this.times.refreshMs) return;
    this.pending ??= this.resolveAll().finally(() => {
      this.pending = undefined;
    });
    if (this.resolvedAt === Number.NEGATIVE_INFINITY) await this.pending;
  }

  private async resolveAll(): Promise<void> {
    const hosts = this.rules.deniedHosts.slice(0, this.times.maxHosts);
    await Promise.all(hosts.map((h) => this.resolveOne(h)));
    this.resolvedAt = this.now();
  }

  private async resolveOne(host: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error('timeout')), this.times.resolveTimeoutMs);
      timer.unref?.();
    });
    try {
      const answers = await Promise.race([this.resolve(host), timeout]);
      const at = this.now();
      for (const a of answers)
        for (const key of addressKeys(a.address)) {
          const seen = this.byAddress.get(key) ?? { hosts: new Set<string>(), at };
          seen.hosts.add(host);
          seen.at = at;
          this.byAddress.set(key, seen);
        }
    } catch {
      // A denied name that does not resolve has no address to deny; its name is still denied.
    } finally {
      clearTimeout(timer);
    }
  }
}

const tables = new WeakMap<HostRules, WeakMap<Resolver, DeniedAddresses>>();

/** The denied addresses of a table, as a resolver sees them (one per table and resolver, shared by every fetcher). */
export function deniedAddressesOf(rules: HostRules, resolve: Resolver): DeniedAddresses | undefined {
  if (!rules.deniedHosts.length) return undefined;
  const byResolver = tables.get(rules) ?? new WeakMap<Resolver, DeniedAddresses>();
  tables.set(rules, byResolver);
  const denied = byResolver.get(resolve) ?? new DeniedAddresses(rules, resolve);
  byResolver.set(resolve, denied);
  return denied;
}

/** The refusal of an address a host rule denies (the rule named; the address stays in the logs). */
export function deniedAddressError(url: URL, rule: HostRule, address: string): LinkNotAllowedError {
  return new LinkNotAllowedError(
    `The link is not allowed: a host rule (${rule.pattern}=deny) refuses the address it connects to.`,
    { url: url.href, rule: rule.pattern },
    { hostname: url.hostname, address, reason: `host rule ${rule.pattern}=deny`, hostRule: rule.pattern },
  );
}

/**
 * The guarded lookup of one URL's request, with the denied addresses refused: every address the
 * guard passed is checked against the rules as the URL's path on each host the address is.
 */
export function ruleCheckedLookup(lookup: LookupFunction, denied: DeniedAddresses, url: URL): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number } | number | undefined, callback: (...args: unknown[]) => void) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    lookup(hostname, { ...opts, all: true }, (err, answers) => {
      if (err) return callback(err);
      const list = answers as unknown as LookupAddress[];
      Promise.all(list.map(async (a) => ({ a, rule: await denied.denyingRule(url, a.address) })))
        .then((checked) => {
          const hit = checked.find((c) => c.rule);
          if (hit?.rule) return callback(deniedAddressError(url, hit.rule, hit.a.address));
          if (opts.all) return callback(null, list);
          callback(null, list[0].address, list[0].family);
        })
        .catch((e) => callback(e));
    });
  }) as LookupFunction;
}
