/**
 * The SSRF guard's rules, as pure functions: which addresses, hosts, schemes and ports a
 * fetch may reach. The fetcher applies them to every hop's URL (IP literals never go through
 * DNS) and, through `guardedLookup`, to every address DNS returns at connect time: the socket
 * connects to exactly the address that was checked, so DNS rebinding cannot slip past.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface GuardPolicy {
  /** Opens private/loopback addresses and every port (tests, local development). */
  allowPrivateNetworks: boolean;
  /** Ports allowed besides 80 and 443. */
  allowedPorts: number[];
  /**
   * Exact addresses treated as public. Code-only (never read from the environment): tests use
   * it to let one loopback fixture act as a "public" host while every other private address
   * stays forbidden.
   */
  trustedAddresses?: string[];
}

type Range = [string, string];

/** IPv4 ranges no link may reach, with the name reported. */
const FORBIDDEN_V4: Range[] = [
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade-nat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'ietf-protocol'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4-relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

/** IPv6 ranges that are forbidden outright (ranges that embed an IPv4 address are handled apart). */
const FORBIDDEN_V6: Range[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'ipv4-compatible'],
  ['::ffff:0:0:0/96', 'ipv4-translated'],
  ['64:ff9b:1::/48', 'nat64-local'],
  ['100::/64', 'discard'],
  ['2001::/32', 'teredo'],
  ['2001:db8::/32', 'documentation'],
  ['2001:10::/28', 'orchid'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const parsedV4 = FORBIDDEN_V4.map(([cidr, name]) => [ipaddr.IPv4.parseCIDR(cidr), name] as const);
const parsedV6 = FORBIDDEN_V6.map(([cidr, name]) => [ipaddr.IPv6.parseCIDR(cidr), name] as const);
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');
const MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');

export type Verdict = { allowed: true } | { allowed: false; reason: string };

function v4Verdict(addr: ipaddr.IPv4, via = ''): Verdict {
  for (const [range, name] of parsedV4) {
    if (addr.match(range)) return { allowed: false, reason: `${name}${via}` };
  }
  return { allowed: true };
}

function embeddedV4(parts: number[], hi: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([parts[hi] >> 8, parts[hi] & 0xff, parts[hi + 1] >> 8, parts[hi + 1] & 0xff]);
}

/** Classifies one IP address (v4 or v6 text, no brackets). Unparseable input is forbidden. */
export function classifyAddress(ip: string, policy?: Pick<GuardPolicy, 'trustedAddresses'>): Verdict {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return { allowed: false, reason: 'not-an-ip-address' };
  if (policy?.trustedAddresses?.includes(text)) return { allowed: true };
  const addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv4') return v4Verdict(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  if (v6.match(MAPPED)) return v4Verdict(v6.toIPv4Address(), ' (ipv4-mapped)');
  if (v6.match(NAT64)) return v4Verdict(embeddedV4(v6.parts, 6), ' (nat64)');
  if (v6.match(SIX_TO_FOUR)) return v4Verdict(embeddedV4(v6.parts, 1), ' (6to4)');
  for (const [range, name] of parsedV6) {
    if (v6.match(range)) return { allowed: false, reason: name };
  }
  return { allowed: true };
}

/** True when a URL hostname is an IP literal (WHATWG URL has already normalised 0x7f.1, 2130706433, ...). */
export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(hostname.replace(/^\[|\]$/g, ''));
}

const LOCAL_NAMES = /(^|\.)localhost\.?$|(^|\.)localdomain\.?$|^ip6-(localhost|loopback)$/i;

export function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/**
 * Checks a URL before any connection: scheme, port, and the host when it is an IP literal or a
 * local name. Names that need DNS are checked again by `guardedLookup` at connect time.
 */
export function checkUrl(url: URL, policy: GuardPolicy): Verdict {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { allowed: false, reason: `scheme ${url.protocol.replace(':', '')} is not allowed` };
  }
  if (policy.allowPrivateNetworks) return { allowed: true };
  const port = url.port ? Number(url.port) : defaultPort(url.protocol);
  if (port !== 80 && port !== 443 && !policy.allowedPorts.includes(port)) {
    return { allowed: false, reason: `port ${port} is not allowed` };
  }
  const host = url.hostname;
  if (isIpLiteral(host)) {
    const verdict = classifyAddress(host, policy);
    return verdict.allowed ? verdict : { allowed: false, reason: `address ${host} is ${verdict.reason}` };
  }
  if (LOCAL_NAMES.test(host)) return { allowed: false, reason: `host ${host} is a local name` };
  return { allowed: true };
}

export class AddressNotAllowedError extends Error {
  readonly code = 'ELINKNOTALLOWED';
  constructor(readonly hostname: string, readonly address: string, readonly reason: string) {
    super(`${hostname} resolves to ${address} (${reason}), which is not allowed`);
  }
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for sockets that resolves every address of a name and refuses the connection if
 * any of them is forbidden (a mix of public and private addresses is refused as a whole).
 */
export function guardedLookup(policy: GuardPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions | number | undefined, callback: (...args: unknown[]) => void) => {
    const opts: dns.LookupOptions = typeof options === 'number' ? { family: options } : options ?? {};
    resolve(hostname)
      .then((all) => {
        let addresses = all;
        if (opts.family === 4 || opts.family === 6) addresses = all.filter((a) => a.family === opts.family);
        if (addresses.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          callback(err);
          return;
        }
        if (!policy.allowPrivateNetworks) {
          for (const a of all) {
            const verdict = classifyAddress(a.address, policy);
            if (!verdict.allowed) {
              callback(new AddressNotAllowedError(hostname, a.address, verdict.reason));
              return;
            }
          }
        }
        if (opts.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })
      .catch((err) => callback(err));
  }) as LookupFunction;
}
