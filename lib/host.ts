/**
 * Hosts, in one place: how a host is written for comparison (`normalizeHost`), the host of a URL
 * (`hostOf`), "this host or a subdomain of it" (`onHost`), and the site a host belongs to
 * (`siteOf`, its registrable domain by the Public Suffix List, through tldts). Every "same host"
 * and "same site" decision of the service (host rules, profiles, platform matchers, players, walls,
 * the proxy route) goes through these, so `X.COM.`, `x.com` and `xn--…` forms compare alike.
 */
import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';

/**
 * A host as compared: lower case, no brackets (IPv6), no trailing dots, an internationalized name
 * as punycode (`bücher.example` → `xn--bcher-kva.example`). An IP literal or a name that is not a
 * valid domain stays as written, lower-cased.
 */
export function normalizeHost(host: string): string {
  const plain = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');
  if (plain.includes(':') || /^[\x21-\x7e]*$/.test(plain)) return plain;
  return domainToASCII(plain) || plain;
}

/** The normalized host of a URL (text or URL), '' when it is not a URL. */
export function hostOf(url: string | URL): string {
  if (typeof url !== 'string') return normalizeHost(url.hostname);
  try {
    return normalizeHost(new URL(url).hostname);
  } catch {
    return '';
  }
}

/** True when `host` is `base` or one of its subdomains (both compared normalized; `base` '' never matches). */
export function onHost(host: string, base: string): boolean {
  const h = normalizeHost(host);
  const b = normalizeHost(base);
  return b !== '' && (h === b || h.endsWith(`.${b}`));
}

/** True when `host` is on any of `bases` (`onHost`). */
export function onAnyHost(host: string, bases: Iterable<string>): boolean {
  for (const b of bases) if (onHost(host, b)) return true;
  return false;
}

/** A host without a leading `www.` (what a record shows as its domain, and what site matching ignores). */
export function withoutWww(host: string): string {
  return normalizeHost(host).replace(/^www\./, '');
}

const PSL = { allowPrivateDomains: true } as const;

/**
 * The site a host belongs to: its registrable domain by the Public Suffix List, private suffixes
 * included, so `attacker.github.io` and `victim.github.io` are two sites, as are two S3 buckets and
 * `a.evil.me.uk` and `bank.me.uk`. A host that has no registrable domain (an IP address, a public
 * suffix itself, `localhost`) is its own site.
 */
export function siteOf(host: string): string {
  const h = normalizeHost(host);
  if (!h) return '';
  return getDomain(h, PSL) ?? h;
}

/** True when two URLs are on the same site (`docs.example.com` and `sso.example.com` are). */
export function sameSite(a: string | URL, b: string | URL): boolean {
  const ha = hostOf(a);
  return ha !== '' && siteOf(ha) === siteOf(hostOf(b));
}
