/**
 * One headless Chromium per process, launched on first use through playwright-core (no browser
 * download: the executable is Debian's `chromium`, a path set by LINKPREVIEW_BROWSER_PATH, or on
 * AWS the binary that @sparticuz/chromium unpacks from its layer). It is closed after a minute
 * without jobs, and relaunched if it dies.
 *
 * The browser itself never reaches the network. The requests of a page's frames and dedicated
 * workers are intercepted and answered by the guarded fetcher (context.route in
 * lib/browser/route.ts, which also refuses WebSockets). What that interception cannot see is
 * refused here, at the DevTools protocol level, by the interception net every launch installs
 * before it hands the browser out (`installInterceptionNet`): shared and service workers are closed
 * before their first instruction, and any request the page-level route did not answer is failed.
 * As the last wall, what is not a request at all (preconnects, DNS prefetch, WebRTC, WebTransport)
 * meets a proxy that does not exist and a host resolver that resolves nothing (`NETWORK_WALLS`).
 * The browser asks for nothing of its own either (no DNS probe, background networking, component
 * update, safe-browsing list, metrics: `QUIET_SWITCHES` and `QUIET_FEATURES` in
 * lib/browser/switches.ts), and each launch watches its pages' memory (lib/browser/memory-watch.ts).
 */
import { accessSync, constants } from 'node:fs';
import type { Browser, CDPSession } from 'playwright-core';
import type { Config } from '../config.js';
import { browserExecutable, launchArgs } from './availability.js';
import { browserLanes, pageHeapMb, singleProcessCapMb } from './lanes.js';
import { watchMemory } from './memory-watch.js';
import { chromiumArgs } from './switches.js';

/** What the shared browser is launched with: where it is, and the figures its caps follow from (lib/browser/lanes.ts). */
export type BrowserConfig = Pick<Config, 'browserPath' | 'browserPageMb' | 'browserConcurrency'>;

export { browserAvailable, configureBrowser } from './availability.js';
export { CHROMIUM_ARGS, NETWORK_WALLS } from './switches.js';

const IDLE_CLOSE_MS = 60_000;
let current: Promise<Browser> | undefined;
/** The browser `current` gave the last job. */
let latest: Browser | undefined;
/** Browsers on their way out (`retireBrowser`): a launch waits until they are gone. */
let retiring: Promise<void> = Promise.resolve();
let users = 0;
let idleTimer: NodeJS.Timeout | undefined;

/**
 * Whether the browser runs as one process (the AWS layer's `--single-process`). Such a browser
 * takes one browser context in its life: closing it, or opening a second, ends the whole browser
 * (measured with @sparticuz/chromium 153), so it is retired after its page instead of keeping a
 * spare tab.
 */
export function singleProcess(): boolean {
  return launchArgs().includes('--single-process');
}

/**
 * Ends `browser` after its page (a one-process browser), instead of letting a context close end it
 * under the next job: the next job launches a new one, once this one is gone.
 */
export function retireBrowser(browser: Browser): void {
  if (latest === browser) {
    current = undefined;
    latest = undefined;
  }
  closing.add(browser);
  retiring = retiring.then(() => browser.close().catch(() => {}));
}

/** The browsers this process closes itself (closeBrowser, retireBrowser): their end is no page's crash. */
const closing = new WeakSet<Browser>();

/** Whether `browser` is being closed by this process (its disconnection is not a page's doing: lib/browser/page-watch.ts). */
export function closedHere(browser: Browser): boolean {
  return closing.has(browser);
}

/** Runs `fn` with the shared browser (launched on demand). */
export async function withBrowser<T>(config: BrowserConfig, launchTimeoutMs: number, fn: (browser: Browser) => Promise<T>): Promise<T> {
  if (idleTimer) {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  }
  users++;
  try {
    if (!current) {
      current = launch(config, launchTimeoutMs);
      latest = undefined;
    }
    let browser = await current;
    if (!browser.isConnected()) {
      current = launch(config, launchTimeoutMs);
      latest = undefined;
      browser = await current;
    }
    latest = browser;
    return await fn(browser);
  } catch (err) {
    // A failed launch is not kept: the next job tries again.
    if (
      current &&
      !(await current.then(
        (b) => b.isConnected(),
        () => false,
      ))
    )
      current = undefined;
    throw err;
  } finally {
    users--;
    if (users === 0 && current) {
      idleTimer = setTimeout(() => {
        void closeBrowser();
      }, IDLE_CLOSE_MS);
      idleTimer.unref();
    }
  }
}

