/**
 * `npm run bench -- cpu-pool`: the page-content job's DOM work (lib/page/page-content-dom.ts
 * `readPageContent`: decode, DOM, Readability, sanitizer, text, versions) in-process and in the CPU
 * pool (lib/jobs/cpu-pool.ts, one thread per core):
 *  - one page at a time: the median per page (the pool adds the hand-over to a thread and back);
 *  - many pages at once (a burst of 4 per thread): the wall time of the burst and the longest
 *    event-loop stall meanwhile (in-process, the main thread is blocked for each page's parse).
 * Pages: the fixture article grown to 20, 100 and 300 KB; with BENCH_CORPUS=<dir> (a corpus
 * folder as test/bench/corpus.ts reads it) its first BENCH_PAGES (150) pages too, as p50/p90. BENCH_RUNS: runs (9).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { CpuPool } from '../../lib/jobs/cpu-pool.js';
import { type PageContentSource, readPageContent } from '../../lib/page/page-content-dom.js';
import { median } from './bench.js';
import { largeArticle } from './content.bench.js';

const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

function corpusPages(dir: string, limit: number): PageContentSource[] {
  const out: PageContentSource[] = [];
  for (const id of readdirSync(dir).sort()) {
    const body = path.join(dir, id, 'body.html');
    if (!existsSync(body)) continue;
    const meta = JSON.parse(readFileSync(path.join(dir, id, 'case.json'), 'utf8')) as { url?: string; contentType?: string };
    out.push({ url: meta.url ?? 'https://example.com/', bytesBase64: readFileSync(body).toString('base64'), contentType: meta.contentType });
    if (out.length >= limit) break;
  }
  return out;
}

/** Wall time of running every page at once (each from its own turn of the event loop), and the loop's longest stall meanwhile. */
async function burst(pages: PageContentSource[], run: (p: PageContentSource) => Promise<unknown>): Promise<{ ms: number; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = () => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  };
  const ticker = setInterval(tick, 1);
  const t0 = performance.now();
  await Promise.all(pages.map((p, i) => new Promise((r) => setTimeout(r, i)).then(() => run(p))));
  const ms = performance.now() - t0;
  tick();
  clearInterval(ticker);
  return { ms, stallMs };
}

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 9);
  const threads = availableParallelism();
  const pool = new CpuPool({ threads, maxQueue: 10_000 });
  const inProcess = async (p: PageContentSource) => readPageContent(p);
  const pooled = (p: PageContentSource) => pool.run('readPageContent', p);
  const url = 'https://news.example/2024/rivers.html';
  const fixture = (kb: number): PageContentSource => ({
    url,
    bytesBase64: Buffer.from(largeArticle(kb * 1024)).toString('base64'),
    contentType: 'text/html; charset=utf-8',
  });
  try {
    // Warm both: the threads load their modules, V8 optimizes the hot code.
    for (let i = 0; i < 2 * threads; i++) await Promise.all([inProcess(fixture(20)), pooled(fixture(20))]);
    process.stdout.write(`${threads} pool threads; runs = ${runs}\n`);
    for (const kb of [20, 100, 300]) {
      const page = fixture(kb);
      const times = async (fn: (p: PageContentSource) => Promise<unknown>) => {
        const t: number[] = [];
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now();
          await fn(page);
          t.push(performance.now() - t0);
        }
        return median(t);
      };
      const a = await times(inProcess);
      const b = await times(pooled);
      const many = Array.from({ length: 4 * threads }, () => page);
      const ba = await burst(many, inProcess);
      const bb = await burst(many, pooled);
      process.stdout.write(
        `${`${kb} KB article`.padEnd(16)} one page: in-process ${a.toFixed(1)} ms, pool ${b.toFixed(1)} ms;  ${many.length} at once: in-process ${ba.ms.toFixed(0)} ms (event loop stalled up to ${ba.stallMs.toFixed(0)} ms), pool ${bb.ms.toFixed(0)} ms (stalled up to ${bb.stallMs.toFixed(0)} ms)\n`,
      );
    }
    const dir = process.env.BENCH_CORPUS;
    if (dir) {
      const pages = corpusPages(dir, Number(process.env.BENCH_PAGES ?? 150));
      const each = async (fn: (p: PageContentSource) => Promise<unknown>) => {
        const t: number[] = [];
        for (const p of pages) {
          const t0 = performance.now();
          await fn(p);
          t.push(performance.now() - t0);
        }
        return t;
      };
      const a = await each(inProcess);
      const b = await each(pooled);
      const ba = await burst(pages, inProcess);
      const bb = await burst(pages, pooled);
      process.stdout.write(
        `corpus, ${pages.length} pages: one at a time p50/p90 in-process ${pct(a, 0.5).toFixed(1)}/${pct(a, 0.9).toFixed(1)} ms, pool ${pct(b, 0.5).toFixed(1)}/${pct(b, 0.9).toFixed(1)} ms; all at once: in-process ${ba.ms.toFixed(0)} ms (stalled up to ${ba.stallMs.toFixed(0)} ms), pool ${bb.ms.toFixed(0)} ms (stalled up to ${bb.stallMs.toFixed(0)} ms)\n`,
      );
    }
  } finally {
    await pool.close();
  }
}
