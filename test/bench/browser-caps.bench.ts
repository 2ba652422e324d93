/**
 * `npm run bench -- browser-caps`: what a hostile page can take of the browser, and how it ends:
 * each page loaded alone in the shared headless Chromium (lib/browser, the real caps), with the
 * peak memory of the browser's processes (every process under this one: the sum of their resident
 * sets, which counts shared pages once per process, and of their private memory, `RssAnon`), read
 * from /proc every 50 ms, and the load's outcome and time. The pages: 3 GB of JavaScript arrays,
 * 3 GB of typed arrays touched, a 200 MB text node, a script in an endless loop, and a small shell
 * as the baseline. Each hostile page stops by itself at 3 GB. Needs a browser and /proc.
 * `BENCH_BROWSER=lambda`: the AWS layer's Chromium (@sparticuz/chromium, unpacked to /tmp, with its
 * flags: one process, as the browser worker runs it, one lane).
 */
import { readFileSync } from 'node:fs';
import { browserAvailable } from '../../lib/browser/availability.js';
import { closeBrowser, configureBrowser } from '../../lib/browser/browser.js';
import { withLoadedPage } from '../../lib/browser/screenshot.js';
import type { Fetcher } from '../../lib/fetch/types.js';
import { descendants } from '../helpers/proc-tree.js';
import { testConfig } from '../helpers/service.js';

const PAGES: Record<string, string> = {
  'shell (baseline)': `<title>Shell</title><div id="root"></div><script>document.title = 'Rendered'; document.getElementById('root').innerHTML = '<p>${'Text. '.repeat(200)}</p>';</script>`,
  '3 GB of JavaScript arrays':
    '<title>x</title><script>const a = []; for (let i = 0; i < 3072; i++) a.push(new Array(1 << 17).fill(i + 0.5)); document.title = "allocated";</script>',
  '3 GB of typed arrays':
    '<title>x</title><script>const a = []; for (let i = 0; i < 3072; i++) { const t = new Uint8Array(1 << 20); t.fill(i); a.push(t); } document.title = "allocated";</script>',
  'a 200 MB text node': '<title>x</title><body><script>document.body.append("x".repeat(200e6)); document.title = "allocated";</script>',
  'an endless loop': '<title>x</title><script>while (true) {}</script>',
};

/** The pages above, at http://bench.test/<index>. */
const fetch: Fetcher = async (url) => {
  const body = Object.values(PAGES)[Number(new URL(url).pathname.slice(1))] ?? '';
  return { url, finalUrl: url, status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(body), truncated: false, trail: [url] };
};

/** The browser's memory now: resident and private, summed over its processes, in MB. */
function memory(): { rss: number; private: number } {
  let rss = 0;
  let priv = 0;
  for (const pid of descendants(process.pid)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      priv += Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      /* gone */
    }
  }
  return { rss, private: priv };
}

export async function run(): Promise<void> {
  const lambda = process.env.BENCH_BROWSER === 'lambda';
  const config = testConfig({ renderTimeoutMs: 8000, ...(lambda ? { browserConcurrency: 1 } : {}) });
  if (lambda) {
    const { lambdaBrowser } = await import('../../functions/browser-worker.js');
    const browser = await lambdaBrowser();
    configureBrowser(browser);
    config.browserPath = browser.executablePath;
    process.stdout.write(`the AWS layer's Chromium: ${browser.executablePath}\n`);
  }
  try {
    if (!browserAvailable(config)) {
      process.stdout.write(`no browser at ${config.browserPath}: browser-caps bench skipped\n`);
      return;
    }
    process.stdout.write(`page cap ${config.browserPageMb} MB (heap ${Math.floor(config.browserPageMb / 2)} MB), CPU cap ${config.browserPageCpuMs} ms\n`);
    for (const [i, name] of Object.keys(PAGES).entries()) {
      const peak = { rss: 0, private: 0 };
      const sampler = setInterval(() => {
        const now = memory();
        peak.rss = Math.max(peak.rss, now.rss);
        peak.private = Math.max(peak.private, now.private);
      }, 50);
      const t0 = performance.now();
      const outcome = await withLoadedPage(`http://bench.test/${i}`, { fetch, config, capMs: config.renderTimeoutMs, quietMs: 100 }, (tab) =>
        tab.page.title(),
      ).then(
        (r) => `loaded ("${r.value}")`,
        (err: Error) => `failed: ${err.message.split('\n')[0]}`,
      );
      clearInterval(sampler);
      process.stdout.write(
        `${name}: ${outcome} in ${Math.round(performance.now() - t0)} ms; peak ${(peak.rss / 1024).toFixed(2)} GB resident, ${(peak.private / 1024).toFixed(2)} GB private\n`,
      );
    }
  } finally {
    await closeBrowser();
    configureBrowser({});
    config.cleanup();
  }
}