async function launch(config: BrowserConfig, timeoutMs: number): Promise<Browser> {
  await retiring;
  const executablePath = browserExecutable(config);
  accessSync(executablePath, constants.X_OK); // a clear error when there is no browser
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: false, // root in containers and Lambda; the page is isolated by the network walls instead
    args: chromiumArgs(launchArgs(), { heapMb: pageHeapMb(config.browserPageMb) }),
    timeout: timeoutMs,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  browser.on('disconnected', () => {
    current = undefined;
  });
  try {
    await installInterceptionNet(browser);
    await watchMemory(
      browser,
      { pageMb: config.browserPageMb, singleProcessMb: singleProcessCapMb(config.browserPageMb, browserLanes(config)) },
      () => users > 0,
    );
  } catch (err) {
    // No browser is handed out without its net.
    await browser.close().catch(() => {});
    throw err;
  }
  return browser;
}

/** What the interception net refused: a worker it closed, or a request no route had answered. */
export interface NetRefusal {
  kind: 'worker' | 'request';
  /** The target type (`shared_worker`, `service_worker`) or the request's resource type. */
  type: string;
  url: string;
}

const netListeners = new Set<(r: NetRefusal) => void>();

/** Calls `fn` with each refusal of the interception net (every browser, every context) until the returned function is called. */
export function onNetRefusal(fn: (r: NetRefusal) => void): () => void {
  netListeners.add(fn);
  return () => {
    netListeners.delete(fn);
  };
}

function reportRefusal(r: NetRefusal): void {
  for (const fn of netListeners) {
    try {
      fn(r);
    } catch {
      /* a listener's error is its own */
    }
  }
}

/**
 * The interception net: one browser-level DevTools session, set up before any context exists, for
 * what Playwright's page-level interception (context.route, routeWebSocket) never sees.
 *
 * - Shared and service workers. Playwright does not attach to a shared worker, nor routes a
 *   service worker's requests when service workers are blocked (and it blocks them only by
 *   replacing `navigator.serviceWorker.register`, which the prototype's method gets around). The
 *   net auto-attaches to both with `waitForDebuggerOnStart`, so each waits before its first
 *   instruction, and closes it: its fetch, XHR and WebSocket never happen. The net never resumes a
 *   worker, so one it failed to close stays paused.
 * - Requests no route answered. The route answers (fulfils or aborts) every request it sees and
 *   never lets one continue to the network, so whatever reaches the browser-level Fetch domain
 *   escaped it: a redirect's next hop and a request Playwright cannot tie to a frame (it continues
 *   both without calling the route), a worker's nested worker script, a service worker's script, a
 *   request of a target Playwright does not attach to. Each is failed; none is ever continued.
 *
 * WebSockets are not HTTP requests to the Fetch domain; a dedicated worker's are refused by the
 * policy lib/browser/route.ts puts on every response, a page's by routeWebSocket.
 */
async function installInterceptionNet(browser: Browser): Promise<void> {
  const cdp: CDPSession = await browser.newBrowserCDPSession();
  cdp.on('Target.attachedToTarget', ({ targetInfo }) => {
    reportRefusal({ kind: 'worker', type: targetInfo.type, url: targetInfo.url });
    void cdp.send('Target.closeTarget', { targetId: targetInfo.targetId }).catch(() => {});
  });
  cdp.on('Fetch.requestPaused', ({ requestId, request, resourceType }) => {
    reportRefusal({ kind: 'request', type: String(resourceType).toLowerCase(), url: request.url });
    void cdp.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(() => {});
  });
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
  await cdp.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: true,
    flatten: true,
    filter: [{ type: 'shared_worker' }, { type: 'service_worker' }, { exclude: true }],
  });
}

/** Closes the shared browser (tests' afterAll, the local server's close). */
export async function closeBrowser(): Promise<void> {
  if (idleTimer) {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  }
  const b = current;
  current = undefined;
  if (!b) return;
  try {
    const browser = await b;
    closing.add(browser);
    await browser.close();
  } catch {
    /* it was not running */
  }
}
