/**
 * The `screenshot` job: the page rendered in headless Chromium at 1280x800, after the load event
 * and a short settle time, as a PNG that becomes the `page.screenshot` ImageSet.
 *
 * The SSRF guard in the browser, in three layers.
 *
 * 1. The route (`context.route` below) sees the HTTP(S) requests of the page's frames (documents,
 *    iframes, popups, scripts, styles, images, fetch/XHR, beacons), the script of a dedicated worker
 *    a frame starts, and the fetch/XHR of every dedicated worker (nested ones too). It fetches each
 *    with the job's guarded fetcher, the same code and policy as every other fetch (scheme and port
 *    rules, each host resolved and every address checked at connect time, on every redirect hop).
 *    A refused request is aborted and never reaches its target. Only GET and HEAD are fetched;
 *    media, fonts, EventSource, manifests, pings and the like are blocked. A page's WebSocket is
 *    refused by `context.routeWebSocket`.
 * 2. What the route does not see is refused, never fetched:
 *    - shared and service workers (Playwright intercepts none of their requests or WebSockets) are
 *      held at start and closed before their first instruction by the browser's interception net,
 *      which also fails every request that reaches the network without the route having answered
 *      it: a redirect's next hop and a request Playwright cannot tie to a frame (both of which it
 *      continues instead of routing), a nested worker's script, a service worker's script, anything
 *      from a target Playwright does not attach to (`installInterceptionNet` in lib/browser/browser.ts);
 *    - a dedicated worker's WebSocket, which routeWebSocket does not see (it only replaces a
 *      page's WebSocket), is refused by Chromium itself: every response the route answers carries
 *      `PAGE_POLICY`, a Content-Security-Policy whose connect-src has no ws:/wss:, which documents
 *      carry and the workers they start inherit (blob:, data:) or carry (a script fetched through
 *      the route), nested or not.
 * 3. The network walls (proxy flags in lib/browser/browser.ts) stop what is not a request: the
 *    browser's own preconnects (<link rel=preconnect>, and one to the host of each navigation, made
 *    on its own DNS answer), DNS prefetch, WebRTC, WebTransport. No request or WebSocket depends on
 *    them: test/page/screenshot.test.ts runs a page with a shared worker, a service worker and
 *    dedicated workers with the walls down, and the forbidden listener sees no connection.
 */
import { refusedByGuard } from '../errors.js';
import { flatHeaders } from '../fetch/headers.js';
import type { Fetcher } from '../fetch/safe-fetch.js';
import type { JobContext } from '../jobs/context.js';
import type { ScreenshotJobInput, ScreenshotJobResult } from '../jobs/kinds.js';
import { hostImageBytes } from '../media/hosted-bytes.js';
import { browserAvailable } from './availability.js';
import { withBrowser } from './browser.js';

export const VIEWPORT = { width: 1280, height: 800 } as const;

const SCREENSHOT_LIMITS = {
  /** Requests one page may make (the rest are refused). */
  maxRequests: 300,
  /** Bytes of all responses together. */
  maxTotalBytes: 30 * 1024 * 1024,
  /** Bytes of one response. */
  maxResponseBytes: 10 * 1024 * 1024,
  /** Time of one sub-request. */
  requestTimeoutMs: 5_000,
  /** Kept for the capture itself at the end of the time cap. */
  captureMs: 2_000,
};

/** Resource types never fetched: slow, heavy, or not needed for a first screen. */
const BLOCKED_TYPES = new Set(['media', 'font', 'websocket', 'eventsource', 'manifest', 'texttrack', 'ping', 'other']);

/**
 * Added to every response the route answers (a second policy: it narrows the page's own, never widens
 * it). connect-src without ws:/wss: refuses every WebSocket, in a dedicated worker too, where
 * routeWebSocket does not reach; fetch/XHR stay allowed as they go through the route.
 */
const PAGE_POLICY = 'connect-src http: https: data: blob:';

/** Request headers the browser's request passes on to the fetcher. */
const PASSED_HEADERS = ['accept', 'accept-language', 'cookie', 'referer', 'content-type'];
/** Response headers never handed back to the browser (the body is already decoded and whole). */
const DROPPED_RESPONSE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'alt-svc', 'strict-transport-security', 'content-security-policy-report-only', 'report-to', 'nel']);

export interface CaptureOptions {
  fetch: Fetcher;
  config: JobContext['config'];
  signal?: AbortSignal;
  /** Called for each request the page made, with what happened (tests, logs). */
  onRequest?: (url: string, outcome: 'fetched' | 'refused' | 'blocked' | 'failed', detail?: string) => void;
}

export interface Capture {
  png: Buffer;
  refused: number;
  requests: number;
}

