/**
 * The `screenshot` job: the page rendered in headless Chromium at 1280x800, captured once it has
 * loaded and its network has been quiet for a moment, as a PNG that becomes the `page.screenshot`
 * ImageSet, remembered for its URL (lib/browser/screenshot-memo.ts).
 *
 * The browser is shared and kept warm (lib/browser/browser.ts); each capture takes a fresh tab,
 * opened ahead of it (lib/browser/tab.ts), whose requests all go through the SSRF guard
 * (lib/browser/route.ts describes its three layers).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import type { ImageSet } from '../contract/link.js';
import type { Fetcher } from '../fetch/types.js';
import type { JobContext } from '../jobs/context.js';
import type { ScreenshotJobInput, ScreenshotJobResult } from '../jobs/kinds.js';
import { hostImageBytes } from '../media/hosted-bytes.js';
import { browserAvailable } from './availability.js';
import { type BrowserConfig, retireBrowser, singleProcess, withBrowser } from './browser.js';
import { stopScripts, watchPage } from './page-watch.js';
import { PageTraffic, type RequestOutcome } from './route.js';
import { rememberScreenshot } from './screenshot-memo.js';
import { browserPage, openSpareTab, type Tab, takeTab } from './tab.js';
import { TimeCap } from './time-cap.js';

/** Kept at the end of the time cap for the network quiet and the capture itself. */
const CAPTURE_RESERVE_MS = 2_000;
/** The network-quiet wait ends at most this long after the load event. */
const QUIET_CAP_MS = 1_000;
/** How often the quiet wait looks again while a request is running. */
const QUIET_POLL_MS = 25;

export interface CaptureOptions {
  fetch: Fetcher;
  config: JobContext['config'];
  signal?: AbortSignal;
  /** Called for each request the page made, with what happened (tests, logs). */
  onRequest?: (url: string, outcome: RequestOutcome, detail?: string) => void;
}

export interface Capture {
  png: Buffer;
  refused: number;
  requests: number;
}

/** Renders `url` and returns the PNG of the first screen. Throws when the page cannot be loaded or ends on the browser's own page. */
export async function captureScreenshot(url: string, options: CaptureOptions): Promise<Capture> {
  const loaded = await withLoadedPage(url, { ...options, capMs: options.config.screenshotTimeoutMs, quietMs: options.config.screenshotQuietMs }, (tab) =>
    capturePng(tab),
  );
  return { png: loaded.value, refused: loaded.refused, requests: loaded.requests };
}

/** The job handler: capture, host the PNG as the four image sizes, remember it for the URL. */
export async function runScreenshotJob(input: ScreenshotJobInput, ctx: JobContext): Promise<ScreenshotJobResult> {
  if (!browserAvailable(ctx.config)) return { reason: 'no browser' };
  const capturedAt = Date.now();
  const shot = await captureScreenshot(input.url, { fetch: ctx.fetch, config: ctx.config, signal: ctx.signal });
  const screenshot = await hostScreenshot(input.url, shot.png, capturedAt, ctx);
  return screenshot ? { screenshot, refused: shot.refused } : { reason: 'the screenshot could not be hosted', refused: shot.refused };
}

/** A captured PNG hosted as the four image sizes and remembered for the URL (the screenshot job's, or a render's). */
export async function hostScreenshot(url: string, png: Buffer, capturedAt: number, ctx: JobContext): Promise<ImageSet | undefined> {
  const screenshot = await hostImageBytes(png, ctx);
  if (screenshot) await rememberScreenshot(ctx.blobs, { url, screenshot, at: capturedAt }, ctx.config.screenshotMemoTtlMs);
  return screenshot;
}

export interface LoadOptions extends Omit<CaptureOptions, 'config'> {
  /** The browser, and the page's caps (LINKPREVIEW_BROWSER_PAGE_MB, LINKPREVIEW_BROWSER_PAGE_CPU_MS). */
  config: BrowserConfig & Pick<JobContext['config'], 'browserPageCpuMs'>;
  /** The hard cap of the whole load: the browser's launch or tab, the page, the quiet wait and `read`. */
  capMs: number;
  /** The network-quiet window after the load event (at most QUIET_CAP_MS). */
  quietMs: number;
}

/**
 * Loads `url` in a fresh tab of the shared browser, through the guarded route, waits for the load
 * event and a moment of network quiet (within the cap: a page that never goes quiet is read as it
 * is), then reads it with `read`. The tab is closed after, and the next one opened. Throws, and
 * `read`'s value is dropped, when the page ended on the browser's own error or interstitial page
 * (`browserPage` in lib/browser/tab.ts): such a load has failed. So does a page that passes one of
 * its caps (its time, its CPU, its memory: lib/browser/page-watch.ts), with that reason; its
 * scripts are stopped before its tab is closed.
 */
export async function withLoadedPage<T>(
  url: string,
  options: LoadOptions,
  read: (tab: Tab) => Promise<T>,
): Promise<{ value: T; refused: number; requests: number }> {
  const cap = new TimeCap(options.capMs, options.signal);
  try {
    const used: { browser?: Browser } = {};
    try {
      return await loadInBrowser(url, options, read, { cap, used });
    } catch (err) {
      // The browser died under the load (it crashed, or was closed: the error says so, or the
      // browser is no longer connected): once more on a fresh one, within the same cap, when
      // enough of it is left for a load.
      if (cap.reason || cap.left() < RETRY_MIN_MS || !(await diedUnder(err, used.browser))) throw err;
      return await loadInBrowser(url, options, read, { cap, used: {} });
    }
  } finally {
    cap.end();
  }
}

/**
 * Whether the load failed because its browser died: the error says so, or the browser is no
 * longer connected. A navigation aborted (net::ERR_ABORTED: what a page being torn down reports)
 * waits up to a second for the browser's end to show.
 */
