/**
 * The site a host belongs to (`siteOf`): its registrable domain by the Public Suffix List, through
 * tldts. Every "same site" decision (players, sign-in redirects, walls, the browser's lanes) goes
 * through it. Hosts compare as lib/host.ts normalizes them.
 */
import { getDomain } from 'tldts';
import { hostOf, normalizeHost } from './host.js';

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
