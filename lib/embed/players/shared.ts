/** What the provider entries share: matching a link's host, and reading a page's player metas. */
import type { PageData } from '../../extract/page-data.js';
import { normalizeHost } from '../../host.js';

/** True when the link's host, as lib/host.ts compares hosts (`normalizeHost`), is exactly one of `hosts` (no subdomain). */
export function hostIsOneOf(url: URL, ...hosts: string[]): boolean {
  return hosts.includes(normalizeHost(url.hostname));
}

/** The path's segments, empty ones dropped. */
export function segments(url: URL): string[] {
  return url.pathname.split('/').filter(Boolean);
}

/** The content of the page's first meta named (name or property) `key`. */
export function metaContent(page: PageData | undefined, key: string): string | undefined {
  return page?.metas.find((m) => m.name === key || m.property === key)?.content.trim() || undefined;
}
