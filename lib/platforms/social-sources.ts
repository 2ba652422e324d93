/**
 * Small pieces the platform modules share: fetching a platform page or JSON source through the
 * guarded fetcher, reading a page's meta tags, counts such as "1.2M" or "5.182", ids, and time
 * stamps encoded in ids.
 */
import { detectEncoding } from '../fetch/charset.js';
import { flatHeaders, header } from '../fetch/headers.js';
import { hostProfileHeaders } from '../fetch/host-profiles.js';
import { FetchFailure, type FetchResult } from '../fetch/safe-fetch.js';
import { parsePageBytes, type PageData } from '../extract/parse-page.js';
import { detectWall, type WallKind } from '../extract/walls.js';
import { stableId } from '../ids.js';
import { decodeHTML } from 'entities';
import type { PlatformContext } from './types.js';

/** Caps of a platform API answer (JSON, oEmbed): small and quick, the page fetch keeps the configured caps. */
export const SOURCE_LIMITS = { jsonBytes: 2 * 1024 * 1024, timeoutMs: 4000 };

/** The id of a platform object: the stable 53-bit hash of `<platform>:<kind>:<the platform's own id>`. */
export function platformObjectId(platform: string, kind: string, ownId: string): number {
  return stableId(`${platform}:${kind}:${ownId}`);
}

/** The platform page itself: the generic fetch when a short link already led there, else a fetch with the host's preview-bot profile. */
export async function fetchPlatformPage(url: string, ctx: PlatformContext, extraHeaders: Record<string, string> = {}): Promise<FetchResult> {
  if (ctx.page && samePage(ctx.page.finalUrl, url)) return ctx.page;
  return ctx.fetch(url, {
    maxBytes: ctx.config.maxPageBytes,
    onTooLarge: 'truncate',
    timeoutMs: ctx.config.fetchTimeoutMs,
    headers: {
      ...hostProfileHeaders(url, ctx.config.userAgent),
      ...(ctx.acceptLanguage ? { 'accept-language': ctx.acceptLanguage } : {}),
      ...extraHeaders,
    },
  });
}

function samePage(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.host === y.host && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

/** Runs one optional source: undefined when it could not be reached (FetchFailure); other errors propagate. */
export async function unlessUnreachable<T>(f: () => Promise<T>): Promise<T | undefined> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof FetchFailure) return undefined;
    throw err;
  }
}

/** A JSON (or text) source: undefined body on a non-2xx answer, the status kept. FetchFailure propagates. */
export async function fetchSource(url: string, ctx: PlatformContext, headers: Record<string, string> = {}): Promise<{ status: number; text?: string; res: FetchResult }> {
  const res = await ctx.fetch(url, {
    maxBytes: SOURCE_LIMITS.jsonBytes,
    onTooLarge: 'fail',
    timeoutMs: Math.min(SOURCE_LIMITS.timeoutMs, ctx.config.fetchTimeoutMs),
    maxRedirects: 3,
    headers: { accept: 'application/json,text/html;q=0.9,*/*;q=0.5', 'user-agent': ctx.config.userAgent, ...headers },
  });
  const ok = res.status >= 200 && res.status < 300;
  return { status: res.status, res, ...(ok ? { text: res.body.toString('utf8') } : {}) };
}

export function parseJson(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
}

export interface ParsedPage {
  res: FetchResult;
  data: PageData;
  /** The decoded HTML (for embedded JSON the parser does not keep). */
  html: string;
  wall?: WallKind;
  meta(...names: string[]): string | undefined;
}

/** Decodes and parses a fetched page; `meta('og:title', 'twitter:title')` gives the first non-empty one. */
export function parsePlatformPage(res: FetchResult, ctx?: Pick<PlatformContext, 'noteLanguage'>): ParsedPage {
  const contentType = header(res.headers, 'content-type');
  const encoding = detectEncoding(res.body, contentType);
  const data = parsePageBytes(res.body, encoding);
  ctx?.noteLanguage?.(data.lang);
  let html: string;
  try {
    html = new TextDecoder(encoding).decode(res.body);
  } catch {
    html = res.body.toString('utf8');
  }
  const wall = detectWall({ status: res.status, url: res.url, finalUrl: res.finalUrl, headers: flatHeaders(res.headers), page: data, head: res.body.subarray(0, 32 * 1024).toString('latin1') });
  const meta = (...names: string[]) => {
    for (const n of names) {
      const m = data.metas.find((x) => (x.property === n || x.name === n || x.itemprop === n) && x.content.trim());
      if (m) return m.content.trim();
    }
    return undefined;
  };
  return { res, data, html, ...(wall ? { wall } : {}), meta };
}

