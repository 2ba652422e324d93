import { createHash } from 'node:crypto';

/** The canonical form of a link for ids: lower-case host, no default port, no fragment. */
export function canonicalUrl(link: string): string {
  const u = new URL(link);
  u.hash = '';
  return u.href;
}

/** A stable 53-bit number (a safe JS integer) derived from a string with SHA-256. */
export function stableId(key: string): number {
  const digest = createHash('sha256').update(key).digest();
  // 21 bits from the first 4 bytes + 32 bits from the next 4 = 53 bits.
  return (digest.readUInt32BE(0) & 0x1fffff) * 2 ** 32 + digest.readUInt32BE(4);
}

/** The `domain` of a record: the host of the original URL without `www.`. */
export function domainOf(link: string): string {
  return new URL(link).hostname.replace(/^www\./i, '');
}

/** Second-level labels under which a country's names are registered (`bbc.co.uk`, `example.com.au`). */
const SECOND_LEVEL = /^(co|com|org|net|gov|ac|edu|ne|or)$/;

/**
 * The site a host belongs to, roughly its registrable domain: its last two labels, three under a
 * country's second level (`news.bbc.co.uk` → `bbc.co.uk`). No public-suffix list: `a.github.io`
 * and `b.github.io` are the same site here.
 */
export function siteOf(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const n = labels.length > 2 && SECOND_LEVEL.test(labels[labels.length - 2]) ? 3 : 2;
  return labels.slice(-n).join('.');
}
