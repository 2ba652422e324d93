/**
 * The SSRF guard inside the browser, in three layers.
 *
 * 1. The route (`installRoute` below, on every context before its first page) sees the HTTP(S)
 *    requests of the page's frames (documents, iframes, popups, scripts, styles, images,
 *    fetch/XHR, beacons), the script of a dedicated worker a frame starts, and the fetch/XHR of
 *    every dedicated worker (nested ones too). It fetches each with the job's guarded fetcher, the
 *    same code and policy as every other fetch (scheme and port rules, each host resolved and every
 *    address checked at connect time, on every redirect hop). A refused request is aborted and never
 *    reaches its target. Only GET and HEAD are fetched; media, fonts, EventSource, manifests, pings
 *    and the like are blocked, and so is a response over its size cap. A page's WebSocket is
 *    refused by `context.routeWebSocket`. A request that comes while no capture holds the context
 *    is refused.
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
 *    them: test/browser/screenshot.test.ts runs a page with a shared worker, a service worker and
 *    dedicated workers with the walls down, and the forbidden listener sees no connection.
 */
import { setMaxListeners } from 'node:events';
import type { BrowserContext, Frame, Request, Route } from 'playwright-core';
import { refusedByGuard } from '../errors.js';
import { flatHeaders } from '../fetch/headers.js';
import type { Fetcher, FetchResult } from '../fetch/types.js';

export const PAGE_TRAFFIC_LIMITS = {
  /** Requests one page may make (the rest are refused). */
  maxRequests: 300,
  /** Bytes of all responses together. */
  maxTotalBytes: 30 * 1024 * 1024,
  /** Bytes of one document, script or stylesheet (what the page needs to render at all). */
  maxFrameBytes: 5 * 1024 * 1024,
  /** Bytes of any other response (an image, a fetch): a larger one is refused, not waited for. */
  maxResourceBytes: 2 * 1024 * 1024,
  /** Time of one sub-request. */
  requestTimeoutMs: 5_000,
};

/** Resource types never fetched: slow, heavy, or not needed for a first screen. */
const BLOCKED_TYPES = new Set(['media', 'font', 'websocket', 'eventsource', 'manifest', 'texttrack', 'ping', 'other']);
/** Resource types capped at `maxFrameBytes`; the others at `maxResourceBytes`. */
const FRAME_TYPES = new Set(['document', 'script', 'stylesheet']);

/**
 * Added to every response the route answers (a second policy: it narrows the page's own, never widens
 * it). connect-src without ws:/wss: refuses every WebSocket, in a dedicated worker too, where
 * routeWebSocket does not reach; fetch/XHR stay allowed as they go through the route.
 */
const PAGE_POLICY = 'connect-src http: https: data: blob:';

/** Request headers the browser's request passes on to the fetcher. */
const PASSED_HEADERS = ['accept', 'accept-language', 'cookie', 'referer', 'content-type'];
/** Response headers never handed back to the browser (the body is already decoded and whole). */
const DROPPED_RESPONSE_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'alt-svc',
  'strict-transport-security',
  'content-security-policy-report-only',
  'report-to',
  'nel',
]);

export type RequestOutcome = 'fetched' | 'refused' | 'blocked' | 'failed';
/**
 * How a refused request fails in the page. Never `namenotresolved`: a top-level navigation that
 * fails with a name-resolution error starts Chromium's DNS probe (NetErrorTabHelper, which the
 * profile's alternate-error-pages preference allows and no switch turns off), a query for a fixed
 * name sent to the system resolver, outside every wall. A name that does not resolve fails as an
 * address the guard refuses does (`addressunreachable`), and the page cannot tell them apart.
 */
type AbortCode = 'blockedbyclient' | 'addressunreachable' | 'failed';

/**
 * One capture's traffic: what the route needs to answer its page's requests (the guarded fetcher,
 * the capture's signal and time left), what it counts, and whether the network is quiet.
 */
export class PageTraffic {
  requests = 0;
  refused = 0;
  bytes = 0;
  private inFlight = 0;
  private lastChange = performance.now();
  /** The top-level navigations the route refused, by the frame they were to replace (Chromium shows its error page there). */
  private readonly failedNavigations = new WeakMap<Frame, string>();

  constructor(
    readonly fetch: Fetcher,
    readonly signal: AbortSignal,
    readonly timeLeft: () => number,
    private readonly onRequest?: (url: string, outcome: RequestOutcome, detail?: string) => void,
  ) {
    // Every request of the page in flight listens on this signal (got's abort listener, taken off
    // when its request ends): up to PAGE_TRAFFIC_LIMITS.maxRequests at once, which is no leak. Node's
    // default cap (10) would warn MaxListenersExceededWarning on any page with many images.
    setMaxListeners(PAGE_TRAFFIC_LIMITS.maxRequests + 16, signal);
  }

  note(url: string, outcome: RequestOutcome, detail?: string): void {
    if (outcome === 'refused') this.refused++;
    this.onRequest?.(url, outcome, detail);
  }

  started(): void {
    this.inFlight++;
    this.lastChange = performance.now();
  }

  ended(): void {
    this.inFlight--;
    this.lastChange = performance.now();
  }

  /** Notes that the route refused or failed `req`: when it is a top-level navigation, its frame is left on the browser's error page. */
  refusedRequest(req: Request, detail: string): void {
    const frame = topFrameNavigatedBy(req);
    if (frame) this.failedNavigations.set(frame, `the navigation to ${req.url()} failed (${detail})`);
  }

