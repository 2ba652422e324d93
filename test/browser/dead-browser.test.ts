/**
 * A browser that dies under a load (crashed, or closed under it) costs the job one more try, on
 * a fresh browser, within the same cap (lib/browser/screenshot.ts `withLoadedPage`): the fixture
 * closes the shared browser while the browser is asking it for the page, and the capture still
 * comes back, from the second browser. The error test that decides it is pure.
 */
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { browserGone, captureScreenshot } from '../../lib/browser/screenshot';
import { loadConfig } from '../../lib/config';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { testConfig } from '../helpers/service';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
jest.setTimeout(60_000);

afterAll(() => closeBrowser());

test('the errors of a browser that is gone, and not those of a page', () => {
  expect(browserGone(new Error('page.goto: Target page, context or browser has been closed'))).toBe(true);
  expect(browserGone(new Error('browser.newContext: Browser has been closed'))).toBe(true);
  expect(browserGone(new Error('Protocol error (Page.navigate): Target closed'))).toBe(true);
  expect(browserGone(new Error('page.goto: net::ERR_NAME_NOT_RESOLVED'))).toBe(false);
  expect(browserGone(new Error('the page ended on chrome-error://chromewebdata/'))).toBe(false);
  expect(browserGone(new Error('browser CPU cap reached'))).toBe(false);
  expect(browserGone(undefined)).toBe(false);
});

describe('a browser that dies under the load', () => {
  let site: FixtureServer;
  let asked = 0;
  beforeAll(async () => {
    site = await startFixtureServer();
    site.route('/', async (_req, res) => {
      asked++;
      // The first time, the browser is closed while it waits for this page.
      if (asked === 1) await closeBrowser();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><head><title>Still here</title></head><body style="background:#c33"><h1>Still here</h1></body></html>');
    });
  });
  afterAll(() => site.close());

  withBrowser('is replaced once, within the cap: the capture comes from a fresh browser', async () => {
    const config = { ...testConfig({ screenshots: 'on' }), screenshotQuietMs: 100 };
    const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
    try {
      const shot = await captureScreenshot(site.url('/'), { fetch, config });
      expect(shot.png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(asked).toBe(2);
    } finally {
      config.cleanup();
    }
  });
});
