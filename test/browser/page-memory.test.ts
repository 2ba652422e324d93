/**
 * Memory caps for pages: a shell whose script allocates past the page's cap (JavaScript arrays
 * past the heap cap, typed arrays touched in a loop, a 200 MB text node) fails its render cleanly:
 * the record keeps the static fields, the browser and the process stay up, and the next render
 * works. Whole previews through the real handler, fixtures on loopback. Each hostile page stops
 * by itself at 2 GB, so a cap that failed fails the test instead of the machine. Skipped only when
 * no browser is installed.
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { loadConfig } from '../../lib/config';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler, recordingLog, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';
import { REACT_SHELL, shell } from './shell-fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: page-memory tests skipped\n`);
jest.setTimeout(60_000);

/** This file's page cap (the default is 512 MB): the heap cap is half of it. */
const PAGE_MB = 256;

/** Each page titles itself "Allocated" if it got through its 2 GB: the cap did not hold. */
const HOSTILE: Record<string, string> = {
  // JavaScript arrays of numbers, 1 MB each, in V8's heap: V8 stops the renderer at the heap cap.
  '/heap': shell('const a = []; for (let i = 0; i < 2048; i++) a.push(new Array(1 << 17).fill(i + 0.5)); document.title = "Allocated";', 'Heap'),
  // Typed arrays, outside V8's heap, each touched: the memory watch kills the renderer.
  '/typed': shell(
    'const a = []; for (let i = 0; i < 2048; i++) { const t = new Uint8Array(1 << 20); t.fill(i); a.push(t); } document.title = "Allocated";',
    'Typed',
  ),
  // One 200 MB text node: its layout takes Chromium to gigabytes.
  '/text': shell('document.getElementById("root").append("x".repeat(200e6)); document.title = "Allocated";', 'Text'),
};

let site: FixtureServer;
let handler: TestHandler;
const log = recordingLog();

beforeAll(async () => {
  site = await startFixtureServer();
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  for (const [path, body] of Object.entries(HOSTILE)) site.route(path, page(body));
  site.route('/react', page(REACT_SHELL));
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  site.route('/ridge.png', { headers: { 'content-type': 'image/png' }, body: await png(900, 470) });
  handler = createTestHandler({
    fetch: closedGuardFetcher([site.port]),
    log,
    config: { render: 'auto', allowPrivateNetworks: false, browserPageMb: PAGE_MB, renderTimeoutMs: 15_000 },
  });
});

afterAll(async () => {
  await closeBrowser();
  handler?.cleanup();
  await site?.close();
});

const link = (path: string) => `http://public.test:${site.port}${path}`;
const preview = (path: string) => handler.post(JSON.stringify({ link: link(path) }));
const rendered = (path: string) =>
  log.lines.findLast((l) => l.message === 'preview' && l.extra?.link === link(path))?.extra?.rendered as { ok: boolean; error?: string } | undefined;

withBrowser.each([
  ['JavaScript arrays past the heap cap', '/heap', 'Heap', /^the page (crashed|passed its memory cap)/],
  ['typed arrays touched in a loop', '/typed', 'Typed', /^the page passed its memory cap \(\d+ MB of 256 MB\)/],
  ['a 200 MB text node', '/text', 'Text', /^the page passed its memory cap \(\d+ MB of 256 MB\)/],
])('%s: the render fails cleanly, and the next render works', async (_, path, title, reason) => {
  const res = await preview(path);
  expect(res.statusCode).toBe(200);
  // The record is the static page's; the render failed with the cap's reason.
  expect(res.json).toMatchObject({ ok: true, status: 200, title });
  expect(rendered(path)).toMatchObject({ ok: false, error: expect.stringMatching(reason) });
  // The browser is still there: the next shell renders.
  const next = await preview('/react');
  expect(next.json).toMatchObject({ ok: true, title: 'Ridge trail guide' });
  expect(rendered('/react')).toMatchObject({ ok: true });
});
