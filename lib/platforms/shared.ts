/**
 * What the platform modules share, one way each:
 *  - fetching through the guarded fetcher: a platform's pages (its host profile, the caller's
 *    language) and its API answers (JSON, oEmbed), under one set of limits (SOURCE_LIMITS);
 *    `optional()` for a source that has a next one to try (the failure convention: ./types.ts);
 *  - reading: a fetched page (meta tags, scripts, walls), typed JSON reads (str, num, bool, obj,
 *    arr, at, parseJson), counts as printed ("1.2M", "4,69 M de suscriptores", "1.234.567"),
 *    dates, HTML text;
 *  - the ids of the record objects (platformObjectId).
 */
import { decodeHTML } from 'entities';
import { type PageData, parsePageBytes } from '../extract/parse-page.js';
import { detectWall, type WallKind } from '../extract/walls.js';
import { detectEncoding } from '../fetch/charset.js';
import { flatHeaders, header } from '../fetch/headers.js';
import { profileHeaders } from '../fetch/host-profiles.js';
import { FetchFailure, type FetchResult } from '../fetch/safe-fetch.js';
import { stableId } from '../ids.js';
import type { PlatformContext } from './types.js';

// ---------------------------------------------------------------------------------------------
// Fetching

/**
 * Caps of a platform's API answer (JSON, oEmbed, X's profile timeline): small and quick, so a
 * stalled source leaves time for the next. A platform's pages get the configured page caps.
 */
export const SOURCE_LIMITS = { maxBytes: 3 * 1024 * 1024, timeoutMs: 5000, maxRedirects: 3 };

/** A platform page: its host profile (User-Agent, cookies), the caller's language, the configured page caps. */
export function fetchPage(url: string, ctx: PlatformContext, extraHeaders: Record<string, string> = {}): Promise<FetchResult> {
  return ctx.fetch(url, {
    maxBytes: ctx.config.maxPageBytes,
    onTooLarge: 'truncate',
    timeoutMs: ctx.config.fetchTimeoutMs,
    headers: {
      ...profileHeaders(ctx.hostProfile, ctx.config.userAgent),
      ...(ctx.acceptLanguage ? { 'accept-language': ctx.acceptLanguage } : {}),
      ...extraHeaders,
    },
  });
}

/** The link's own platform page: the generic fetch when a short link already led there, else fetchPage. */
export async function fetchPlatformPage(url: string, ctx: PlatformContext, extraHeaders: Record<string, string> = {}): Promise<FetchResult> {
  if (ctx.page && samePage(ctx.page.finalUrl, url)) return ctx.page;
  return fetchPage(url, ctx, extraHeaders);
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

/**
 * A source with another one after it: undefined when it could not be reached (FetchFailure), so
 * the platform tries its next source. Any other error propagates.
 */
export async function optional<T>(source: () => Promise<T>): Promise<T | undefined> {
  try {
    return await source();
  } catch (err) {
    if (err instanceof FetchFailure) return undefined;
    throw err;
  }
}

/**
 * An API answer under SOURCE_LIMITS: its text on a 2xx answer, the status and the response
 * always. A FetchFailure propagates.
 */
export async function fetchSource(
  url: string,
  ctx: PlatformContext,
  headers: Record<string, string> = {},
): Promise<{ status: number; text?: string; res: FetchResult }> {
  const res = await ctx.fetch(url, {
    maxBytes: SOURCE_LIMITS.maxBytes,
    onTooLarge: 'fail',
    timeoutMs: Math.min(SOURCE_LIMITS.timeoutMs, ctx.config.fetchTimeoutMs),
    maxRedirects: SOURCE_LIMITS.maxRedirects,
    headers: { accept: 'application/json,text/html;q=0.9,*/*;q=0.5', 'user-agent': ctx.config.userAgent, ...headers },
  });
  return { status: res.status, res, ...(isOk(res.status) ? { text: res.body.toString('utf8') } : {}) };
}

export const isOk = (status: number) => status >= 200 && status < 300;

// ---------------------------------------------------------------------------------------------
// Pages

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

// ---------------------------------------------------------------------------------------------
// JSON

export type Json = Record<string, unknown>;

export function parseJson(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
}

/** A non-empty string, trimmed; a finite number as its text. */
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
/** A finite number, or a string of digits as its number. */
export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
export const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : undefined);

/** Follows a path of keys and indexes; undefined when any step is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let cur = value;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** Removes undefined members (the records are closed; undefined never reaches JSON anyway, but tests compare objects). */
export function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

// ---------------------------------------------------------------------------------------------
// Counts and dates

const MULTIPLIERS: [RegExp, number][] = [
  [/^(k|k\.|tsd\.?|mil|thousand)$/i, 1e3],
  [/^(m|m\.|mn|mio\.?|mln|million|millions|millones)$/i, 1e6],
  [/^(b|bn|md|mrd\.?|billion|billions|mil millones)$/i, 1e9],
];

/**
 * A count as platforms print it, in the page's language: `1,234,567`, `1.234.567`, `1 234 567`,
 * `1.2M`, `4,69 M de suscriptores`, `6,8 K`, `152K`, `1.5 mil`, `2 Mio.`; the first number in
 * the text counts. With a multiplier, one `.` or `,` followed by 1-2 digits is the decimal mark;
 * without one, every separator is a thousands separator. A number passes (rounded, not negative).
 * Undefined when there is no count ("No views").
 */
export function parseCount(raw: string | number | undefined | null): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? Math.round(raw) : undefined;
  if (!raw) return undefined;
  const m = /(\d[\d.,' ]*)\s*([A-Za-z][A-Za-z.]*(?: millones)?)?/.exec(raw.replace(/[\u00a0\u202f\u2009]/g, ' '));
  if (!m) return undefined;
  const digits = m[1].trim();
  const mult = MULTIPLIERS.find(([re]) => re.test((m[2] ?? '').trim()))?.[1];
  if (mult) {
    const dec = /^(\d{1,3}(?:[ .,']\d{3})*|\d+)(?:[.,](\d{1,2}))?$/.exec(digits);
    if (!dec) return undefined;
    const whole = Number(dec[1].replace(/[ .,']/g, ''));
    const frac = dec[2] ? Number(`0.${dec[2]}`) : 0;
    return Math.round((whole + frac) * mult);
  }
  return Number(digits.replace(/[ .,']/g, ''));
}

/** The exact number in an accessibility text ("like this video along with 13,725,279 other people"). */
export function exactCount(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = /(\d{1,3}(?:[,. \u00a0\u202f]\d{3})+|\d+)/.exec(text);
  return m ? Number(m[1].replace(/[,. \u00a0\u202f]/g, '')) : undefined;
}

/**
 * A date-time in UTC (`2017-04-14T16:02:38.000Z`): from seconds or ms since the epoch (a number,
 * or a string of 9-13 digits) or a date string (`2017-04-14` is midnight UTC). Undefined when it
 * is not a date, or outside 1995-2200 (a misread, not a time any platform stamps).
 */
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

// ---------------------------------------------------------------------------------------------
// Ids

/** The id of a platform object: the stable 53-bit hash of `<platform>:<kind>:<the platform's own id>`. */
export function platformObjectId(platform: string, kind: string, ownId: string | number): number {
  return stableId(`${platform}:${kind}:${ownId}`);
}
