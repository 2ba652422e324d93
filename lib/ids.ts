import { createHash } from 'node:crypto';
import { withoutWww } from './host.js';

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
  return withoutWww(new URL(link).hostname);
}
