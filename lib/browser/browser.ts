/**
 * One headless Chromium per process, launched on first use through playwright-core (no browser
 * download: the executable is Debian's `chromium`, a path set by LINKPREVIEW_BROWSER_PATH, or on
 * AWS the binary that @sparticuz/chromium unpacks from its layer). It is closed after a minute
 * without jobs, and relaunched if it dies.
 *
 * The browser itself never reaches the network: every request a page makes is intercepted and
 * answered by the guarded fetcher (lib/browser/screenshot.ts). As a second wall, anything that
 * could escape the interception (WebSocket, WebRTC, preconnect, DNS prefetch) meets a proxy that
 * does not exist and a host resolver that resolves nothing.
 */
import { accessSync, constants } from 'node:fs';
import type { Browser } from 'playwright-core';
import type { Config } from '../config.js';
import { browserExecutable, launchArgs } from './availability.js';

/** Chromium flags: the ones this machine's headless runs need, and the network walls. */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-dev-shm-usage',
  '--mute-audio',
  '--hide-scrollbars',
  '--autoplay-policy=user-gesture-required',
  // The network walls: nothing leaves the browser except through the interception.
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export { browserAvailable, browserExecutable, configureBrowser, screenshotsEnabled } from './availability.js';

const IDLE_CLOSE_MS = 60_000;
let current: Promise<Browser> | undefined;
let users = 0;
let idleTimer: NodeJS.Timeout | undefined;

/** Runs `fn` with the shared browser (launched on demand). */
export async function withBrowser<T>(config: Pick<Config, 'browserPath'>, launchTimeoutMs: number, fn: (browser: Browser) => Promise<T>): Promise<T> {
  if (idleTimer) { clearTimeout(idleTimer); idleTimer = undefined; }
  users++;
  try {
    let browser = await (current ??= launch(config, launchTimeoutMs));
    if (!browser.isConnected()) {
      current = launch(config, launchTimeoutMs);
      browser = await current;
    }
    return await fn(browser);
  } catch (err) {
    // A failed launch is not kept: the next job tries again.
    if (current && !(await current.then((b) => b.isConnected(), () => false))) current = undefined;
    throw err;
  } finally {
    users--;
    if (users === 0 && current) {
      idleTimer = setTimeout(() => { void closeBrowser(); }, IDLE_CLOSE_MS);
      idleTimer.unref();
    }
  }
}

async function launch(config: Pick<Config, 'browserPath'>, timeoutMs: number): Promise<Browser> {
  const executablePath = browserExecutable(config);
  accessSync(executablePath, constants.X_OK); // a clear error when there is no browser
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: false, // root in containers and Lambda; the page is isolated by the network walls instead
    args: [...launchArgs(), ...CHROMIUM_ARGS],
    timeout: timeoutMs,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  browser.on('disconnected', () => { current = undefined; });
  return browser;
}

/** Closes the shared browser (tests' afterAll, the local server's close). */
export async function closeBrowser(): Promise<void> {
  if (idleTimer) { clearTimeout(idleTimer); idleTimer = undefined; }
  const b = current;
  current = undefined;
  if (!b) return;
  try {
    await (await b).close();
  } catch { /* it was not running */ }
}
