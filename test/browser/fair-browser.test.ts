/**
 * A fair browser: one hostile page does not starve every render. Four pages that never stop (two
 * endless loops, two timer storms whose bundle never arrives), sent with one real shell, as whole
 * previews through the local runner's browser lanes: each hostile page is stopped at its CPU cap
 * and fails with that reason, and the shell, queued behind them, is rendered. What the code
 * decides is asserted (the shell's rendered title, the looping pages' cap reason), not timings.
 * Skipped only when no browser is installed.
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { cpuCapReason, unresponsiveReason } from '../../lib/browser/page-watch';
import { loadConfig } from '../../lib/config';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler, recordingLog, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';
import { REACT_SHELL, shell } from './shell-fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: fair-browser tests skipped\n`);
jest.setTimeout(150_000);

/**
 * The CPU cap of this file's pages (the default is 3 s: a shorter one keeps the file short). It is
 * also how long a renderer may leave the CPU watch's poll unanswered before it is stopped
 * (`unresponsiveReason`). With four hostile pages and the shell on two busy cores (a fresh-clone CI
 * run, or four CPU hogs beside the test), the shell's own renderer was seen to miss a poll for
 * 1 s and be stopped ("the page stopped answering for 1000 ms"): the first case runs at 2 s. The
 * sixteen loopers' case keeps 1 s: each looper holds a lane until its watch stops it, and 2 s each
 * would crowd the shell's render cap (a run at 2 s failed there); it has not failed at 1 s.
 */
const SHELL_CASE_CAP_MS = 2000;
const CPU_CAP_MS = 1000;
/**
 * The renders' time cap, and the requests' budget: long, so that on a machine busy with other
 * suites (where a CPU second takes longer to come), or with a Chromium slow to stop a looping page
 * and open the next tab (156.0.8078.108 took 16 s for the four here), the hostile pages still end
 * at their CPU cap and the shell still gets its turn. What is asserted is what the code decides.
 */
const RENDER_CAP_MS = 45_000;

/** Scripts that never stop: an endless loop while the page is parsed, and a storm of busy timers on a page whose bundle never arrives. */
const LOOP = shell('while (true) {}', 'Loop');
const STORM = shell(
  'for (let i = 0; i < 64; i++) setInterval(() => { const t = performance.now(); while (performance.now() - t < 25) {} }, 0);',
  'Storm',
).replace('/app.js', '/never.js');
const HOSTILE = ['/loop-1', '/storm-1', '/loop-2', '/storm-2'];
/** Sixteen looping pages, each on a host of its own (`loop-N.test`). */
const LOOPERS = Array.from({ length: 16 }, (_, i) => `/looper-${i}`);

let site: FixtureServer;
let handler: TestHandler;
let handlers: TestHandler[] = [];
const log = recordingLog();
let fetch: ReturnType<typeof closedGuardFetcher>;

/**
 * A handler whose pages have `capMs` of CPU. Built when its case starts: the browser's lanes yield
 * to the demand of the last job runner built (functions/wiring.ts `setPageDemand`), which is then its own.
 */
function handlerWithCap(capMs: number): TestHandler {
  const made = createTestHandler({
    fetch,
    log,
    config: {
      render: 'auto',
      allowPrivateNetworks: false,
      browserConcurrency: 2,
      browserPageCpuMs: capMs,
      renderTimeoutMs: RENDER_CAP_MS,
      requestBudgetMs: 60_000,
      jobWaitMs: 55_000,
    },
  });
  handlers.push(made);
  return made;
}

beforeAll(async () => {
  site = await startFixtureServer();
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  for (const path of HOSTILE) site.route(path, page(path.startsWith('/loop') ? LOOP : STORM));
  for (const path of LOOPERS) site.route(path, page(LOOP));
  site.route('/never.js', () => {
    /* never answered */
  });
  site.route('/react', page(REACT_SHELL));
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  site.route('/ridge.png', { headers: { 'content-type': 'image/png' }, body: await png(900, 470) });
  fetch = closedGuardFetcher([site.port], (host) => (host.endsWith('.test') ? '127.0.0.1' : undefined));
});

afterAll(async () => {
  await closeBrowser();
  for (const h of handlers) h.cleanup();
  handlers = [];
  await site?.close();
});

