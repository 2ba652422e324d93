/** Helpers for extraction tests: a FetchResult from HTML or bytes, and a fetcher that serves a route table. */

import { loadConfig } from '../../lib/config';
import { extractPage, type PageExtraction } from '../../lib/extract/extract-page';
import type { Fetcher, FetchResult } from '../../lib/fetch/types';

export function fetched(body: string | Buffer, opts: { url?: string; finalUrl?: string; status?: number; headers?: Record<string, string> } = {}): FetchResult {
  const url = opts.url ?? 'https://example.test/articles/some-story';
  const finalUrl = opts.finalUrl ?? url;
  return {
    url,
    finalUrl,
    status: opts.status ?? 200,
    headers: { 'content-type': 'text/html; charset=utf-8', ...opts.headers },
    body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    truncated: false,
    trail: url === finalUrl ? [url] : [url, finalUrl],
  };
}

/** A fetcher answering from a table of URL -> JSON/text; anything else is a 404. Records what was asked. */
export function tableFetcher(table: Record<string, string> = {}): Fetcher & { asked: string[] } {
  const asked: string[] = [];
  const f = (async (url: string) => {
    asked.push(url);
    const body = table[url];
    return {
      url,
      finalUrl: url,
      status: body === undefined ? 404 : 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(body ?? 'not found'),
      truncated: false,
      trail: [url],
    };
  }) as unknown as Fetcher & { asked: string[] };
  f.asked = asked;
  return f;
}

export async function extract(body: string | Buffer, opts: Parameters<typeof fetched>[1] & { table?: Record<string, string> } = {}): Promise<PageExtraction> {
  const res = fetched(body, opts);
  return extractPage(res, String(res.headers['content-type']), { fetch: tableFetcher(opts.table), config: loadConfig({}) });
}

export function page(head: string, body = '', htmlAttrs = ''): string {
  return `<!doctype html><html${htmlAttrs}><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
}
