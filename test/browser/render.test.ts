/**
 * Pages built by JavaScript (LINKPREVIEW_RENDER): a single-page app's shell is rendered in the
 * headless browser before extraction, through the browser's real, guarded network route, and the
 * record's fields and page versions come from the rendered DOM; a page with good static metadata
 * is never rendered. Whole previews through the real handler, fixtures on loopback. The cases are
 * skipped only when no browser is installed (.ci/run installs Debian's chromium).
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { recallScreenshot } from '../../lib/browser/screenshot-memo';
import { loadConfig } from '../../lib/config';
import { type CountingServer, type FixtureServer, startCountingServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler, recordingLog, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';
import { ARTICLE, FETCH_SHELL, REACT_SHELL, shell, VUE_SHELL } from './shell-fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: render tests skipped\n`);
jest.setTimeout(60_000);

let site: FixtureServer;
let priv: CountingServer;
let handler: TestHandler;
const log = recordingLog();

beforeAll(async () => {
  site = await startFixtureServer();
  priv = await startCountingServer('127.0.0.3');
  const image = await png(900, 470);
  const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
  site.route('/react', page(REACT_SHELL));
  site.route('/start', { status: 302, headers: { location: '/react' } });
  site.route('/fetching', page(FETCH_SHELL));
  site.route('/vue', page(VUE_SHELL));
  site.route('/app.js', { headers: { 'content-type': 'text/javascript' }, body: '/* the bundle */' });
  site.route('/api/post.json', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Lake ice report', body: ARTICLE }) });
  site.route('/ridge.png', { headers: { 'content-type': 'image/png' }, body: image });
  // A static page with full metadata: its script must never be asked for (it is not rendered).
  site.route(
    '/static',
    page(
      `<!doctype html><html><head><title>Tide tables</title><meta name="description" content="High and low water for the week."><meta property="og:title" content="Tide tables"><script src="/never.js"></script></head><body><div id="root"></div></body></html>`,
    ),
  );
  site.route('/never.js', { headers: { 'content-type': 'text/javascript' }, body: '' });
  // A shell whose script reaches for a private address, the metadata address and a WebSocket.
  site.route(
    '/reaching',
    page(
      shell(`
    document.title = 'Reached nothing';
    fetch('http://127.0.0.3:${priv.port}/secret').catch(() => {});
    fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});
    try { new WebSocket('ws://127.0.0.3:${priv.port}/'); } catch (e) {}
    const img = new Image(); img.src = 'http://127.0.0.3:${priv.port}/pixel.png';
  `),
    ),
  );
  // A shell whose scripts never go quiet.
  site.route(
    '/busy',
    page(
      shell(`
    document.title = 'Never quiet';
    document.getElementById('root').innerHTML = '<p>${ARTICLE}</p>';
    setInterval(() => fetch('/api/post.json?' + Math.random()).catch(() => {}), 40);
  `),
    ),
  );
  // Shells whose script sends the browser where the guard refuses it (the metadata address, once the
  // page has loaded) or to a name that does not resolve (while the page is parsed): Chromium shows its
  // own error page, titled with the address and saying it "is unreachable".
  site.route('/to-metadata', page(shell(`addEventListener('load', () => { location.href = 'http://169.254.169.254/latest/meta-data/'; });`, 'Ferry Times')));
  site.route('/to-nowhere', page(shell(`location.replace('http://nowhere.invalid/');`, 'Ferry Times')));
  // The closed guard (as in production): the fixture's address is trusted, 127.0.0.3 is not.
  const fetch = closedGuardFetcher([site.port, priv.port], guardedNames);
  // A roomy render cap (the default is 8 s): the first render here also starts the browser, which
  // Chromium 156.0.8078.108 did slowly under the suite's load; what is asserted is what the render
  // gives, not its time (the cap itself is the `capped` handler's, below).
  handler = createTestHandler({ fetch, log, config: { render: 'auto', allowPrivateNetworks: false, renderTimeoutMs: 20_000, contentWaitMs: 20_000 } });
});

afterAll(async () => {
  await closeBrowser();
  handler?.cleanup();
  await site?.close();
  await priv?.close();
});

/** Every name resolves to the fixture's address, but the `.invalid` ones, which do not resolve. */
const guardedNames = (host: string) => (host.endsWith('.invalid') ? undefined : '127.0.0.1');

const preview = async (path: string) => {
  const res = await handler.post(JSON.stringify({ link: `http://public.test:${site.port}${path}` }));
  expect(res.statusCode).toBe(200);
  return res;
};
const asked = (path: string) => site.requests.filter((r) => r.url.split('?')[0] === path).length;
const renderLine = () => log.lines.filter((l) => l.message === 'preview').at(-1)?.extra?.rendered;

