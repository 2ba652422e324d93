/**
 * `npm run bench -- fair-browser`: how long one real shell's preview takes, and whether it is
 * rendered, when it is sent just after 4, 8 and 16 shells that loop forever: on as many hosts
 * (each its own registrable domain), and all on one host. Whole previews through the local
 * runner and the shared headless Chromium, with the service's defaults (the 25 s budget, the
 * 8 s render cap, the 3 s CPU cap) and two browser lanes; screenshots off. Every host is an
 * invented name the test resolver maps to the loopback fixture. Each scenario uses names of its
 * own, so what the browser remembers of one scenario's hosts does not help the next.
 */
import { browserAvailable } from '../../lib/browser/availability.js';
import { closeBrowser } from '../../lib/browser/browser.js';
import { REACT_SHELL, shell } from '../browser/shell-fixtures.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { closedGuardFetcher, createTestHandler, recordingLog } from '../helpers/service.js';

const LOOP = shell('while (true) {}', 'Loop');
const LANES = 2;

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
  site.route('/loop', { body: LOOP });
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
    process.stdout.write(`budget ${c.requestBudgetMs} ms, render cap ${c.renderTimeoutMs} ms, CPU cap ${c.browserPageCpuMs} ms, ${LANES} lanes\n`);
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
        const asked = () => site.requests.filter((r) => r.url === '/loop' && String(r.headers.host).startsWith(`s${scenario}-`)).length;
        const t0 = performance.now();
        const hostile = Array.from({ length: loopers }, (_, i) => preview(link(loopHost(i), '/loop')));
        // The shell comes once the loopers are fetched and two of them hold both lanes.
        while (asked() < loopers + LANES) await new Promise((resolve) => setTimeout(resolve, 10));
        const real = link(`s${scenario}-real.test`, '/react');
        const t1 = performance.now();
        const res = await preview(real);
        const ms = performance.now() - t1;
        await Promise.all(hostile);
        const rendered = log.lines.find((l) => l.message === 'preview' && l.extra?.link === real)?.extra?.rendered;
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
