/**
 * Page screenshots in headless Chromium (one browser for this file, closed in afterAll):
 * the PNG itself, the SSRF guard inside the browser (with the network walls up, then what the
 * page-level interception cannot see, with them down), and a whole record from the local server
 * with the five `page` fields, each URL served. The browser cases are skipped only when no
 * browser is installed (.ci/run installs Debian's chromium, so CI runs them).
 */
import { readdirSync } from 'node:fs';
import sharp from 'sharp';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import {
  browserAvailable,
  CHROMIUM_ARGS,
  closeBrowser,
  configureBrowser,
  NETWORK_WALLS,
  type NetRefusal,
  onNetRefusal,
  withBrowser as useSharedBrowser,
} from '../../lib/browser/browser';
import { captureScreenshot, runScreenshotJob } from '../../lib/browser/screenshot';
import { recallScreenshot } from '../../lib/browser/screenshot-memo';
import { VIEWPORT } from '../../lib/browser/tab';
import { loadConfig } from '../../lib/config';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import { assertConforms } from '../helpers/conformance';
import { type FixtureServer, startCountingServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, startTestServer, testConfig } from '../helpers/service';
import { articlePage } from '../page/fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: screenshot tests skipped\n`);

jest.setTimeout(60_000);

afterAll(async () => {
  await closeBrowser();
});

/** A page with large coloured blocks, so a blank capture is easy to tell apart. */
const COLOUR_PAGE = `<!doctype html><html><head><title>Colours</title><style>
  body { margin: 0; font: 32px sans-serif; }
  .a { background: #d03030; height: 300px; } .b { background: #3050d0; height: 300px; } .c { background: #30a050; height: 300px; }
</style></head><body><div class="a">Red</div><div class="b">Blue</div><div class="c">Green</div></body></html>`;

describe('screenshot', () => {
  let site: FixtureServer;
  beforeAll(async () => {
    site = await startFixtureServer({ '/': { body: COLOUR_PAGE }, '/article': { body: articlePage() } });
  });
  afterAll(() => site.close());

  withBrowser('renders the page at 1280x800: a PNG that is not blank', async () => {
    const config = { ...testConfig({ screenshots: 'on' }), screenshotQuietMs: 200 };
    const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
    const shot = await captureScreenshot(site.url('/'), { fetch, config });
    config.cleanup();
    expect(shot.png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const meta = await sharp(shot.png).metadata();
    expect({ width: meta.width, height: meta.height }).toEqual(VIEWPORT);
    expect(shot.png.length).toBeGreaterThan(2000);
    const stats = await sharp(shot.png).stats();
    // Red, blue and green blocks: every channel varies a lot; a blank (white) page would not.
    for (const ch of stats.channels.slice(0, 3)) expect(ch.stdev).toBeGreaterThan(40);
    const { data } = await sharp(shot.png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * VIEWPORT.width + x) * 3, (y * VIEWPORT.width + x) * 3 + 3)];
    expect(px(640, 150)).toEqual([0xd0, 0x30, 0x30]);
    expect(px(640, 450)).toEqual([0x30, 0x50, 0xd0]);
    expect(px(640, 750)).toEqual([0x30, 0xa0, 0x50]);
  });

  withBrowser('the job hosts the capture as an ImageSet', async () => {
    const config = { ...testConfig({ screenshots: 'on' }), screenshotQuietMs: 100 };
    const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const r = await runScreenshotJob({ url: site.url('/article') }, { fetch, blobs, config });
    config.cleanup();
    expect(r.reason).toBeUndefined();
    expect(r.screenshot?.original.width).toBe(1280);
    expect(r.screenshot?.original.height).toBe(800);
    expect(r.screenshot?.thumbnail.url).toMatch(/^http:\/\/assets\.test\/assets\//);
    // Its placeholders, as every hosted image's (test/media/placeholders.test.ts).
    expect(r.screenshot).toMatchObject({ dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/), blurhash: expect.any(String) });
  });

  test('no browser at the configured path: the job says so, nothing throws', async () => {
    const config = { ...testConfig({ screenshots: 'on', browserPath: '/nonexistent/chromium' }) };
    const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    await expect(runScreenshotJob({ url: site.url('/') }, { fetch, blobs, config })).resolves.toEqual({ reason: 'no browser' });
    config.cleanup();
  });
});

