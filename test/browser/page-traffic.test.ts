/**
 * A page's traffic in the browser (lib/browser/route.ts): every request the page has in flight
 * listens on the capture's one signal, so that signal takes as many listeners as the page may make
 * requests without Node's MaxListenersExceededWarning (which the replay logged for pages with many
 * images, and which is no leak: got takes each listener off when its request ends).
 */
import { getMaxListeners } from 'node:events';
import { PAGE_TRAFFIC_LIMITS, PageTraffic } from '../../lib/browser/route';
import type { Fetcher } from '../../lib/fetch/types';

test("the capture's signal takes one listener per request the page may make", () => {
  const controller = new AbortController();
  expect(getMaxListeners(controller.signal)).toBeLessThan(PAGE_TRAFFIC_LIMITS.maxRequests);
  const fetch = (async () => {
    throw new Error('not called');
  }) as unknown as Fetcher;
  new PageTraffic(fetch, controller.signal, () => 1000);
  expect(getMaxListeners(controller.signal)).toBeGreaterThanOrEqual(PAGE_TRAFFIC_LIMITS.maxRequests);
});
