/**
 * Hosts, in one place: how a host is written for comparison (`normalizeHost`), the host of a URL
 * (`hostOf`) and "this host or a subdomain of it" (`onHost`); the site a host belongs to is
 * lib/site.ts (the Public Suffix List, kept apart so that what imports only these, the settings
 * among them, loads no list). Every "same host" decision of the service (host rules, profiles,
 * platform matchers, players, the proxy route) goes through these, so `X.COM.`, `x.com` and
 * `xn--…` forms compare alike.
 */
import { domainToASCII } from 'node:url';

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
