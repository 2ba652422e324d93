/**
 * Fetching a platform's sources through the guarded fetcher, one way each: its pages (its host
 * profile, the caller's language, the configured page caps) and its API answers (JSON, oEmbed)
 * under SOURCE_LIMITS; `optional()` for a source that has a next one to try (the failure
 * convention: ../types.ts).
 */

import { FetchFailure } from '../../fetch/fetch-failure.js';
import { profileHeaders } from '../../fetch/host-profiles.js';
import type { FetchResult } from '../../fetch/types.js';
import type { PlatformContext } from '../types.js';

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
