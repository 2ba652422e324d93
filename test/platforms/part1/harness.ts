/**
 * Part-1 platform tests (videohost, codehost, forum): the real handler with the platforms'
 * upstream base URLs pointed at a loopback fixture server (/yt, /yt-api, /gh-api, /gh, /rd), and
 * a fetcher that maps any other host onto the same server under /web/<host>/<path>, so the
 * generic fallback of a real platform URL (https://www.youtube.com/...) is answered there too.
 */
import sharp from 'sharp';
import { loadConfig, type Config } from '../../../lib/config';
import { createFetcher, type Fetcher } from '../../../lib/fetch/safe-fetch';
import { startFixtureServer, type FixtureServer } from '../../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../../helpers/service';

function webOnLoopback(inner: Fetcher, origin: string): Fetcher {
  /** `${origin}/web/<host>/<path>` back to `https://<host>/<path>` in what the fetch reports. */
  const toReal = (u: string) => {
    const prefix = `${origin}/web/`;
    if (!u.startsWith(prefix)) return u;
    const rest = u.slice(prefix.length);
    const slash = rest.indexOf('/');
    return slash < 0 ? `https://${rest}/` : `https://${rest}`;
  };
  return async (url, options) => {
    const x = new URL(url);
    if (x.hostname === '127.0.0.1') return inner(url, options);
    const res = await inner(`${origin}/web/${x.hostname}${x.pathname}${x.search}`, options);
    return { ...res, url, finalUrl: toReal(res.finalUrl), trail: [url, ...res.trail.slice(1).map(toReal)] };
  };
}

export interface World {
  server: FixtureServer;
  handler: TestHandler;
  origin: string;
  preview(link: string): Promise<any>;
  /** Paths (with query) the fixture server was asked for. */
  asked(): string[];
  close(): Promise<void>;
}

/** `env`: platform settings by their variables (e.g. `{ GITHUB_TOKEN: '...' }`), over the fixture's base URLs. */
export async function startWorld(config: Partial<Config> = {}, env: Record<string, string> = {}): Promise<World> {
  const server = await startFixtureServer();
  const o = server.origin;
  const inner = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 10 });
  const handler = createTestHandler({
    fetch: webOnLoopback(inner, o),
    config: {
      platforms: loadConfig({
        LINKPREVIEW_YOUTUBE_BASE_URL: `${o}/yt`, LINKPREVIEW_YOUTUBE_API_URL: `${o}/yt-api`, LINKPREVIEW_GITHUB_API_URL: `${o}/gh-api`,
        LINKPREVIEW_GITHUB_BASE_URL: `${o}/gh`, LINKPREVIEW_REDDIT_BASE_URL: `${o}/rd`, ...env,
      }).platforms,
      ...config,
    },
  });
  return {
    server,
    handler,
    origin: o,
    async preview(link) {
      const r = await handler.post(JSON.stringify({ link }));
      expect(r.statusCode).toBe(200);
      return r.json;
    },
    asked: () => server.requests.map((r) => r.url),
    async close() {
      handler.cleanup();
      await server.close();
    },
  };
}

export async function png(width = 40, height = 30): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toBuffer();
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