export const isOk = (status: number) => status >= 200 && status < 300;

/** The JSON text of `<script id="ID" ...>...</script>` in a page. */
export function scriptById(html: string, id: string): string | undefined {
  const re = new RegExp(`<script[^>]*\\bid=["']${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["'][^>]*>([\\s\\S]*?)</script>`, 'i');
  return re.exec(html)?.[1];
}

/**
 * A count as platforms print it: `1234`, `1,234`, `1.234` (thousands), `1.2K`, `3,4 M`, `152K`,
 * `1.5 mil`, `2 Mio.`. Undefined when it is not a count.
 */
export function parseCount(raw: string | number | undefined | null): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? Math.round(raw) : undefined;
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim().replace(/\u00a0|\u202f/g, ' ');
  const m = /^(\d[\d.,' ]*)\s*(k|m|b|mil|mio\.?|mln|md|mrd\.?|tsd\.?|thousand|million|billion)?\b/i.exec(s);
  if (!m) return undefined;
  let num = m[1].trim().replace(/[ ']/g, '');
  const suffix = (m[2] ?? '').toLowerCase().replace(/\.$/, '');
  const mult = ['k', 'tsd', 'thousand', 'mil'].includes(suffix) ? 1e3
    : ['m', 'mio', 'mln', 'million'].includes(suffix) ? 1e6
      : ['b', 'md', 'mrd', 'billion'].includes(suffix) ? 1e9
        : 1;
  if (mult === 1) {
    // No suffix: separators are thousands separators (counts are whole numbers).
    num = num.replace(/[.,]/g, '');
    return /^\d+$/.test(num) ? Number(num) : undefined;
  }
  // With a suffix the separator is a decimal point: "1.2K", "3,4 M".
  const n = Number(num.replace(',', '.'));
  return Number.isFinite(n) ? Math.round(n * mult) : undefined;
}

/** An ISO date-time from seconds or ms since the epoch, or a date string; undefined when invalid. */
export function isoDate(v: unknown): string | undefined {
  let d: Date | undefined;
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) d = new Date(v < 1e12 ? v * 1000 : v);
  else if (typeof v === 'string' && /^\d{9,13}$/.test(v.trim())) return isoDate(Number(v.trim()));
  else if (typeof v === 'string' && v.trim()) d = new Date(v.trim());
  if (!d || Number.isNaN(d.getTime())) return undefined;
  const y = d.getUTCFullYear();
  if (y < 1995 || y > 2200) return undefined;
  return d.toISOString();
}

/** Whole seconds (the platforms' own precision). */
export function toSecond(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, '.000Z');
}

/** The creation time in an X (snowflake) id: ms since 2010-11-04 in the bits above 22. */
export function snowflakeTime(id: string): string | undefined {
  if (!/^\d{15,20}$/.test(id)) return undefined;
  return isoDate(Number(BigInt(id) >> 22n) + 1288834974657);
}

/** Decodes HTML entities and collapses whitespace. */
export function cleanHtmlText(s: string | undefined, keepNewlines = false): string | undefined {
  if (s === undefined) return undefined;
  const decoded = decodeHTML(s.replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]+>/g, ''));
  const out = keepNewlines ? decoded.replace(/[ \t\f\v\u00a0]+/g, ' ').replace(/ *\n */g, '\n').replace(/\n{3,}/g, '\n\n').trim() : decoded.replace(/\s+/g, ' ').trim();
  return out || undefined;
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined);
export const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : undefined);

/** Removes undefined members (the records are closed; undefined never reaches JSON anyway, but tests compare objects). */
export function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
