/**
 * A tab: a fresh browser context with its route installed (lib/browser/route.ts) and one page open.
 * Each capture takes one and closes it after: nothing a page leaves behind (cookies, storage, a
 * logged-in view from a URL's token) reaches another preview. What a reused context would save,
 * opening the context and its page (about 100 ms, mostly the page), is saved by opening the next
 * tab ahead: after each capture one spare tab is opened while nothing waits for it, and the next
 * capture in this browser takes it.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { installRoute, type PageTraffic } from './route.js';

export const VIEWPORT = { width: 1280, height: 800 } as const;

const CONTEXT_OPTIONS = {
  viewport: VIEWPORT,
  deviceScaleFactor: 1,
  serviceWorkers: 'block',
  acceptDownloads: false,
  javaScriptEnabled: true,
  locale: 'en-US',
  reducedMotion: 'reduce',
} as const;

export interface Tab {
  readonly browser: Browser;
  readonly page: Page;
  /** The page's DevTools session (the capture). */
  readonly cdp: CDPSession;
  /** Hands the tab's traffic to a capture (every request is refused while none holds it). */
  hold(traffic: PageTraffic): void;
  close(): Promise<void>;
}

async function openTab(browser: Browser): Promise<Tab> {
  const context: BrowserContext = await browser.newContext(CONTEXT_OPTIONS);
  let holder: PageTraffic | undefined;
  try {
    await installRoute(context, () => holder);
    const page = await context.newPage();
    page.on('dialog', (d) => {
      void d.dismiss().catch(() => {});
    });
    const cdp = await context.newCDPSession(page);
    return {
      browser,
      page,
      cdp,
      hold: (traffic) => {
        holder = traffic;
      },
      close: () => context.close().catch(() => {}),
    };
  } catch (err) {
    await context.close().catch(() => {});
    throw err;
  }
}

/**
 * Why the tab's document is the browser's own page and not the link's, or undefined when it is a web
 * page: Chromium's error page (a top-level navigation that failed, whose document is
 * `chrome-error://chromewebdata/`, titled with the address and saying it "is unreachable"), an
 * interstitial (committed as an error page too), or any other document that is not http(s)
 * (`about:blank`, `chrome:`). Two signals: a top-level navigation the route refused (`traffic`,
 * known as soon as the route answers, before Chromium commits the error page), and the main frame
 * as Chromium has committed it (the DevTools frame tree: its URL, and `unreachableUrl`, set on an
 * error page for the address that failed).
 */
export async function browserPage(tab: Tab, traffic: PageTraffic): Promise<string | undefined> {
  const refused = traffic.failedNavigation(tab.page.mainFrame());
  if (refused) return `the browser's error page: ${refused}`;
  const { frame } = (await tab.cdp.send('Page.getFrameTree')).frameTree;
  if (frame.unreachableUrl) return `the browser's error page for ${frame.unreachableUrl}`;
  const scheme = frame.url.slice(0, frame.url.indexOf(':') + 1).toLowerCase();
  if (scheme === 'chrome-error:') return `the browser's error page (${frame.url})`;
  if (scheme !== 'http:' && scheme !== 'https:') return `the browser's own page (${frame.url.slice(0, 100)})`;
  return undefined;
}

let spare: { browser: Browser; tab: Promise<Tab | undefined> } | undefined;

/**
 * How long a job waits for the spare tab still being opened before it opens its own: a spare whose
 * opening stalls (the Lambda's single-process Chromium has been seen to stall one) costs a job this
 * much, never its whole time cap.
 */
const SPARE_WAIT_MS = 1_500;

/** A tab for one job: the spare one when it is of this browser, still open and ready in time, else a new one. */
export async function takeTab(browser: Browser): Promise<Tab> {
  const s = spare;
  spare = undefined;
  const tab = s && (await within(s.tab, SPARE_WAIT_MS));
  if (tab && tab.browser === browser && browser.isConnected() && !tab.page.isClosed()) return tab;
  if (tab) void tab.close();
  else void s?.tab.then((late) => late?.close());
  return openTab(browser);
}

/**
 * Opens the spare tab of `browser` (one at most), for the next job, once `closing` (the last
 * job's tab) is closed: a context is never opened while another is being closed.
 */
export function openSpareTab(browser: Browser, closing: Promise<unknown> = Promise.resolve()): void {
  if (spare?.browser === browser || !browser.isConnected()) return;
  const stale = spare;
  spare = {
    browser,
    tab: closing
      .then(
        () => (browser.isConnected() ? openTab(browser) : undefined),
        () => undefined,
      )
      .catch(() => undefined),
  };
  void stale?.tab.then((t) => t?.close());
}

/** What `p` gives within `ms`, else undefined. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