/** Renders `url` and returns the PNG of the first screen. Throws when the page cannot be loaded. */
export async function captureScreenshot(url: string, options: CaptureOptions): Promise<Capture> {
  const { config } = options;
  const started = Date.now();
  const cap = config.screenshotTimeoutMs;
  const left = () => cap - (Date.now() - started);
  let refused = 0;
  let requests = 0;
  let totalBytes = 0;
  const controller = new AbortController();
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  const capTimer = setTimeout(stop, cap);

  try {
    return await withBrowser(config, Math.max(1000, cap - SCREENSHOT_LIMITS.captureMs), async (browser) => {
      const context = await browser.newContext({
        viewport: VIEWPORT,
        deviceScaleFactor: 1,
        serviceWorkers: 'block',
        acceptDownloads: false,
        javaScriptEnabled: true,
        locale: 'en-US',
        reducedMotion: 'reduce',
      });
      const closed = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('screenshot time cap reached')), { once: true }));
      closed.catch(() => {});
      try {
        await context.route('**/*', async (route) => {
          const req = route.request();
          const target = req.url();
          const type = req.resourceType();
          const method = req.method();
          const refuse = async (outcome: 'refused' | 'blocked' | 'failed', detail: string, code: 'blockedbyclient' | 'addressunreachable' | 'namenotresolved' | 'failed') => {
            if (outcome === 'refused') refused++;
            options.onRequest?.(target, outcome, detail);
            await route.abort(code).catch(() => {});
          };
          if (BLOCKED_TYPES.has(type)) return refuse('blocked', `resource type ${type}`, 'blockedbyclient');
          if (method !== 'GET' && method !== 'HEAD') return refuse('blocked', `method ${method}`, 'blockedbyclient');
          if (++requests > SCREENSHOT_LIMITS.maxRequests || totalBytes > SCREENSHOT_LIMITS.maxTotalBytes) return refuse('blocked', 'request budget spent', 'blockedbyclient');
          const headers: Record<string, string> = {};
          const all = req.headers();
          for (const h of PASSED_HEADERS) if (all[h]) headers[h] = all[h];
          try {
            const res = await options.fetch(target, {
              method: method as 'GET' | 'HEAD',
              headers,
              maxBytes: Math.min(SCREENSHOT_LIMITS.maxResponseBytes, SCREENSHOT_LIMITS.maxTotalBytes - totalBytes),
              onTooLarge: 'fail',
              timeoutMs: Math.max(500, Math.min(SCREENSHOT_LIMITS.requestTimeoutMs, left())),
              maxRedirects: 5,
              signal: controller.signal,
            });
            totalBytes += res.body.length;
            // A document that redirected is redirected in the browser too, so relative URLs resolve against the final address.
            // Playwright does not route the next hop (it continues it), so the interception net fails it: such a
            // document does not render.
            if (res.finalUrl !== target && (type === 'document')) {
              options.onRequest?.(target, 'fetched', `redirect to ${res.finalUrl}`);
              await route.fulfill({ status: 302, headers: { location: res.finalUrl } });
              return;
            }
            const out = flatHeaders(res.headers);
            for (const h of DROPPED_RESPONSE_HEADERS) delete out[h];
            const csp = 'content-security-policy';
            out[csp] = out[csp] ? `${out[csp]}, ${PAGE_POLICY}` : PAGE_POLICY;
            options.onRequest?.(target, 'fetched');
            await route.fulfill({ status: res.status, headers: out, body: res.body });
          } catch (err) {
            const guard = refusedByGuard(err);
            // A name resolving to a forbidden address fails as DNS_FAILURE, like an unknown name, and the
            // page sees the same error for both (an iframe's error page would show the code).
            const unresolved = (err as { code?: unknown }).code === 'DNS_FAILURE';
            await refuse(guard ? 'refused' : 'failed', (err as Error).message, unresolved ? 'namenotresolved' : guard ? 'addressunreachable' : 'failed');
          }
        });
        // A page's WebSockets are refused here (Playwright replaces the page's WebSocket); a worker's,
        // which this does not see, by PAGE_POLICY.
        await context.routeWebSocket(/.*/, (ws) => { refused++; options.onRequest?.(ws.url(), 'blocked', 'websocket'); void ws.close(); }).catch(() => {});

        const page = await context.newPage();
        page.on('dialog', (d) => { void d.dismiss().catch(() => {}); });
        const navTimeout = Math.max(500, left() - config.screenshotSettleMs - SCREENSHOT_LIMITS.captureMs);
        const response = await Promise.race([page.goto(url, { waitUntil: 'domcontentloaded', timeout: navTimeout }), closed]);
        if (!response) throw new Error('the page did not load');
        // The load event (images, styles) up to the cap; a page that never finishes loading is captured as it is.
        await Promise.race([page.waitForLoadState('load', { timeout: Math.max(100, left() - config.screenshotSettleMs - SCREENSHOT_LIMITS.captureMs) }).catch(() => {}), closed]);
        if (config.screenshotSettleMs > 0) await Promise.race([page.waitForTimeout(Math.min(config.screenshotSettleMs, Math.max(0, left() - SCREENSHOT_LIMITS.captureMs))), closed]);
        const png = await Promise.race([page.screenshot({ type: 'png', fullPage: false, animations: 'disabled', timeout: Math.max(500, left()) }), closed]);
        return { png, refused, requests };
      } finally {
        await context.close().catch(() => {});
      }
    });
  } finally {
    clearTimeout(capTimer);
    options.signal?.removeEventListener('abort', stop);
  }
}

/** The job handler: capture, then host the PNG as the four image sizes. */
export async function runScreenshotJob(input: ScreenshotJobInput, ctx: JobContext): Promise<ScreenshotJobResult> {
  if (!browserAvailable(ctx.config)) return { reason: 'no browser' };
  const shot = await captureScreenshot(input.url, { fetch: ctx.fetch, config: ctx.config, signal: ctx.signal });
  const screenshot = await hostImageBytes(shot.png, ctx);
  return screenshot ? { screenshot, refused: shot.refused } : { reason: 'the screenshot could not be hosted', refused: shot.refused };
}
