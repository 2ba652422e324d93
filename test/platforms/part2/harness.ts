/**
 * The part-2 platform tests run the real handler on the real platform URLs (https://x.com/...,
 * https://www.amazon.de/...): a fetcher wrapper maps every non-loopback host onto the loopback
 * fixture server under `/<host>/<path>` (and maps the URLs it reports back), so the platform code
 * builds its real upstream URLs and the fixture server answers them. A fixture redirect to
 * `/<host>/<path>` is a redirect to `https://<host>/<path>`.
 */
import sharp from 'sharp';
import type { Config } from '../../../lib/config';
import { createFetcher, type Fetcher } from '../../../lib/fetch/safe-fetch';
import { startFixtureServer, type FixtureServer } from '../../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../../helpers/service';

export function virtualHosts(inner: Fetcher, origin: string): Fetcher {
  const toLocal = (u: string) => {
    const x = new URL(u);
    if (x.hostname === '127.0.0.1') return u;
    return `${origin}/${x.hostname}${x.pathname}${x.search}`;
  };
  const toReal = (u: string) => {
    if (!u.startsWith(`${origin}/`)) return u;
    const rest = u.slice(origin.length + 1);
    const slash = rest.indexOf('/');
    return slash < 0 ? `https://${rest}/` : `https://${rest.slice(0, slash)}${rest.slice(slash)}`;
  };
  return async (url, options) => {
    const res = await inner(toLocal(url), options);
    return { ...res, url, finalUrl: toReal(res.finalUrl), trail: res.trail.map(toReal) };
  };
}

export interface World {
  server: FixtureServer;
  handler: TestHandler;
  /** POSTs a link and returns the (schema-checked) record. */
  preview(link: string): Promise<any>;
  /** Requests the platform code made, as real URLs (`https://host/path?query`). */
  seen(): { url: string; headers: Record<string, unknown> }[];
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Configuration overrides for the handler (a short fetchTimeoutMs, ...). */
  config?: Partial<Config>;
  /** Wraps the world's fetcher (which maps real hosts onto the fixture server): a test decides which fetches fail. */
  wrapFetch?: (fetch: Fetcher) => Fetcher;
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const server = await startFixtureServer();
  const inner = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 10 });
  const mapped = virtualHosts(inner, server.origin);
  const handler = createTestHandler({ fetch: options.wrapFetch ? options.wrapFetch(mapped) : mapped, config: options.config });
  return {
    server,
    handler,
    async preview(link) {
      const r = await handler.post(JSON.stringify({ link }));
      expect(r.statusCode).toBe(200);
      return r.json;
    },
    seen: () => server.requests.map((r) => {
      const rest = r.url.slice(1);
      return { url: `https://${rest}`, headers: r.headers };
    }),
    async close() {
      handler.cleanup();
      await server.close();
    },
  };
}

/** A real PNG of the given size (so the image job can host it). */
export async function png(width = 40, height = 30, color = { r: 200, g: 30, b: 30 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
}

export function json(body: unknown, status = 200) {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}

export async function image(width?: number, height?: number) {
  return { status: 200, headers: { 'content-type': 'image/png' }, body: await png(width, height) };
}

export function page(body: string, status = 200, headers: Record<string, string> = {}) {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body };
}

export function redirect(to: string, status = 301) {
  return { status, headers: { location: to }, body: '' };
}
