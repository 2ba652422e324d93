/**
 * The site's name when no meta tag states it: the part of `<title>` that names the site ("… | The
 * Verge", "Wikipedia - …"), taken only when the rest of the page agrees (the siteName rules of
 * lib/extract/rules.ts run it after og:site_name, the app names and the JSON-LD publisher), and
 * the site's facts from its web app manifest: its name, after all the rules, and the theme colour.
 */

import { cssColorToHex } from '../media/css-color.js';
import { siteOf } from '../site.js';
import type { ManifestData } from './icons.js';
import { type LdNode, ldString, ldTypes } from './json-ld.js';
import type { PageData } from './page-data.js';
import { cleanText } from './text.js';

/** What these rules read (a RuleContext has it). */
interface Page {
  page: PageData;
  url: string;
}

/** The metas that name the site's app (application-name, the app links' and the app cards' names). */
export const APP_NAME_METAS = [
  'application-name',
  'apple-mobile-web-app-title',
  'al:ios:app_name',
  'al:iphone:app_name',
  'al:ipad:app_name',
  'al:android:app_name',
  'twitter:app:name:iphone',
  'twitter:app:name:ipad',
  'twitter:app:name:googleplay',
];

/** The JSON-LD publisher's name of the nodes that describe the page, then a WebSite node's name. */
export function publisherNames(c: { ld: LdNode[] }): (string | undefined)[] {
  return [
    ...c.ld.map((n) => ldString((n.publisher as LdNode | undefined)?.name ?? n.publisher)),
    ...c.ld.filter((n) => ldTypes(n).includes('website')).map((n) => ldString(n.name)),
  ];
}

const SEPARATOR = /\s+[|\-–—:·•»›~]\s+|\s*[|·•»›]\s*/;

/** Letters and digits only, lower-case: "The Boston Globe" and "bostonglobe.com" compare on these. */
const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The host's registrable label: `www.theverge.com` → `theverge`, `news.bbc.co.uk` → `bbc`. */
function hostLabel(url: string): string {
  try {
    const site = siteOf(new URL(url).hostname);
    return site.includes('.') ? site.slice(0, site.indexOf('.')) : '';
  } catch {
    return '';
  }
}

/** Whether `name` is the site of `url`: its letters are the host's label, or the host's label is its initials or its start. */
function namesHost(name: string, url: string): boolean {
  const host = hostLabel(url);
  const n = squash(name);
  if (!host || !n || n.length < 2) return false;
  const exact = n === host || n === `the${host}`;
  const withTld = n.startsWith(host) && /^(com|org|net|news|online)$/.test(n.slice(host.length));
  const prefix = n.length >= 4 && host.startsWith(n);
  if (exact || withTld || prefix) return true;
  const initials = name
    .split(/\s+/)
    .map((w) => w[0] ?? '')
    .join('')
    .toLowerCase();
  return initials.length >= 2 && initials === host;
}

/** The headline the page gives elsewhere (og:title, the h1), to tell the title's headline part. */
function headlines(c: Page): string[] {
  const out: string[] = [];
  for (const m of c.page.metas) if ((m.property === 'og:title' || m.name === 'twitter:title') && m.content.trim()) out.push(m.content);
  if (c.page.h1) out.push(c.page.h1);
  return out.map(squash).filter(Boolean);
}

/**
 * The site's name from `<title>`: its first or last part when the title has a separator, that part
 * is short (at most five words), and either it names the host or the other part is the page's
 * headline (og:title or the h1).
 */
export function titleSiteName(c: Page): string | undefined {
  const title = cleanText(c.page.title, 500);
  if (!title || !SEPARATOR.test(title)) return undefined;
  const parts = title
    .split(SEPARATOR)
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length < 2) return undefined;
  const heads = headlines(c);
  const ends = [
    { name: parts[parts.length - 1], rest: parts.slice(0, -1).join(' ') },
    { name: parts[0], rest: parts.slice(1).join(' ') },
  ];
  for (const { name, rest } of ends) {
    if (name.split(/\s+/).length > 5 || name.length > 60) continue;
    const restKey = squash(rest);
    if (namesHost(name, c.url) || (restKey.length > 8 && heads.some((h) => h === restKey || h.startsWith(restKey) || restKey.startsWith(h)))) return name;
  }
  return undefined;
}

/** What the web app manifest adds to a record: the site's name when the page states none, and the theme colour. */
export interface SiteFacts {
  name?: string;
  themeColor?: string;
}

/** The manifest's site facts (its `name`, else `short_name`; its `theme_color` as #rrggbb). */
export function manifestSite(manifest: ManifestData | undefined): SiteFacts {
  if (!manifest) return {};
  const name = cleanText(manifest.name ?? manifest.short_name, 200);
  const themeColor = cssColorToHex(manifest.theme_color)?.slice(0, 7);
  return { ...(name ? { name } : {}), ...(themeColor ? { themeColor } : {}) };
}

/**
 * The page's theme colour as #rrggbb: its `theme-color` meta, the one for a light scheme when it
 * has several (`media="(prefers-color-scheme: light)"`, else one without a media query), else the
 * manifest's. Any CSS colour form is normalized; a translucent colour keeps its RGB.
 */
export function themeColor(page: PageData, site: SiteFacts = {}): string | undefined {
  const metas = page.metas.filter((m) => m.name === 'theme-color' && m.content.trim());
  const light = metas.find((m) => /prefers-color-scheme\s*:\s*light/i.test(m.media ?? ''));
  const plain = metas.find((m) => !m.media || !/prefers-color-scheme\s*:\s*dark/i.test(m.media));
  for (const m of [light, plain]) {
    const hex = cssColorToHex(m?.content)?.slice(0, 7);
    if (hex) return hex;
  }
  return site.themeColor;
}