describe("a page that ends on the browser's error page: the job fails and stores nothing", () => {
  let site: FixtureServer;
  beforeAll(async () => {
    site = await startFixtureServer({ '/moved': { status: 302, headers: { location: '/elsewhere' } }, '/elsewhere': { body: COLOUR_PAGE } });
  });
  afterAll(() => site.close());

  withBrowser.each([
    // The route refuses the navigation: known before Chromium commits its error page.
    [
      'the metadata address, which the guard refuses',
      `location.href = 'http://169.254.169.254/latest/meta-data/';`,
      /error page: the navigation to http:\/\/169\.254\.169\.254\/latest\/meta-data\/ failed/,
    ],
    // The route answers the redirect and the browser's interception net fails the next hop: only the committed frame tells.
    ['an address of its own that redirects', `location.href = '/moved';`, /error page for http:\/\/public\.test:\d+\/elsewhere/],
    // Not an error page, but not a web page either.
    ['about:blank', `location.href = 'about:blank';`, /the browser's own page \(about:blank\)/],
  ])('sent to %s', async (_, script, why) => {
    site.route('/', { body: `<!doctype html><html><head><title>Leaving</title></head><body><h1>Leaving</h1><script>${script}</script></body></html>` });
    const url = `http://public.test:${site.port}/`;
    const config = { ...testConfig({ screenshots: 'on', allowPrivateNetworks: false }), screenshotQuietMs: 100 };
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    try {
      await expect(runScreenshotJob({ url }, { fetch: closedGuardFetcher([site.port]), blobs, config })).rejects.toThrow(why);
      // Nothing hosted, nothing remembered for the URL.
      expect(await recallScreenshot(blobs, url, config.screenshotMemoTtlMs)).toBeUndefined();
      expect(readdirSync(config.dataDir, { recursive: true })).toEqual([]);
    } finally {
      config.cleanup();
    }
  });
});

describe('the SSRF guard inside the browser', () => {
  withBrowser("the page's sub-requests to private addresses are refused and never reach them", async () => {
    const v4 = await startCountingServer('127.0.0.2', { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    const v6 = await startCountingServer('::1', { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    const site = await startFixtureServer();
    const pub = `http://public.test:${site.port}`;
    const targets = {
      img: `http://127.0.0.2:${v4.port}/img.png`,
      script: `http://[::1]:${v6.port}/script.js`,
      css: `http://private.test:${v4.port}/style.css`,
      frame: `http://127.0.0.2:${v4.port}/frame`,
      fetch: `http://localhost:${v4.port}/api`,
      xhr: `http://[::1]:${v6.port}/xhr`,
    };
    site.route('/', {
      body: `<!doctype html><html><head><title>Looks public</title>
        <link rel="stylesheet" href="${targets.css}">
        <script src="${targets.script}"></script>
        <link rel="preconnect" href="http://127.0.0.2:${v4.port}"><link rel="dns-prefetch" href="//private.test">
      </head><body><h1>Public page</h1>
        <img src="/ok.png"><img src="${targets.img}"><img src="/to-private">
        <iframe src="${targets.frame}"></iframe>
        <script>
          fetch(${JSON.stringify(targets.fetch)}).catch(() => {});
          const x = new XMLHttpRequest(); x.open('GET', ${JSON.stringify(targets.xhr)}); x.send();
          try { new WebSocket('ws://127.0.0.2:${v4.port}/ws'); } catch (e) {}
          navigator.sendBeacon && navigator.sendBeacon('http://127.0.0.2:${v4.port}/beacon', 'x');
        </script>
      </body></html>`,
    });
    site.route('/ok.png', {
      headers: { 'content-type': 'image/png' },
      body: await sharp({ create: { width: 2, height: 2, channels: 3, background: '#888' } })
        .png()
        .toBuffer(),
    });
    site.route('/to-private', { status: 302, headers: { location: `http://127.0.0.2:${v4.port}/redirected.png` } });

    // A closed guard: only the fixture's address is trusted (it plays a public host), as in test/fetch/safe-fetch.test.ts.
    const fetch = closedGuardFetcher([site.port, v4.port, v6.port], { 'public.test': '127.0.0.1', 'private.test': '127.0.0.2' });
    const config = { ...testConfig({ screenshots: 'on', allowPrivateNetworks: false }), screenshotQuietMs: 1000 };
    const seen: { url: string; outcome: string; detail?: string }[] = [];
    try {
      const shot = await captureScreenshot(`${pub}/`, { fetch, config, onRequest: (url, outcome, detail) => seen.push({ url, outcome, detail }) });
      expect((await sharp(shot.png).metadata()).width).toBe(1280);

      const outcome = (url: string) => seen.filter((s) => s.url === url).map((s) => s.outcome);
      expect(outcome(`${pub}/`)).toEqual(['fetched']);
      expect(outcome(`${pub}/ok.png`)).toEqual(['fetched']);
      for (const url of [targets.img, targets.script, targets.css, targets.frame, targets.fetch, targets.xhr]) {
        expect({ url, outcome: outcome(url) }).toEqual({ url, outcome: ['refused'] });
      }
      expect(seen.find((s) => s.url === `${pub}/to-private`)).toMatchObject({
        outcome: 'refused',
        detail: expect.stringMatching(/redirects to a URL that is not allowed/),
      });
      // Nothing reached the private servers: not a request, not even a TCP connection.
      expect({ v4: v4.connections, v6: v6.connections }).toEqual({ v4: 0, v6: 0 });
      expect([...v4.requests, ...v6.requests]).toEqual([]);
      // The fixture saw only the page and the allowed image (and the redirect's first hop).
      expect(site.requests.map((r) => r.url).sort()).toEqual(['/', '/ok.png', '/to-private']);
    } finally {
      config.cleanup();
      await Promise.all([v4.close(), v6.close(), site.close()]);
    }
  });
});

describe('what the route cannot see, with the network walls down', () => {
  // The proxy flags would stop everything below on their own. Here the browser runs without them, so a
  // vector is stopped only by the interception net (lib/browser/browser.ts) and the page policy
  // (lib/browser/route.ts), or reaches the forbidden listener.
  let saved: string[] = [];
  beforeAll(async () => {
    await closeBrowser();
    saved = [...CHROMIUM_ARGS];
    CHROMIUM_ARGS.splice(0, CHROMIUM_ARGS.length, ...saved.filter((a) => !NETWORK_WALLS.includes(a)));
  });
  afterAll(async () => {
    await closeBrowser();
    configureBrowser({});
    CHROMIUM_ARGS.splice(0, CHROMIUM_ARGS.length, ...saved);
  });

  withBrowser("shared and service workers, a dedicated worker's WebSocket, a nested worker's script: none reaches a forbidden listener", async () => {
    // The forbidden listener: 127.0.0.2, which the guard refuses (the control listener proves the browser reaches it).
    const forbidden = await startCountingServer('127.0.0.2', { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    const control = await startCountingServer('127.0.0.2', { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    const site = await startFixtureServer();
    const pub = `http://public.test:${site.port}`;
    // The page is made a secure context (test only), so it can try a service worker too.
    configureBrowser({ args: [`--unsafely-treat-insecure-origin-as-secure=${pub}`] });
    const http_ = `http://127.0.0.2:${forbidden.port}`;
    const ws = `ws://127.0.0.2:${forbidden.port}`;
    const blobWorker = (kind: 'SharedWorker' | 'Worker', code: string) =>
      `try { new ${kind}(URL.createObjectURL(new Blob([${JSON.stringify(code)}], { type: 'text/javascript' }))); } catch (e) {}`;
    const sharedCode = `
      fetch('${http_}/shared-fetch').catch(() => {});
      const x = new XMLHttpRequest(); x.open('GET', '${http_}/shared-xhr'); x.send();
      try { new WebSocket('${ws}/shared-ws'); } catch (e) {}`;
    const dedicatedCode = `
      try { new WebSocket('${ws}/worker-ws'); } catch (e) {}
      fetch('${http_}/worker-fetch').catch(() => {});
      ${blobWorker('Worker', `try { new WebSocket('${ws}/nested-ws'); } catch (e) {}`)}`;
    const serviceCode = `fetch('${http_}/service-fetch').catch(() => {}); try { new WebSocket('${ws}/service-ws'); } catch (e) {}`;
    site.route('/', {
      body: `<!doctype html><html><head><title>Workers</title></head><body><h1>Workers</h1><script>
        ${blobWorker('SharedWorker', sharedCode)}
        ${blobWorker('Worker', dedicatedCode)}
        try { new Worker('/worker.js'); } catch (e) {}
        // Playwright's service worker block replaces navigator.serviceWorker.register; the prototype's is intact.
        try { ServiceWorkerContainer.prototype.register.call(navigator.serviceWorker, '/sw.js').catch(() => {}); } catch (e) {}
      </script></body></html>`,
    });
    // A worker fetched through the route, whose own nested worker's script the route never sees.
    site.route('/worker.js', {
      headers: { 'content-type': 'text/javascript' },
      body: `try { new WebSocket('${ws}/fetched-worker-ws'); } catch (e) {} try { new Worker('/nested.js'); } catch (e) {}`,
    });
    site.route('/nested.js', { headers: { 'content-type': 'text/javascript' }, body: `try { new WebSocket('${ws}/nested-fetched-ws'); } catch (e) {}` });
    site.route('/sw.js', { headers: { 'content-type': 'text/javascript' }, body: serviceCode });

    const fetch = closedGuardFetcher([site.port, forbidden.port]);
    const config = { ...testConfig({ screenshots: 'on', allowPrivateNetworks: false }), screenshotQuietMs: 1000 };
    const seen: { url: string; outcome: string; detail?: string }[] = [];
    const net: NetRefusal[] = [];
    const stop = onNetRefusal((r) => net.push(r));
    try {
      // The walls are really down and 127.0.0.2 reachable: from this browser, a WebSocket that nothing
      // refuses (a bare page: no route, no policy) connects. With the walls up it could not.
      await useSharedBrowser(config, 20_000, async (browser) => {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await page.evaluate(
            `new Promise((resolve) => { const s = new WebSocket('ws://127.0.0.2:${control.port}/control'); s.onopen = s.onerror = s.onclose = resolve; setTimeout(resolve, 3000); })`,
          );
        } finally {
          await context.close();
        }
      });
      expect(control.connections).toBeGreaterThan(0);

      const shot = await captureScreenshot(`${pub}/`, { fetch, config, onRequest: (url, outcome, detail) => seen.push({ url, outcome, detail }) });
      expect((await sharp(shot.png).metadata()).width).toBe(1280);

      // Nothing reached the forbidden listener: not a request, not a WebSocket, not even a TCP connection.
      expect({ connections: forbidden.connections, requests: forbidden.requests }).toEqual({ connections: 0, requests: [] });
      // The dedicated workers ran: their fetches went through the route, which refused them.
      expect(seen.filter((s) => s.url === `${http_}/worker-fetch`).map((s) => s.outcome)).toEqual(['refused']);
      expect(seen.filter((s) => s.url === `${pub}/worker.js`).map((s) => s.outcome)).toEqual(['fetched']);
      // The shared worker was closed before it ran; the nested worker's and the service worker's
      // scripts, which no route saw and which would otherwise have gone out on the browser's own DNS
      // answer for the page's host, were failed by the net.
      expect(net).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'worker', type: 'shared_worker', url: expect.stringMatching(/^blob:http:\/\/public\.test:/) }),
          expect.objectContaining({ kind: 'request', url: `${pub}/nested.js` }),
          expect.objectContaining({ kind: 'request', url: `${pub}/sw.js` }),
        ]),
      );
      expect(site.requests.map((r) => r.url).sort()).toEqual(['/', '/worker.js']);
    } finally {
      stop();
      config.cleanup();
      await Promise.all([forbidden.close(), control.close(), site.close()]);
    }
  });
});

describe('a PAGE record from the local server', () => {
  test('has `page` with the five fields, and each URL serves its version', async () => {
    const site = await startFixtureServer({ '/2024/rivers.html': { body: articlePage() } });
    const server = await startTestServer({
      screenshots: HAS_BROWSER ? 'on' : 'off',
      screenshotWaitMs: 20_000,
      contentWaitMs: 20_000,
      jobWaitMs: 20_000,
      publicUrl: '',
    });
    try {
      const res = await fetch(`${server.url}/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ link: site.url('/2024/rivers.html') }),
      });
      expect(res.status).toBe(200);
      const record = (await res.json()) as any;
      assertConforms(record);
      expect(record.type).toBe('PAGE');
      const page = record.page;
      expect(page.estimatedReadingTimeInMinutes).toBe(6);
      const fields = ['estimatedReadingTimeInMinutes', 'htmlUrl', 'markdownUrl', 'rawTextUrl', ...(HAS_BROWSER ? ['screenshot'] : [])];
      expect(Object.keys(page).sort()).toEqual(fields.sort());

      const get = async (u: string) => {
        expect(u.startsWith(`${server.url}/assets/`)).toBe(true);
        const r = await fetch(u);
        return { status: r.status, type: r.headers.get('content-type'), body: Buffer.from(await r.arrayBuffer()) };
      };
      const html = await get(page.htmlUrl);
      expect(html).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
      expect(html.body.toString('utf8')).toMatch(/^<!doctype html>[\s\S]*<h1>How rivers shape stone<\/h1>[\s\S]*<h2>The slow work of water<\/h2>/);
      expect(html.body.toString('utf8')).not.toMatch(/<script|<nav/);
      const md = await get(page.markdownUrl);
      expect(md).toMatchObject({ status: 200, type: 'text/markdown; charset=utf-8' });
      expect(md.body.toString('utf8')).toMatch(/^# How rivers shape stone\n[\s\S]*^## Measuring it$[\s\S]*```python/m);
      expect(md.body.toString('utf8')).toContain(`[erosion primer](${site.origin}/science/erosion)`);
      const txt = await get(page.rawTextUrl);
      expect(txt).toMatchObject({ status: 200, type: 'text/plain; charset=utf-8' });
      expect(txt.body.toString('utf8')).toMatch(/^How rivers shape stone\n\n/);
      expect(txt.body.toString('utf8')).toContain('- Abrasion by sand');

      if (HAS_BROWSER) {
        for (const size of ['thumbnail', 'medium', 'large', 'original'] as const)
          expect(page.screenshot[size].url).toMatch(new RegExp(`^${server.url}/assets/`));
        expect(page.screenshot.original).toMatchObject({ width: 1280, height: 800 });
        const img = await get(page.screenshot.original.url);
        expect(img.status).toBe(200);
        expect((await sharp(img.body).metadata()).width).toBe(1280);
      }
    } finally {
      await server.close();
      server.cleanup();
      await site.close();
    }
  });
});