const link = (path: string) => `http://public.test:${site.port}${path}`;
const preview = (path: string) => handler.post(JSON.stringify({ link: link(path) }));
/** The render of `path` as the preview's log line says it went. */
const rendered = (path: string) => log.lines.find((l) => l.message === 'preview' && l.extra?.link === link(path))?.extra?.rendered;
/** How often the hostile pages were asked for: once by each preview's fetch, once more by the browser when its render started. */
const hostileAsked = () => site.requests.filter((r) => HOSTILE.includes(r.url)).length;

/** A stop of the page's CPU watch: its CPU cap, its renderer too busy to answer for as long, or its lane given to a waiting page. */
const stoppedByItsWatch = (error: string | undefined, capMs = CPU_CAP_MS) =>
  error === cpuCapReason(capMs) ||
  error === unresponsiveReason(capMs) ||
  /^the page gave its lane to a page waiting for one, after \d+ ms of CPU/.test(error ?? '');

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

withBrowser('four pages that never stop and one real shell, in parallel: the shell is rendered, each hostile page is stopped by its CPU watch', async () => {
  handler = handlerWithCap(SHELL_CASE_CAP_MS);
  const hostile = HOSTILE.map((path) => preview(path));
  // The shell comes once two hostile pages hold both lanes and the other two wait: it is queued behind them.
  await until(() => hostileAsked() >= HOSTILE.length + 2);
  const res = await preview('/react');
  const hostileRes = await Promise.all(hostile);

  expect(res.statusCode).toBe(200);
  // The render's note first: a failure says why the shell was not rendered.
  expect(rendered('/react')).toEqual({ reason: 'empty #root with scripts', ok: true });
  expect(res.json).toMatchObject({ ok: true, title: 'Ridge trail guide', description: 'Twelve kilometres along the ridge, with the lake at the end.' });
  // Every hostile page's render was stopped by its CPU watch (its CPU cap measured, or, on a busy
  // machine, its renderer too busy to answer the poll for as long); its record keeps the static fields.
  for (const [i, path] of HOSTILE.entries()) {
    expect(rendered(path)).toEqual({ reason: 'empty #root with scripts', ok: false, error: expect.any(String) });
    expect(stoppedByItsWatch((rendered(path) as { error?: string } | undefined)?.error, SHELL_CASE_CAP_MS)).toBe(true);
    expect(hostileRes[i].json).toMatchObject({ ok: true, status: 200, title: path.startsWith('/loop') ? 'Loop' : 'Storm' });
  }
});

withBrowser(
  'sixteen looping pages on as many hosts, then a real shell: the shell is rendered; the looping pages give their lanes to the waiting ones',
  async () => {
    handler = handlerWithCap(CPU_CAP_MS);
    const links = LOOPERS.map((path, i) => `http://loop-${i}.test:${site.port}${path}`);
    const hostile = links.map((l) => handler.post(JSON.stringify({ link: l })));
    // The shell comes once every looping page is fetched and both lanes hold one: it waits behind fourteen.
    await until(() => site.requests.filter((r) => LOOPERS.includes(r.url)).length >= LOOPERS.length + 2);
    const res = await preview('/react');
    const hostileRes = await Promise.all(hostile);
    // The render's note first: a failure says why the shell was not rendered.
    const renders = log.lines.filter((l) => l.message === 'preview' && l.extra?.link === link('/react')).map((l) => l.extra?.rendered);
    expect(renders.at(-1)).toEqual({ reason: 'empty #root with scripts', ok: true });
    expect(res.json).toMatchObject({ ok: true, title: 'Ridge trail guide' });
    const errors = links.map(
      (l) => (log.lines.find((line) => line.message === 'preview' && line.extra?.link === l)?.extra?.rendered as { error?: string } | undefined)?.error,
    );
    for (const error of errors) expect(stoppedByItsWatch(error)).toBe(true);
    // Fourteen waited behind two lanes: lanes were given.
    expect(errors.filter((e) => e?.startsWith('the page gave its lane')).length).toBeGreaterThan(0);
    for (const r of hostileRes) expect(r.json).toMatchObject({ ok: true, status: 200, title: 'Loop' });
  },
);

withBrowser('after them, the browser serves the next render', async () => {
  const res = await preview('/react');
  expect(res.json).toMatchObject({ ok: true, title: 'Ridge trail guide' });
});
