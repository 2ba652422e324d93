/**
 * `npm run bench -- fair-browser`: how long one real shell's preview takes, and whether it is
 * rendered, when it is sent just after 4, 8 and 16 shells that loop forever: on as many hosts
 * (each its own registrable domain), and all on one host. Whole previews through the local
 * runner and the shared headless Chromium, with the service's defaults (the 25 s budget, the
 * 8 s render cap, the 3 s CPU cap) and the browser lanes of `auto` (`BENCH_LANES=n` for n); screenshots off. Every host is an
 * invented name the test resolver maps to the loopback fixture. Each scenario uses names of its
 * own, so what the browser remembers of one scenario's hosts does not help the next.
 */
import { browserAvailable } from '../../lib/browser/availability.js';
import { closeBrowser } from '../../lib/browser/browser.js';
import { browserLanes } from '../../lib/browser/lanes.js';
import { REACT_SHELL, shell } from '../browser/shell-fixtures.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { closedGuardFetcher, createTestHandler, recordingLog } from '../helpers/service.js';

const LOOP = shell('while (true) {}', 'Loop');
/** The browser lanes (`BENCH_LANES`; default: the service's `auto`). */
const LANES: number | 'auto' = process.env.BENCH_LANES ? Number(process.env.BENCH_LANES) : 'auto';

interface Figure {
  loopers: number;
  hosts: 'distinct' | 'one';
  ms: number;
  title: string;
  rendered: unknown;
  allMs: number;
}

export async function run(): Promise<void> {
  const site = await startFixtureServer();
  // One path per looper: previews of one link would share one flight (lib/preview/flights.ts).
  for (let i = 0; i < 16; i++) site.route(`/loop-${i}`, { body: LOOP });
  site.route('/react', { body: REACT_SHELL });
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  const fetch = closedGuardFetcher([site.port], (host) => (host.endsWith('.test') ? '127.0.0.1' : undefined));
  const log = recordingLog();
  const handler = createTestHandler({
    fetch,
    log,
    config: { render: 'auto', screenshots: 'off', allowPrivateNetworks: false, browserConcurrency: LANES, jobWaitMs: 20_000 },
  });
  try {
    if (!browserAvailable(handler.config)) {
      process.stdout.write(`no browser at ${handler.config.browserPath}: fair-browser bench skipped\n`);
      return;
    }
    const c = handler.config;
    const lanes = browserLanes(c);
    process.stdout.write(`budget ${c.requestBudgetMs} ms, render cap ${c.renderTimeoutMs} ms, CPU cap ${c.browserPageCpuMs} ms, ${lanes} lanes\n`);
    const link = (host: string, path: string) => `http://${host}:${site.port}${path}`;
    const preview = (url: string) => handler.post(JSON.stringify({ link: url }));
    // A warm browser, as a running server has.
    await preview(link('warm.test', '/react'));
    const figures: Figure[] = [];
    let scenario = 0;
    for (const loopers of [4, 8, 16]) {
      for (const hosts of ['distinct', 'one'] as const) {
        scenario++;
        // `FAIR_ONLY=16-one`: that scenario only.
        if (process.env.FAIR_ONLY && process.env.FAIR_ONLY !== `${loopers}-${hosts}`) continue;
        const loopHost = (i: number) => (hosts === 'one' ? `s${scenario}-loop.test` : `s${scenario}-loop-${i}.test`);
        const asked = () => site.requests.filter((r) => r.url.startsWith('/loop-') && String(r.headers.host).startsWith(`s${scenario}-`)).length;
        const t0 = performance.now();
        const hostile = Array.from({ length: loopers }, (_, i) => preview(link(loopHost(i), `/loop-${i}`)));
        // The shell comes once the loopers are fetched and as many as there are lanes hold them (or 5 s on).
        const waitUntil = performance.now() + 5000;
        while (asked() < loopers + Math.min(loopers, lanes) && performance.now() < waitUntil) await new Promise((resolve) => setTimeout(resolve, 10));
        const real = link(`s${scenario}-real.test`, '/react');
        const t1 = performance.now();
        const res = await preview(real);
        const ms = performance.now() - t1;
        await Promise.all(hostile);
        const line = log.lines.find((l) => l.message === 'preview' && l.extra?.link === real);
        const rendered = line?.extra?.rendered;
        if (process.env.FAIR_DEBUG) process.stdout.write(`${JSON.stringify(line?.extra)}\n`);
        const figure = { loopers, hosts, ms: Math.round(ms), title: res.json?.title, rendered, allMs: Math.round(performance.now() - t0) };
        figures.push(figure);
        process.stdout.write(`${JSON.stringify(figure)}\n`);
      }
    }
    process.stdout.write('\n| loopers | hosts | the real shell | its title | all previews done |\n|---|---|---|---|---|\n');
    for (const f of figures) {
      const ok = (f.rendered as { ok?: boolean } | undefined)?.ok ? 'rendered' : 'not rendered';
      process.stdout.write(`| ${f.loopers} | ${f.hosts} | ${(f.ms / 1000).toFixed(1)} s, ${ok} | ${f.title} | ${(f.allMs / 1000).toFixed(1)} s |\n`);
    }
  } finally {
    await closeBrowser();
    handler.cleanup();
    await site.close();
  }
}
