/**
 * A fair browser: hostile pages do not starve a real one. One real shell sent just after 4, 8 and
 * 16 shells that loop forever, on as many hosts (each its own site) and on one host, as whole
 * previews through the local runner's two browser lanes (lib/browser/fair-lanes.ts): the shell is
 * rendered, and every looping page is cut (its render fails, its record keeps the static title,
 * and its site is remembered as hostile). What the code decides is asserted, not timings: the
 * figures are `npm run bench -- fair-browser`'s (docs/benchmarks.md). Each scenario has host names
 * of its own, so what the lanes remember of one does not help the next. Every host is an invented
 * name the test resolver maps to the loopback fixture. Skipped only when no browser is installed.
 *
 * Known defect, left open: the shell must still be rendered within the request's budget, after
 * about N / 2 first slices of the looping pages. On a 2-core machine at load 15 or more a slice
 * took up to 4.5 s of a lane, and the 16-on-distinct-hosts case (once the 4-on-distinct-hosts
 * one) missed the budget: that case depends on the machine's load. The order the lanes decide is
 * checked without a browser or a clock in fair-lanes.test.ts.
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { FIRST_SLICE_CPU_MS, sharedLanes } from '../../lib/browser/fair-lanes';
import { cpuCapReason, unresponsiveReason } from '../../lib/browser/page-watch';
import { loadConfig } from '../../lib/config';
import { TooLateToStart } from '../../lib/jobs/concurrency-gate';
import { DEADLINE_EXCEEDED } from '../../lib/jobs/deadline';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler, recordingLog, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';
import { REACT_SHELL, shell } from './shell-fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: fair-browser tests skipped\n`);
jest.setTimeout(60_000);

const LANES = 2;
/** The pages' full CPU cap (the default is 3 s: a shorter one keeps the file short); their first slice is FIRST_SLICE_CPU_MS. */
const CPU_CAP_MS = 1000;
/**
 * The renders' time cap: long, so that on a machine busy with other suites (where a CPU second
 * takes longer to come) the looping pages still end at a CPU cap, not at this one.
 */
const RENDER_CAP_MS = 15_000;

/** Scripts that never stop: an endless loop while the page is parsed, and a storm of busy timers on a page whose bundle never arrives. */
const LOOP = shell('while (true) {}', 'Loop');
const STORM = shell(
  'for (let i = 0; i < 64; i++) setInterval(() => { const t = performance.now(); while (performance.now() - t < 25) {} }, 0);',
  'Storm',
).replace('/app.js', '/never.js');

let site: FixtureServer;
let handler: TestHandler;
const log = recordingLog();

beforeAll(async () => {
  site = await startFixtureServer();
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  site.route('/loop', page(LOOP));
  site.route('/storm', page(STORM));
  site.route('/never.js', () => {
    /* never answered */
  });
  site.route('/react', page(REACT_SHELL));
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  site.route('/ridge.png', { headers: { 'content-type': 'image/png' }, body: await png(900, 470) });
  const fetch = closedGuardFetcher([site.port], (host) => (host.endsWith('.test') ? '127.0.0.1' : undefined));
  handler = createTestHandler({
    fetch,
    log,
    config: {
      render: 'auto',
      allowPrivateNetworks: false,
      browserConcurrency: LANES,
      browserPageCpuMs: CPU_CAP_MS,
      renderTimeoutMs: RENDER_CAP_MS,
      requestBudgetMs: 28_000,
      jobWaitMs: 20_000,
    },
  });
});

afterAll(async () => {
  await closeBrowser();
  handler?.cleanup();
  await site?.close();
});

const link = (host: string, path: string) => `http://${host}:${site.port}${path}`;
const preview = (url: string) => handler.post(JSON.stringify({ link: url }));
/** The render of `url` as the preview's log line says it went. */
const rendered = (url: string) =>
  log.lines.find((l) => l.message === 'preview' && l.extra?.link === url)?.extra?.rendered as { reason: string; ok: boolean; error?: string } | undefined;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** How a looping page's render may end when it was loaded: at its first slice (when its full turn could not start in time), at its full CPU cap, or too busy to answer for as long. */
const CAP_REASONS = [cpuCapReason(FIRST_SLICE_CPU_MS), cpuCapReason(CPU_CAP_MS), unresponsiveReason(CPU_CAP_MS)];
/**
 * And when it was not (on a machine too busy for every looping page to get its turn within its
 * budget): never started, its deadline too near, or still running at its job's deadline.
 */
const CUT_REASONS = [...CAP_REASONS, new TooLateToStart(0).message, DEADLINE_EXCEEDED];

let scenario = 0;

describe.each([4, 8, 16])('one real shell sent just after %i looping shells', (loopers) => {
  withBrowser.each(['distinct', 'one'] as const)('on %s host(s): the shell is rendered, every looping page is cut', async (hosts) => {
    scenario++;
    const prefix = `s${scenario}-`;
    const hostile = Array.from({ length: loopers }, (_, i) => {
      const host = hosts === 'one' ? `${prefix}loop.test` : `${prefix}loop-${i}.test`;
      // Every fourth a timer storm whose bundle never arrives, the rest endless loops.
      return link(host, `${i % 4 === 3 ? '/storm' : '/loop'}?n=${i}`);
    });
    const asked = () => site.requests.filter((r) => /^\/(loop|storm)/.test(r.url) && String(r.headers.host).startsWith(prefix)).length;
    const hostileRes = hostile.map((url) => preview(url));
    // The shell comes once the looping pages were fetched and two of them hold both lanes.
    await until(() => asked() >= loopers + LANES);
    const real = link(`${prefix}real.test`, '/react');
    const res = await preview(real);
    const done = await Promise.all(hostileRes);

    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, title: 'Ridge trail guide', description: 'Twelve kilometres along the ridge, with the lake at the end.' });
    expect(rendered(real)).toEqual({ reason: 'empty #root with scripts', ok: true });
    const lanes = sharedLanes(LANES);
    expect(lanes.isHostile(`${prefix}real.test`)).toBe(false);
    for (const [i, url] of hostile.entries()) {
      expect(done[i].json).toMatchObject({ ok: true, status: 200, title: url.includes('/storm') ? 'Storm' : 'Loop' });
      // Its render failed, or the request's budget ended while it still waited (no render outcome then).
      const render = rendered(url);
      if (render === undefined) continue;
      expect(render).toEqual({ reason: 'empty #root with scripts', ok: false, error: expect.any(String) });
      expect(CUT_REASONS).toContain(render.error);
      // A page stopped at a cap was cut at its first slice (or its site already was): its site is remembered.
      if (CAP_REASONS.includes(render.error as string)) expect(lanes.isHostile(new URL(url).hostname)).toBe(true);
    }
    // What the looping pages' jobs left behind (a turn past its job's deadline) ends: no lane stays held.
    await until(() => lanes.inFlight === 0 && lanes.queued === 0);
  });
});

withBrowser('after them, the browser serves the next render', async () => {
  const url = link('after.test', '/react');
  const res = await preview(url);
  expect(res.json).toMatchObject({ ok: true, title: 'Ridge trail guide' });
  expect(rendered(url)).toEqual({ reason: 'empty #root with scripts', ok: true });
});
