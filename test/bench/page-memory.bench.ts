/**
 * A 3 MB HTML page previews with bounded memory: the whole pipeline (guarded fetch, charset,
 * streaming parse, field rules, language detection) runs against a loopback fixture server while
 * RSS is sampled every few milliseconds. Prints the peak RSS growth over the warmed-up baseline
 * and fails when it reaches 60 MB. `npm run bench -- page-memory`
 */
import { startFixtureServer } from '../helpers/fixture-server.js';
import { createTestHandler } from '../helpers/service.js';

const LIMIT_MB = 60;
const PAGE_BYTES = 3 * 1024 * 1024;

function bigPage(): string {
  const head = `<title>A very large page</title><meta property="og:title" content="A very large page"><meta name="description" content="Three megabytes of HTML.">
<script type="application/ld+json">{"@type":"Article","headline":"A very large page","inLanguage":"en"}</script><link rel="icon" href="/favicon.png" sizes="32x32">`;
  const block =
    '<div class="row"><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p><img src="/img/photo.jpg" alt="x" width="640" height="480"><a href="/next">next</a><span itemprop="keywords">a, b, c</span></div>\n';
  let body = '';
  const target = PAGE_BYTES - head.length - 200;
  const parts: string[] = [];
  let size = 0;
  while (size < target) {
    parts.push(block);
    size += block.length;
  }
  body = parts.join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
}

const mb = (n: number) => n / (1024 * 1024);

export async function run(): Promise<void> {
  const html = Buffer.from(bigPage());
  const server = await startFixtureServer({
    '/big': { body: html },
    '/small': { body: '<html lang="en"><head><title>small</title></head><body><p>warm up the pipeline and the language model once</p></body></html>' },
  });
  const svc = createTestHandler({ config: { maxPageBytes: 5 * 1024 * 1024 } });
  try {
    // Warm up: load cld3, compile code paths.
    await svc.post(JSON.stringify({ link: server.url('/small') }));
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    const t0 = performance.now();
    const res = await svc.post(JSON.stringify({ link: server.url('/big') }));
    const ms = performance.now() - t0;
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growth = mb(peak - baseline);
    process.stdout.write(
      `page: ${(html.length / 1024 / 1024).toFixed(2)} MB, preview ${ms.toFixed(0)} ms, ok=${res.json?.ok} title=${JSON.stringify(res.json?.title)}\n`,
    );
    process.stdout.write(
      `peak RSS growth: ${growth.toFixed(1)} MB (baseline ${mb(baseline).toFixed(1)} MB, peak ${mb(peak).toFixed(1)} MB, limit ${LIMIT_MB} MB)\n`,
    );
    if (!res.json?.ok || res.json?.title !== 'A very large page') throw new Error('the 3 MB page did not preview');
    if (growth >= LIMIT_MB) throw new Error(`peak RSS growth ${growth.toFixed(1)} MB is over ${LIMIT_MB} MB`);
  } finally {
    svc.cleanup();
    await server.close();
  }
}
