/**
 * The SSRF guard's rules, as pure functions: which addresses, hosts, schemes and ports a
 * fetch may reach. The fetcher applies them to every hop's URL (IP literals never go through
 * DNS) and, through `guardedLookup`, to every address DNS returns at connect time: the socket
 * connects to exactly the address that was checked, so DNS rebinding cannot slip past.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LinkNotAllowedError } from '../errors.js';

export interface GuardPolicy {
  /**
   * Opens loopback and private addresses (RFC 1918, unique-local fc00::/7, carrier-grade NAT)
   * and every port (tests, local development). Never link-local or cloud metadata addresses.
   */
  allowPrivateNetworks: boolean;
  /**
   * Opens this machine's loopback addresses (127.0.0.0/8, ::1, localhost), on any port: the
   * narrow setting for local development. Nothing else.
   */
  allowLoopback?: boolean;
  /** Ports allowed besides 80 and 443. */
  allowedPorts: number[];
  /**
   * Exact addresses treated as public. Code-only (never read from the environment): tests use
   * it to let one loopback fixture act as a "public" host while every other private address
   * stays forbidden.
   */
  trustedAddresses?: string[];
}

/**
 * Which setting may open a range: 'loopback' (LINKPREVIEW_ALLOW_LOOPBACK or
 * LINKPREVIEW_ALLOW_PRIVATE_NETWORKS), 'private' (LINKPREVIEW_ALLOW_PRIVATE_NETWORKS); none:
 * no setting opens it (link-local, cloud metadata, and everything else on these lists).
 */
type Opener = 'loopback' | 'private';
type Range = [cidr: string, name: string, opener?: Opener];

/**
 * IPv4 ranges no link may reach, with the name reported (in logs only). First match wins, so
 * the metadata addresses come before the ranges that contain them.
 */
