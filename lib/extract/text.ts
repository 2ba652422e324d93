/**
 * Small text and URL helpers shared by the field rules: entity decoding (for values that were
 * double-encoded by the page), whitespace collapsing, junk filters and URL resolution.
 */
import { decodeHTML } from 'entities';

/**
 * Characters no text field carries: C0 and C1 controls but tab, line feed and carriage return
 * (NUL, escape sequences for a terminal), DEL, and the bidi embeddings, overrides and isolates
 * (U+202A to U+202E, U+2066 to U+2069), with which a page could make a card read backwards
 * (`moc.knab` shown as `bank.com`). The plain marks (U+200E, U+200F, U+061C), which right-to-left
 * text needs and which reorder nothing past themselves, are kept.
 */
const UNSAFE_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A text without the characters no field carries (UNSAFE_CHARS). */
export function withoutUnsafeChars(s: string): string {
  return s.replace(UNSAFE_CHARS, '');
}

/** Decode entities left in a value (pages often double-encode `&amp;amp;`), drop unsafe characters, collapse whitespace. */
export function cleanText(s: string | undefined | null, maxChars = 2000): string | undefined {
  if (s === undefined || s === null) return undefined;
  let t = String(s);
  if (/&(#\d+|#x[0-9a-f]+|[a-z][a-z0-9]+);/i.test(t)) t = decodeHTML(t);
  t = withoutUnsafeChars(t)
    .replace(/[\s\u00a0\u200b\ufeff]+/g, ' ')
    .trim();
  if (t.length > maxChars) t = `${t.slice(0, maxChars - 1).trimEnd()}…`;
  return t || undefined;
}

const JUNK_TEXT = new Set([
  'untitled',
  'untitled document',
  'untitled page',
  'new page',
  'no title',
  'title',
  'home',
  'index',
  'null',
  'undefined',
  'none',
  'n/a',
  'loading',
  'loading...',
  'document',
  'page not found',
  'welcome',
  'default',
  'test',
  '-',
  '|',
]);

/** Values that are not a real title/description ("Untitled", "undefined", a bare URL-less dash ...). */
export function isJunkText(s: string): boolean {
  const t = s.trim().toLowerCase();
  if (!t) return true;
  if (JUNK_TEXT.has(t)) return true;
  if (/^\{\{.*\}\}$/.test(t) || /^<%.*%>$/.test(t) || /^\$\{.*\}$/.test(t)) return true; // unrendered templates
  if (/^[\p{P}\p{S}\s]+$/u.test(t)) return true;
  return false;
}

/** Resolve a URL against the page base (itself resolved against the final URL). http(s) only. */
export function resolveUrl(u: string | undefined | null, base: string): string | undefined {
  if (!u) return undefined;
  const raw = String(u)
    .trim()
    .replace(/^['"]|['"]$/g, '');
  if (!raw || /^(data|javascript|about|blob|mailto|tel):/i.test(raw)) return undefined;
  try {
    const abs = new URL(raw, base);
    if (abs.protocol !== 'http:' && abs.protocol !== 'https:') return undefined;
    return abs.href;
  } catch {
    return undefined;
  }
}

const JUNK_IMAGE = [
  /(^|[/_.-])(spacer|blank|pixel|transparent|clear|1x1|empty|placeholder|no[-_]?image|noimage|default[-_]?(image|thumb|img)|lazy|loader|loading|spinner)[._-]/i,
  /\/(pixel|beacon|tracking|impression)(\/|\?|$)/i,
  /facebook\.com\/tr\b/i,
  /(doubleclick\.net|googleadservices\.com|google-analytics\.com|scorecardresearch\.com|quantserve\.com|pixel\.wp\.com|bat\.bing\.com|analytics\.)/i,
];

/** Placeholder images, tracking pixels and data: URIs are not preview images. */
export function isJunkImage(url: string, hints?: { width?: number; height?: number }): boolean {
  if (/^data:/i.test(url)) return true;
  if (hints && ((hints.width !== undefined && hints.width <= 2) || (hints.height !== undefined && hints.height <= 2))) return true;
  let path = url;
  try {
    const u = new URL(url);
    path = u.host + u.pathname + u.search;
  } catch {
    /* keep raw */
  }
  return JUNK_IMAGE.some((re) => re.test(path));
}

export function toInt(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v);
  if (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*(px)?\s*$/i.test(v)) return Math.round(parseFloat(v));
  return undefined;
}
