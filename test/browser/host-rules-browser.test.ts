/**
 * The host rules in the real browser (Chromium through the project's playwright-core): a `render`
 * rule renders the pages it matches, even a page with good static metadata that `auto` would never
 * render; a `deny` rule holds for the browser's own requests, which go through the guarded fetcher
 * (lib/browser/route.ts): a shell whose script fetches, loads an image and a script on a denied host
 * renders, and the fixture's request log proves the browser never asked that host. Whole previews
 * through the real handler, every name the one loopback fixture. Skipped only when no browser is
 * installed (.ci/run installs Debian's chromium).
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { loadConfig } from '../../lib/config';
import { hostRulesOf } from '../../lib/fetch/host-rules';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler, recordingLog } from '../helpers/service';
import { ARTICLE, shell } from './shell-fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: browser host rule tests skipped\n`);
jest.setTimeout(60_000);

let site: FixtureServer;
const log = recordingLog();
const at = (host: string, path: string) => `http://${host}:${site.port}${path}`;
/** `host/path` of every request the fixture saw. */
const asked = () => site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`);
const renderLine = () => log.lines.filter((l) => l.message === 'preview').at(-1)?.extra?.rendered;

beforeAll(async () => {
  site = await startFixtureServer();
  await site.alsoOn('127.0.0.2');
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  // A page with full static metadata: `auto` never renders it; its script rewrites its og:title.
  site.route(
    '/tides',
    page(
      `<!doctype html><html><head><title>Tide tables</title><meta property="og:title" content="Tide tables"><meta name="description" content="High and low water for the week."><script src="/tides.js"></script></head><body><main><p>${ARTICLE}</p></main></body></html>`,
    ),
  );
  site.route('/tides.js', {
    headers: { 'content-type': 'text/javascript' },
    body: `document.querySelector('meta[property="og:title"]').setAttribute('content', 'Tide tables, as the script wrote them');`,
  });
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  for (const p of ['/beacon', '/pixel.png', '/tracker.js']) site.route(p, { headers: { 'content-type': 'text/plain' }, body: 'x' });
});

afterAll(async () => {
  await closeBrowser();
  await site?.close();
});
beforeEach(() => {
  site.requests.length = 0;
});

/** A preview of `link` with the rules, through the closed guard carrying the same table (the browser's requests take it). */
async function preview(rules: string, link: string) {
  const config = {
    render: 'auto' as const,
    allowPrivateNetworks: false,
    renderTimeoutMs: 8000,
    hostRules: loadConfig({ LINKPREVIEW_HOST_RULES: rules }).hostRules,
  };
  // denied.test's names are the fixture at an address of their own: a denied host's address is denied for every name.
  const fetch = closedGuardFetcher([site.port], (host) => (/(^|\.)denied(-too)?\.test$/.test(host) ? '127.0.0.2' : '127.0.0.1'), {
    hostRules: hostRulesOf(config),
    trustedAddresses: ['127.0.0.1', '127.0.0.2'],
  });
  const h = createTestHandler({ fetch, log, config });
  try {
    const res = await h.post(JSON.stringify({ link }));
    expect(res.statusCode).toBe(200);
    return res;
  } finally {
    h.cleanup();
  }
}

withBrowser('a render rule renders the pages of its hosts, a page with full static metadata too; other hosts stay unrendered', async () => {
  const plain = await preview('*.apps.test=render', at('public.test', '/tides'));
  expect(plain.json).toMatchObject({ ok: true, title: 'Tide tables' });
  expect(renderLine()).toBeUndefined();
  expect(asked()).not.toContain('public.test/tides.js');

  const res = await preview('*.apps.test=render', at('www.apps.test', '/tides'));
  expect(res.json).toMatchObject({ ok: true, title: 'Tide tables, as the script wrote them', description: 'High and low water for the week.' });
  expect(renderLine()).toEqual({ reason: 'LINKPREVIEW_HOST_RULES', ok: true });
  expect(res.headers['server-timing']).toMatch(/render;dur=[\d.]+/);
  expect(asked()).toContain('www.apps.test/tides.js');
});

withBrowser("deny holds for the browser's own requests: a shell's fetch, image and script on a denied host are never asked", async () => {
  const link = at('public.test', '/reaching-denied');
  site.route('/reaching-denied', { headers: { 'content-type': 'text/html; charset=utf-8' }, body: shellFor(at('cdn.denied.test', '')) });
  // Without the rule the browser asks the host for all three (what the rule takes away).
  const open = await preview('', link);
  expect(open.json).toMatchObject({ ok: true, title: 'Harbour webcam' });
  expect(
    asked()
      .filter((a) => a.startsWith('cdn.denied.test/'))
      .sort(),
  ).toEqual(['cdn.denied.test/beacon', 'cdn.denied.test/pixel.png', 'cdn.denied.test/tracker.js']);

  site.requests.length = 0;
  const res = await preview('denied.test=deny', link);
  // Rendered all the same: the title from the rendered DOM, and nothing of the denied host asked.
  expect(res.json).toMatchObject({ ok: true, title: 'Harbour webcam' });
  expect(renderLine()).toMatchObject({ ok: true });
  expect(asked()).toContain('public.test/app.js');
  expect(asked().filter((a) => a.includes('denied.test'))).toEqual([]);
});

withBrowser("deny holds on the denied host's address: the browser's requests to its IP literal, and to another name of it, are never made", async () => {
  for (const origin of [`http://127.0.0.2:${site.port}`, at('alias.denied-too.test', '')]) {
    site.route('/reaching-address', { headers: { 'content-type': 'text/html; charset=utf-8' }, body: shellFor(origin) });
    site.requests.length = 0;
    const res = await preview('denied.test=deny', at('public.test', '/reaching-address'));
    expect(res.json).toMatchObject({ ok: true, title: 'Harbour webcam' });
    expect(asked()).toContain('public.test/app.js');
    expect(asked().filter((a) => /^(127\.0\.0\.2|alias\.denied-too\.test)\//.test(a))).toEqual([]);
  }
});

/** The reaching shell with its denied origin filled in. */
function shellFor(origin: string): string {
  return shell(
    `
    document.title = 'Harbour webcam';
    document.getElementById('root').innerHTML = '<article><h1>Harbour webcam</h1><p>${ARTICLE}</p></article>';
    fetch('${origin}/beacon').catch(() => {});
    const img = new Image(); img.src = '${origin}/pixel.png';
    const s = document.createElement('script'); s.src = '${origin}/tracker.js'; document.head.appendChild(s);
  `,
    'Webcam App',
  );
}
