/**
 * Inferred defaults, so a successful record is always complete: a title and a description are
 * always present when `ok` is true.
 *  - title: the page's own title, else the URL's last path segment humanized, else the domain;
 *    for non-HTML types the file name (Content-Disposition, else the URL's last segment).
 *  - description: the page's own description, else the site name, else '' (the last resort).
 */
import type { LinkRecord } from '../contract/link.js';
import { withoutUnsafeChars } from './text.js';

export interface DefaultHints {
  /** og:site_name or similar, the description of last resort before ''. */
  siteName?: string;
  /** The file name from Content-Disposition, for non-HTML types. */
  fileName?: string;
}

export function finalize(r: LinkRecord, hints: DefaultHints = {}): LinkRecord {
  safeStrings(r);
  if (!r.ok) return r;
  if (!r.title) {
    const fromFile = r.type !== 'PAGE' ? hints.fileName : undefined;
    r.title = fromFile || titleFromUrl(r.redirectionUrl ?? r.url, r.type !== 'PAGE') || r.domain;
  }
  if (r.description === undefined || r.description === null) r.description = hints.siteName && hints.siteName !== r.title ? hints.siteName : '';
  return r;
}

/**
 * Every string of a record, at any depth (a platform's post text and author names too), without
 * the controls and bidi overrides no field carries (lib/extract/text.ts, UNSAFE_CHARS).
 */
function safeStrings(value: unknown): void {
  if (!value || typeof value !== 'object') return;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, v] of entries) {
    if (typeof v === 'string') {
      const clean = withoutUnsafeChars(v);
      if (clean !== v) (value as Record<string | number, unknown>)[key] = clean;
    } else safeStrings(v);
  }
}

/**
 * The URL's last path segment, humanized: `/blog/my-first_post.html` -> `my first post`.
 * For files (`keepExtension`), `report-2024.pdf` stays a file name: `report-2024.pdf`.
 */
export function titleFromUrl(link: string, keepExtension = false): string | undefined {
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    return undefined;
  }
  const last = u.pathname.split('/').filter(Boolean).pop();
  if (!last) return undefined;
  let seg: string;
  try {
    seg = decodeURIComponent(last);
  } catch {
    seg = last;
  }
  if (keepExtension && /\.[a-z0-9]{1,5}$/i.test(seg) && !/\.(html?|php|aspx?|jsp)$/i.test(seg)) return seg.trim() || undefined;
  const human = seg
    .replace(/\.(html?|php\d?|aspx?|jsp|cgi|shtml)$/i, '')
    .replace(/[-_+]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  // A bare numeric id or hash is not a title.
  if (!human || /^[\d\s]+$/.test(human) || /^[0-9a-f]{16,}$/i.test(human)) return undefined;
  return human;
}
