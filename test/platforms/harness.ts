/**
 * The platform tests run the real handler on the real platform URLs (https://x.com/...,
 * https://www.youtube.com/..., https://www.amazon.de/...): a fetcher wrapper maps every
 * non-loopback host onto the loopback fixture server under `/<host>/<path>` (and maps the URLs it
 * reports back), so the platform code builds its real upstream URLs (its settings' defaults) and
 * the fixture server answers them. A fixture redirect to `/<host>/<path>` is a redirect to
 * `https://<host>/<path>`; loopback URLs (`${origin}/img/...`) are fetched, and reported, as they
 * are.
 *
 * A test points a platform's source at a host of its own through the platform's settings (`env`,
 * e.g. `{ LINKPREVIEW_YOUTUBE_BASE_URL: 'https://yt' }` answers under `/yt/...`), e.g. to answer
 * the platform's source apart from the generic fetch of the same link; an extra platform is
 * registered for one world with `platforms: [...PLATFORMS, extra]`.
 */
import sharp from 'sharp';
import { type Config, loadConfig } from '../../lib/config';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../lib/fetch/types';
import { PLATFORMS } from '../../lib/platforms/index';
import { createRegistry } from '../../lib/platforms/registry';
import type { Platform } from '../../lib/platforms/types';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';

export function virtualHosts(inner: Fetcher, origin: string): Fetcher {
  const toLocal = (u: string) => {
    const x = new URL(u);
    return `${origin}/${x.hostname}${x.pathname}${x.search}`;
  };
  const toReal = (u: string) => {
    if (!u.startsWith(`${origin}/`)) return u;
    const rest = u.slice(origin.length + 1);
    const slash = rest.indexOf('/');
    return slash < 0 ? `https://${rest}/` : `https://${rest.slice(0, slash)}${rest.slice(slash)}`;
  };
  return async (url, options) => {
    if (new URL(url).hostname === '127.0.0.1') return inner(url, options);
    const res = await inner(toLocal(url), options);
    return { ...res, url, finalUrl: toReal(res.finalUrl), trail: res.trail.map(toReal) };
  };
}

export interface World {
  server: FixtureServer;
  handler: TestHandler;
  /** The fixture server's own origin (`http://127.0.0.1:<port>`), for loopback fixtures such as images. */
  origin: string;
  /** POSTs a link and returns the (schema-checked) record. */
  preview(link: string): Promise<any>;
  /** Paths (with query) the fixture server was asked for. */
  asked(): string[];
  /** Requests made to the mapped hosts, as real URLs (`https://host/path?query`), with their headers. */
  seen(): { url: string; headers: Record<string, unknown> }[];
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Configuration overrides for the handler (a short fetchTimeoutMs, ...). */
  config?: Partial<Config>;
  /** Platform settings by their variables (e.g. `{ GITHUB_TOKEN: '...' }`), read with loadConfig. */
  env?: Record<string, string>;
  /** The platforms of this world (default: the service's); its registry and its settings come from this list. */
  platforms?: readonly Platform[];
  /** Wraps the world's fetcher (which maps real hosts onto the fixture server): a test decides which fetches fail. */
  wrapFetch?: (fetch: Fetcher) => Fetcher;
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const server = await startFixtureServer();
  const inner = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 10 });
  const mapped = virtualHosts(inner, server.origin);
  const platforms = options.platforms ?? PLATFORMS;
  const handler = createTestHandler({
    fetch: options.wrapFetch ? options.wrapFetch(mapped) : mapped,
    config: { platforms: loadConfig(options.env ?? {}, platforms).platforms, ...options.config },
    ...(options.platforms ? { platforms: createRegistry(options.platforms) } : {}),
  });
  return {
    server,
    handler,
    origin: server.origin,
    async preview(link) {
      const r = await handler.post(JSON.stringify({ link }));
      expect(r.statusCode).toBe(200);
      return r.json;
    },
    asked: () => server.requests.map((r) => r.url),
    seen: () => server.requests.map((r) => ({ url: `https://${r.url.slice(1)}`, headers: r.headers })),
    async close() {
      handler.cleanup();
      await server.close();
    },
  };
}

/** A real PNG of the given size (so the image job can host it). */
export async function png(width = 40, height = 30, color = { r: 200, g: 30, b: 30 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
}

export async function image(width?: number, height?: number) {
  return { status: 200, headers: { 'content-type': 'image/png' }, body: await png(width, height) };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}) {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

export function page(body: string, status = 200, headers: Record<string, string> = {}) {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body };
}

export function redirect(to: string, status = 301) {
  return { status, headers: { location: to }, body: '' };
}