const FORBIDDEN_V4: Range[] = [
  ['169.254.169.254/32', 'metadata'], // AWS, GCP, Azure, OpenStack instance metadata
  ['169.254.170.2/32', 'metadata'], // ECS task metadata and credentials
  ['169.254.170.23/32', 'metadata'], // EKS Pod Identity credentials
  ['100.100.100.200/32', 'metadata'], // Alibaba Cloud instance metadata
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private', 'private'],
  ['100.64.0.0/10', 'carrier-grade-nat', 'private'],
  ['127.0.0.0/8', 'loopback', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private', 'private'],
  ['192.0.0.0/24', 'ietf-protocol'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4-relay'],
  ['192.168.0.0/16', 'private', 'private'],
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
  ['::1/128', 'loopback', 'loopback'],
  ['::/96', 'ipv4-compatible'],
  ['::ffff:0:0:0/96', 'ipv4-translated'],
  ['64:ff9b:1::/48', 'nat64-local'],
  ['100::/64', 'discard'],
  ['2001::/32', 'teredo'],
  ['2001:db8::/32', 'documentation'],
  ['2001:10::/28', 'orchid'],
  ['fd00:ec2::/32', 'metadata'], // AWS: instance metadata fd00:ec2::254, DNS ::253, time ::123
  ['fc00::/7', 'unique-local', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const parsedV4 = FORBIDDEN_V4.map(([cidr, name, opener]) => [ipaddr.IPv4.parseCIDR(cidr), name, opener] as const);
const parsedV6 = FORBIDDEN_V6.map(([cidr, name, opener]) => [ipaddr.IPv6.parseCIDR(cidr), name, opener] as const);
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');
const MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');

export type Verdict = { allowed: true } | { allowed: false; reason: string };

/** The settings that open ranges, as far as address classification goes. */
export type AddressPolicy = Partial<Pick<GuardPolicy, 'allowPrivateNetworks' | 'allowLoopback' | 'trustedAddresses'>>;

function opens(opener: Opener | undefined, policy: AddressPolicy | undefined): boolean {
  if (opener === 'loopback') return !!(policy?.allowLoopback || policy?.allowPrivateNetworks);
  if (opener === 'private') return !!policy?.allowPrivateNetworks;
  return false;
}

/**
 * `openable`: whether the settings may open the range at all. Only a plain or IPv4-mapped IPv4
 * address (what a socket connects to as such) may be opened; one embedded in NAT64 or 6to4 never.
 */
function v4Verdict(addr: ipaddr.IPv4, policy: AddressPolicy | undefined, via = '', openable = true): Verdict {
  for (const [range, name, opener] of parsedV4) {
    if (addr.match(range)) return openable && opens(opener, policy) ? { allowed: true } : { allowed: false, reason: `${name}${via}` };
  }
  return { allowed: true };
}

function embeddedV4(parts: number[], hi: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([parts[hi] >> 8, parts[hi] & 0xff, parts[hi + 1] >> 8, parts[hi + 1] & 0xff]);
}

/**
 * IPv6 text ending in a dotted quad, with the quad as two hex groups: ipaddr.js reads any
 * `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), where the socket (and WHATWG URL) read the
 * IPv4-compatible `::a.b.c.d`, so `::127.0.0.1` must not pass for mapped loopback.
 */
function dottedTailToHex(text: string): string {
  const m = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m) return text;
  const [a, b, c, d] = m.slice(2).map(Number);
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * Classifies one IP address (v4 or v6 text, brackets and zone allowed). Unparseable input is
 * forbidden. Without a policy: the closed guard of production.
 */
export function classifyAddress(ip: string, policy?: AddressPolicy): Verdict {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return { allowed: false, reason: 'not-an-ip-address' };
  if (policy?.trustedAddresses?.includes(text)) return { allowed: true };
  const addr = ipaddr.parse(dottedTailToHex(text));
  if (addr.kind() === 'ipv4') return v4Verdict(addr as ipaddr.IPv4, policy);
  const v6 = addr as ipaddr.IPv6;
  if (v6.match(MAPPED)) return v4Verdict(v6.toIPv4Address(), policy, ' (ipv4-mapped)');
  if (v6.match(NAT64)) return v4Verdict(embeddedV4(v6.parts, 6), policy, ' (nat64)', false);
  if (v6.match(SIX_TO_FOUR)) return v4Verdict(embeddedV4(v6.parts, 1), policy, ' (6to4)', false);
  for (const [range, name, opener] of parsedV6) {
    if (v6.match(range)) return opens(opener, policy) ? { allowed: true } : { allowed: false, reason: name };
  }
  return { allowed: true };
}

/** True for this machine's loopback: 127.0.0.0/8, ::1 and their IPv4-mapped form. */
function isLoopbackAddress(ip: string): boolean {
  const verdict = classifyAddress(ip);
  return !verdict.allowed && (verdict.reason === 'loopback' || verdict.reason === 'loopback (ipv4-mapped)');
}

/** True when a URL hostname is an IP literal (WHATWG URL has already normalised 0x7f.1, 2130706433, ...). */
function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(hostname.replace(/^\[|\]$/g, ''));
}

const LOCAL_NAMES = /(^|\.)localhost\.?$|(^|\.)localdomain\.?$|^ip6-(localhost|loopback)$/i;

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/**
 * Checks a URL before any connection: scheme, port, and the host when it is an IP literal or a
 * local name. Names that need DNS are checked again by `guardedLookup` at connect time. The
 * reason names only what the URL itself shows (never what DNS answered).
 */
export function checkUrl(url: URL, policy: GuardPolicy): Verdict {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { allowed: false, reason: `scheme ${url.protocol.replace(':', '')} is not allowed` };
  }
  const host = url.hostname;
  const literal = isIpLiteral(host);
  const localName = !literal && LOCAL_NAMES.test(host);
  // Any port: with ALLOW_PRIVATE_NETWORKS for every host, with ALLOW_LOOPBACK for a loopback host only.
  const anyPort = policy.allowPrivateNetworks || (policy.allowLoopback && (localName || (literal && isLoopbackAddress(host))));
  const port = url.port ? Number(url.port) : defaultPort(url.protocol);
  if (!anyPort && port !== 80 && port !== 443 && !policy.allowedPorts.includes(port)) {
    return { allowed: false, reason: `port ${port} is not allowed` };
  }
  if (literal) {
    const verdict = classifyAddress(host, policy);
    return verdict.allowed ? verdict : { allowed: false, reason: `address ${host} is ${verdict.reason}` };
  }
  // A local name goes to DNS when loopback is open; its addresses are checked there.
  if (localName && !policy.allowLoopback && !policy.allowPrivateNetworks) return { allowed: false, reason: `host ${host} is a local name` };
  return { allowed: true };
}

/** What the settings open, for the warning the servers print at start (undefined: the guard is closed). */
export function openGuardWarning(policy: Pick<GuardPolicy, 'allowPrivateNetworks' | 'allowLoopback'>): string | undefined {
  const closed = 'link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::/32, 100.100.100.200) stay closed';
  if (policy.allowPrivateNetworks) {
    return (
      'SSRF guard opened by LINKPREVIEW_ALLOW_PRIVATE_NETWORKS=true: links may reach loopback (127.0.0.0/8, ::1, localhost) and private networks ' +
      `(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7) on any port; ${closed}. ` +
      'For tests and local development only; LINKPREVIEW_ALLOW_LOOPBACK=true opens loopback alone.'
    );
  }
  if (policy.allowLoopback) {
    return (
      "SSRF guard opened by LINKPREVIEW_ALLOW_LOOPBACK=true: links may reach this machine's loopback addresses (127.0.0.0/8, ::1, localhost) on any port; " +
      `private networks, ${closed}. For local development only.`
    );
  }
  return undefined;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for sockets that resolves every address of a name and refuses the connection if
 * any of them is forbidden (a mix of public and private addresses is refused as a whole).
 */
export function guardedLookup(policy: GuardPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions | number | undefined, callback: (...args: unknown[]) => void) => {
    const opts: dns.LookupOptions = typeof options === 'number' ? { family: options } : (options ?? {});
    resolve(hostname)
      .then((all) => {
        let addresses = all;
        if (opts.family === 4 || opts.family === 6) addresses = all.filter((a) => a.family === opts.family);
        if (addresses.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          callback(err);
          return;
        }
        for (const a of all) {
          const verdict = classifyAddress(a.address, policy);
          if (!verdict.allowed) {
            callback(
              new LinkNotAllowedError(`${hostname} resolves to ${a.address} (${verdict.reason}), which is not allowed`, undefined, {
                hostname,
                address: a.address,
                reason: verdict.reason,
              }),
            );
            return;
          }
        }
        if (opts.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })
      .catch((err) => callback(err));
  }) as LookupFunction;
}
