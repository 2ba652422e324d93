/**
 * Reading a fetched platform page: decoded and parsed (meta tags, walls, the page's language),
 * the JSON of a `<script id>`, and HTML text cleaned of tags and entities.
 */
import { decodeHTML } from 'entities';
import type { PageData } from '../../extract/page-data.js';
import { parsePageBytes } from '../../extract/parse-page.js';
import { themeColor } from '../../extract/site-name.js';
import { detectWall, type WallKind } from '../../extract/walls.js';
import { detectEncoding } from '../../fetch/charset.js';
import { flatHeaders, header } from '../../fetch/headers.js';
import type { FetchResult } from '../../fetch/types.js';
import type { PlatformContext } from '../types.js';

export interface ParsedPage {
  res: FetchResult;
  data: PageData;
  /** The decoded HTML (for embedded JSON the parser does not keep). */
  html: string;
  wall?: WallKind;
  meta(...names: string[]): string | undefined;
}

/** Decodes and parses a fetched page; `meta('og:title', 'twitter:title')` gives the first non-empty one. */
export function parsePlatformPage(res: FetchResult, ctx?: Pick<PlatformContext, 'noteLanguage' | 'noteThemeColor'>): ParsedPage {
  const contentType = header(res.headers, 'content-type');
  const encoding = detectEncoding(res.body, contentType);
  const data = parsePageBytes(res.body, encoding);
  ctx?.noteLanguage?.(data.lang);
  ctx?.noteThemeColor?.(themeColor(data));
  let html: string;
  try {
    html = new TextDecoder(encoding).decode(res.body);
  } catch {
    html = res.body.toString('utf8');
  }
  const wall = detectWall({
    status: res.status,
    url: res.url,
    finalUrl: res.finalUrl,
    headers: flatHeaders(res.headers),
    page: data,
    head: res.body.subarray(0, 32 * 1024).toString('latin1'),
  });
  const meta = (...names: string[]) => {
    for (const n of names) {
      const m = data.metas.find((x) => (x.property === n || x.name === n || x.itemprop === n) && x.content.trim());
      if (m) return m.content.trim();
    }
    return undefined;
  };
  return { res, data, html, ...(wall ? { wall } : {}), meta };
}

/** The JSON text of `<script id="ID" ...>...</script>` in a page. */
export function scriptById(html: string, id: string): string | undefined {
  const re = new RegExp(`<script[^>]*\\bid=["']${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["'][^>]*>([\\s\\S]*?)</script>`, 'i');
  return re.exec(html)?.[1];
}

/** Decodes HTML entities and collapses whitespace. */
export function cleanHtmlText(s: string | undefined, keepNewlines = false): string | undefined {
  if (s === undefined) return undefined;
  const decoded = decodeHTML(s.replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]+>/g, ''));
  const out = keepNewlines
    ? decoded
        .replace(/[ \t\f\v\u00a0]+/g, ' ')
        .replace(/ *\n */g, '\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()
    : decoded.replace(/\s+/g, ' ').trim();
  return out || undefined;
}