withBrowser('a React-like shell: title, description, og:image and the article from the rendered page; status and trail from the fetch', async () => {
  const res = await preview('/start');
  expect(res.json).toMatchObject({
    ok: true,
    type: 'PAGE',
    status: 200,
    title: 'Ridge trail guide',
    description: 'Twelve kilometres along the ridge, with the lake at the end.',
    redirected: true,
    redirectionTrail: [`http://public.test:${site.port}/start`, `http://public.test:${site.port}/react`],
  });
  expect(res.json.image?.medium?.url).toMatch(/^http:\/\/assets\.test\//);
  expect(asked('/ridge.png')).toBeGreaterThan(0);
  // The page versions are made from the rendered DOM.
  expect(res.json.page?.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
  expect(res.headers['server-timing']).toMatch(/render;dur=[\d.]+/);
  expect(renderLine()).toEqual({ reason: 'empty #root with scripts', ok: true });
});

withBrowser('a shell that loads its content with fetch() from its own origin', async () => {
  const res = await preview('/fetching');
  expect(res.json).toMatchObject({ ok: true, title: 'Lake ice report' });
  expect(asked('/api/post.json')).toBeGreaterThan(0);
});

withBrowser('a Vue-like shell that writes its meta tags with insertAdjacentHTML', async () => {
  const res = await preview('/vue');
  expect(res.json).toMatchObject({ ok: true, title: 'Harbour market, Saturdays', description: 'Fish, bread and flowers from seven.' });
});

withBrowser('a static page with full metadata is never rendered: its script is never asked for', async () => {
  const res = await preview('/static');
  expect(res.json).toMatchObject({ ok: true, title: 'Tide tables', description: 'High and low water for the week.' });
  expect(asked('/never.js')).toBe(0);
  expect(res.headers['server-timing']).not.toMatch(/render;/);
  expect(renderLine()).toBeUndefined();
});

withBrowser('a shell reaching for a private address, the metadata address and a WebSocket: all refused, the record has the rendered title', async () => {
  const res = await handler.post(JSON.stringify({ link: `http://public.test:${site.port}/reaching` }));
  expect(res.json).toMatchObject({ ok: true, title: 'Reached nothing' });
  expect({ connections: priv.connections, requests: priv.requests }).toEqual({ connections: 0, requests: [] });
});

withBrowser('a shell whose scripts never go quiet: the record comes back within the cap, with what the render had', async () => {
  const res = await preview('/busy');
  expect(res.json).toMatchObject({ ok: true, title: 'Never quiet' });
  expect(renderLine()).toMatchObject({ ok: true });
});

withBrowser('a render past its cap (the bundle never arrives): the record goes out with the static fields', async () => {
  site.route('/stuck.js', () => {
    /* never answered */
  });
  site.route('/stuck', {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: shell('', 'Stuck App').replace('/app.js', '/stuck.js'),
  });
  const fetch = closedGuardFetcher([site.port, priv.port], guardedNames);
  const capped = createTestHandler({ fetch, log, config: { render: 'auto', allowPrivateNetworks: false, renderTimeoutMs: 1500 } });
  try {
    const res = await capped.post(JSON.stringify({ link: `http://public.test:${site.port}/stuck` }));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, status: 200, title: 'Stuck App' });
    expect(renderLine()).toMatchObject({ reason: 'empty #root with scripts', ok: false });
  } finally {
    capped.cleanup();
  }
});

withBrowser('with screenshots on, one page load serves the render and the screenshot', async () => {
  const fetch = closedGuardFetcher([site.port, priv.port], guardedNames);
  const both = createTestHandler({ fetch, config: { render: 'auto', screenshots: 'on', screenshotWaitMs: 20_000, allowPrivateNetworks: false } });
  try {
    site.route('/shared', { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: VUE_SHELL });
    const res = await both.post(JSON.stringify({ link: `http://public.test:${site.port}/shared` }));
    expect(res.json).toMatchObject({ ok: true, title: 'Harbour market, Saturdays' });
    expect(res.json.page?.screenshot?.medium?.url).toMatch(/^http:\/\/assets\.test\//);
    // The fetch, and one page load in the browser: no second load for the screenshot.
    expect(asked('/shared')).toBe(2);
    expect(res.headers['server-timing']).not.toMatch(/screenshot;/);
  } finally {
    both.cleanup();
  }
});

describe("a shell that ends on Chromium's error page: a failed render, the static fields, no screenshot", () => {
  let shots: TestHandler;
  let unrendered: TestHandler;
  beforeAll(() => {
    const fetch = closedGuardFetcher([site.port, priv.port], guardedNames);
    shots = createTestHandler({ fetch, log, config: { render: 'auto', screenshots: 'on', screenshotWaitMs: 20_000, allowPrivateNetworks: false } });
    unrendered = createTestHandler({ fetch, config: { render: 'off', allowPrivateNetworks: false } });
  });
  afterAll(() => {
    shots?.cleanup();
    unrendered?.cleanup();
  });

  withBrowser.each([
    ['the metadata address (the guard refuses it), once the page has loaded', '/to-metadata'],
    ['a name that does not resolve, while the page is parsed', '/to-nowhere'],
  ])('sent to %s', async (_, path) => {
    const link = `http://public.test:${site.port}${path}`;
    const plain = await unrendered.post(JSON.stringify({ link }));
    const res = await shots.post(JSON.stringify({ link }));
    expect(res.statusCode).toBe(200);
    // The render was tried, and failed on the error page.
    expect(renderLine()).toMatchObject({ reason: 'empty #root with scripts', ok: false, error: expect.stringMatching(/error page/) });
    // The record is the static page's: its title and description, as without a render.
    expect(res.json).toMatchObject({ ok: true, status: 200, title: 'Ferry Times' });
    expect({ title: res.json.title, description: res.json.description }).toEqual({ title: plain.json.title, description: plain.json.description });
    expect(JSON.stringify(res.json)).not.toMatch(/169\.254|nowhere\.invalid|unreachable|can.t be reached|ERR_/i);
    // No screenshot: none in the record, none remembered for the link.
    expect(res.json.page?.screenshot).toBeUndefined();
    expect(await recallScreenshot(shots.deps.blobs, link, shots.config.screenshotMemoTtlMs)).toBeUndefined();
  });
});