async function diedUnder(err: unknown, browser: Browser | undefined): Promise<boolean> {
  if (browserGone(err)) return true;
  if (!browser) return false;
  if (!browser.isConnected()) return true;
  if (!/ERR_ABORTED/.test((err as Error)?.message ?? '')) return false;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => done(false), 1000);
    const done = (gone: boolean) => {
      clearTimeout(timer);
      browser.off('disconnected', onGone);
      resolve(gone);
    };
    const onGone = () => done(true);
    browser.on('disconnected', onGone);
    if (!browser.isConnected()) done(true);
  });
}

/** Below this much of its cap left, a load whose browser died is not tried again. */
const RETRY_MIN_MS = 1500;

/** An error of a browser that is gone (closed, crashed, disconnected), not of the page. */
export function browserGone(err: unknown): boolean {
  return /Target page, context or browser has been closed|Browser has been closed|browser has disconnected|Target closed|Browser closed|Connection closed/i.test(
    (err as Error)?.message ?? '',
  );
}

/** One load in the shared browser, within `run.cap`; `run.used` learns the browser it used. */
async function loadInBrowser<T>(
  url: string,
  options: LoadOptions,
  read: (tab: Tab) => Promise<T>,
  run: { cap: TimeCap; used: { browser?: Browser } },
): Promise<{ value: T; refused: number; requests: number }> {
  const { cap, used } = run;
  return await withBrowser(options.config, Math.max(1000, cap.left() - CAPTURE_RESERVE_MS), async (browser) => {
    used.browser = browser;
    const tab = await tabWithin(browser, cap);
    const traffic = new PageTraffic(options.fetch, cap.signal, () => cap.left(), options.onRequest);
    tab.hold(traffic);
    let unwatch: (() => void) | undefined;
    try {
      unwatch = await cap.race(watchPage(tab, options.config.browserPageCpuMs, (reason) => cap.stop(reason)));
      const value = await loadAndRead({ tab, url, traffic, cap, quietMs: options.quietMs }, read);
      return { value, refused: traffic.refused, requests: traffic.requests };
    } catch (err) {
      // A cap's reason over the error it caused (a crashed page's "Page crashed", a race's abort);
      // a crash's or a kill's event may land just after the error it caused.
      if (!cap.reason) await new Promise((resolve) => setImmediate(resolve));
      throw cap.reason ? new Error(cap.reason) : err;
    } finally {
      unwatch?.();
      if (cap.reason) stopScripts(tab);
      // A one-process browser ends with its page's context: retired now, not under the next job.
      if (singleProcess()) retireBrowser(browser);
      else openSpareTab(browser, tab.close());
    }
  });
}

/** The page loaded, quiet, read, and checked to be the link's page (not the browser's own). */
async function loadAndRead<T>(
  { tab, url, traffic, cap, quietMs }: { tab: Tab; url: string; traffic: PageTraffic; cap: TimeCap; quietMs: number },
  read: (tab: Tab) => Promise<T>,
): Promise<T> {
  await loadPage(tab.page, url, cap);
  const quiet = () => cap.race(networkQuiet(traffic, quietMs, Math.min(QUIET_CAP_MS, cap.left() - CAPTURE_RESERVE_MS / 2), cap.signal));
  await quiet();
  // What was read must be the link's page: a page that ended on the browser's error or
  // interstitial page (its script sent it where the guard refuses, to a name that does not
  // resolve) is a failed load, for the render and the screenshot alike.
  const notThePage = async () => {
    const where = await cap.race(browserPage(tab, traffic));
    if (where) throw new Error(`the page ended on ${where}`);
  };
  let value: T;
  try {
    value = await cap.race(read(tab));
  } catch (err) {
    // A read that failed as the page left (its script navigating on while it was read: Chromium
    // cannot capture a frame being replaced) is read once more once the page settled, and the
    // check then says where it went.
    if (cap.reason) throw err;
    await quiet();
    await notThePage();
    value = await cap.race(read(tab));
  }
  await notThePage();
  return value;
}

/** A tab within the cap; one that comes after it is closed. */
async function tabWithin(browser: Browser, cap: TimeCap): Promise<Tab> {
  const taking = takeTab(browser);
  try {
    return await cap.race(taking);
  } catch (err) {
    void taking.then(
      (t) => t.close(),
      () => {},
    );
    throw err;
  }
}

/** Navigates to `url` (it must answer), then waits for the load event up to the cap: a page that never finishes loading is captured as it is. */
async function loadPage(page: Page, url: string, cap: TimeCap): Promise<void> {
  const timeout = () => Math.max(500, cap.left() - CAPTURE_RESERVE_MS);
  const response = await cap.race(page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeout() }));
  if (!response) throw new Error('the page did not load');
  await cap.race(page.waitForLoadState('load', { timeout: timeout() }).catch(() => {}));
}

/** Resolves once none of the page's requests has been running for `quietMs`, or after `maxMs`. */
async function networkQuiet(traffic: PageTraffic, quietMs: number, maxMs: number, signal: AbortSignal): Promise<void> {
  const until = performance.now() + maxMs;
  for (;;) {
    const quiet = traffic.quietFor();
    const left = until - performance.now();
    if (quiet >= quietMs || left <= 0) return;
    await sleep(Math.min(quiet > 0 ? quietMs - quiet : QUIET_POLL_MS, left), undefined, { signal });
  }
}

/** The first screen as a PNG, with Chromium's fast PNG encoder (lossless; about half the time of the default one). */
export async function capturePng(tab: Tab): Promise<Buffer> {
  const { data } = await tab.cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true, captureBeyondViewport: false });
  return Buffer.from(data, 'base64');
}
