/**
 * Pages for the benches: every `<case>/body.html` with a URL and an HTML type of a corpus folder
 * (BENCH_CORPUS=<dir>: one folder per case, each with `body.html` and a `case.json` naming its `url`
 * and `contentType`; read in place, never copied into the project).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FetchResult } from '../../lib/fetch/types.js';

export interface BenchPage {
  name: string;
  contentType: string;
  /** The page as the preview's fetch gives it. */
  res: FetchResult;
}

export function benchPage(name: string, url: string, body: Buffer, contentType: string): BenchPage {
  return { name, contentType, res: { url, finalUrl: url, status: 200, headers: { 'content-type': contentType }, body, truncated: false, trail: [url] } };
}

export function corpusPages(dir: string): BenchPage[] {
  const pages: BenchPage[] = [];
  for (const id of readdirSync(dir).sort()) {
    const body = path.join(dir, id, 'body.html');
    if (!existsSync(body)) continue;
    const meta = JSON.parse(readFileSync(path.join(dir, id, 'case.json'), 'utf8')) as { url?: string | null; contentType?: string };
    if (!meta.url || (meta.contentType && !/html/i.test(meta.contentType))) continue;
    pages.push(benchPage(id, meta.url, readFileSync(body), meta.contentType ?? 'text/html'));
  }
  return pages;
}

/** The q-quantile of `xs` (nearest rank). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