  /** Why a top-level navigation of `frame` failed (the route refused it), or undefined. */
  failedNavigation(frame: Frame): string | undefined {
    return this.failedNavigations.get(frame);
  }

  /** How long no request has been running, in ms (0 while one is). */
  quietFor(): number {
    return this.inFlight > 0 ? 0 : performance.now() - this.lastChange;
  }
}

/**
 * Routes every request and WebSocket of `context` (its pages, popups and dedicated workers) to the
 * traffic of the capture that holds it (`holder()`), or refuses it when none does.
 */
export async function installRoute(context: BrowserContext, holder: () => PageTraffic | undefined): Promise<void> {
  await context.route('**/*', (route) => answer(route, holder()));
  // A page's WebSockets are refused here (Playwright replaces the page's WebSocket); a worker's,
  // which this does not see, by PAGE_POLICY.
  await context.routeWebSocket(/.*/, (ws) => {
    const traffic = holder();
    if (traffic) traffic.refused++;
    traffic?.note(ws.url(), 'blocked', 'websocket');
    void ws.close();
  });
}

/** Answers one request: refused, blocked, or fetched by the guarded fetcher and fulfilled. */
async function answer(route: Route, traffic: PageTraffic | undefined): Promise<void> {
  const req = route.request();
  const refuse = async (outcome: Exclude<RequestOutcome, 'fetched'>, detail: string, code: AbortCode) => {
    traffic?.note(req.url(), outcome, detail);
    traffic?.refusedRequest(req, detail);
    await route.abort(code).catch(() => {});
  };
  if (!traffic || traffic.signal.aborted) return refuse('blocked', 'no capture holds the page', 'blockedbyclient');
  const blocked = blockReason(req, traffic);
  if (blocked) return refuse('blocked', blocked, 'blockedbyclient');
  traffic.started();
  try {
    const res = await fetchFor(req, traffic);
    traffic.bytes += res.body.length;
    // A document that redirected is redirected in the browser too, so relative URLs resolve against the final address.
    // Playwright does not route the next hop (it continues it), so the interception net fails it: such a
    // document does not render.
    if (res.finalUrl !== req.url() && req.resourceType() === 'document') {
      traffic.note(req.url(), 'fetched', `redirect to ${res.finalUrl}`);
      await route.fulfill({ status: 302, headers: { location: res.finalUrl } });
      return;
    }
    traffic.note(req.url(), 'fetched');
    await route.fulfill({ status: res.status, headers: pageHeaders(res), body: res.body });
  } catch (err) {
    const guard = refusedByGuard(err);
    // A name resolving to a forbidden address fails as DNS_FAILURE, like an unknown name: the page
    // sees both, and a refused address, as one unreachable address (never a name error: AbortCode).
    const unresolved = (err as { code?: unknown }).code === 'DNS_FAILURE';
    await refuse(guard ? 'refused' : 'failed', (err as Error).message, unresolved || guard ? 'addressunreachable' : 'failed');
  } finally {
    traffic.ended();
  }
}

/** The frame `req` navigates when it is a page's top-level navigation (a frame with no parent), else undefined. */
function topFrameNavigatedBy(req: Request): Frame | undefined {
  if (!req.isNavigationRequest()) return undefined;
  try {
    const frame = req.frame();
    return frame.parentFrame() ? undefined : frame;
  } catch {
    return undefined; // a request of no frame (a worker's)
  }
}

/** Why a request is not fetched at all (its type, its method, the page's budget), or undefined. */
function blockReason(req: Request, traffic: PageTraffic): string | undefined {
  const type = req.resourceType();
  if (BLOCKED_TYPES.has(type)) return `resource type ${type}`;
  const method = req.method();
  if (method !== 'GET' && method !== 'HEAD') return `method ${method}`;
  if (++traffic.requests > PAGE_TRAFFIC_LIMITS.maxRequests || traffic.bytes > PAGE_TRAFFIC_LIMITS.maxTotalBytes) return 'request budget spent';
  return undefined;
}

/** The request fetched by the guarded fetcher, within the page's byte and time caps. */
function fetchFor(req: Request, traffic: PageTraffic): Promise<FetchResult> {
  const all = req.headers();
  const headers: Record<string, string> = {};
  for (const h of PASSED_HEADERS) if (all[h]) headers[h] = all[h];
  const cap = FRAME_TYPES.has(req.resourceType()) ? PAGE_TRAFFIC_LIMITS.maxFrameBytes : PAGE_TRAFFIC_LIMITS.maxResourceBytes;
  return traffic.fetch(req.url(), {
    method: req.method() as 'GET' | 'HEAD',
    headers,
    maxBytes: Math.min(cap, PAGE_TRAFFIC_LIMITS.maxTotalBytes - traffic.bytes),
    onTooLarge: 'fail',
    timeoutMs: Math.max(500, Math.min(PAGE_TRAFFIC_LIMITS.requestTimeoutMs, traffic.timeLeft())),
    maxRedirects: 5,
    signal: traffic.signal,
  });
}

/** The response's headers as the browser gets them: transport headers dropped, PAGE_POLICY added. */
function pageHeaders(res: FetchResult): Record<string, string> {
  const out = flatHeaders(res.headers);
  for (const h of DROPPED_RESPONSE_HEADERS) delete out[h];
  const csp = 'content-security-policy';
  out[csp] = out[csp] ? `${out[csp]}, ${PAGE_POLICY}` : PAGE_POLICY;
  return out;
}
