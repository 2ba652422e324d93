/**
 * `npm run bench -- render`: what rendering an app shell costs a preview, on loopback, through the
 * real handler (local adapters, the shared headless Chromium, screenshots off): each shell of
 * test/browser/shell-fixtures.ts previewed with LINKPREVIEW_RENDER=auto (the `render` phase and the
 * total, p50 / p90), and the same shells with renders off (the static preview: a baseline of the
 * same run). Needs a browser (Debian's chromium).
 */
import { buildLocalDeps } from '../../functions/wiring.js';
import { browserAvailable } from '../../lib/browser/availability.js';
import { closeBrowser } from '../../lib/browser/browser.js';
import type { Config } from '../../lib/config.js';
import { createApiHandler } from '../../lib/http/api-handler.js';
import { ARTICLE, FETCH_SHELL, REACT_SHELL, VUE_SHELL } from '../browser/shell-fixtures.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../helpers/service.js';
import { png } from '../platforms/harness.js';
import { median } from './bench.js';

const p90 = (v: number[]) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * 0.9))];
const phase = (timing: string, name: string) => Number(new RegExp(`(?:^|, )${name};dur=([0-9.]+)`).exec(timing)?.[1] ?? 0);

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 10);
  const probe = testConfig();
  if (!browserAvailable(probe)) {
    process.stdout.write(`no browser at ${probe.browserPath}: render bench skipped\n`);
    return;
  }
  probe.cleanup();
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  const site = await startFixtureServer({
    '/react': page(REACT_SHELL),
    '/fetching': page(FETCH_SHELL),
    '/vue': page(VUE_SHELL),
    '/app.js': { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' },
    '/api/post.json': { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Lake ice report', body: ARTICLE }) },
    '/ridge.png': { headers: { 'content-type': 'image/png' }, body: await png(900, 470) },
  });
  try {
    for (const [mode, overrides] of [
      ['render auto', { render: 'auto' }],
      ['render off (static, same run)', { render: 'off' }],
    ] as [string, Partial<Config>][]) {
      const config = testConfig({ ...overrides });
      const handler = createApiHandler(buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' }));
      const renders: number[] = [];
      const totals: number[] = [];
      for (const path of ['/react', '/fetching', '/vue']) {
        for (let i = 0; i <= runs; i++) {
          // A new URL each time: nothing of an earlier preview (the page versions' memo) is reused.
          const link = site.url(`${path}?run=${i}-${Date.now()}`);
          const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link })));
          const out = (await handler(event, { awsRequestId: 'bench' })) as { headers: Record<string, string> };
          if (i === 0) continue; // the first of each shell warms the browser
          renders.push(phase(out.headers['server-timing'], 'render'));
          totals.push(phase(out.headers['server-timing'], 'total'));
        }
      }
      process.stdout.write(
        `${mode}: ${renders.length} previews of 3 shells; render p50 ${median(renders).toFixed(0)} / p90 ${p90(renders).toFixed(0)} ms; total p50 ${median(totals).toFixed(0)} / p90 ${p90(totals).toFixed(0)} ms\n`,
      );
      config.cleanup();
    }
  } finally {
    await closeBrowser();
    await site.close();
  }
}
