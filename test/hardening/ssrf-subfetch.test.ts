/**
 * Every sub-fetch of a preview goes through the same guard, and this test can tell.
 *
 * The page is served by a loopback fixture the guard trusts explicitly ("public.test" ->
 * 127.0.0.1, `trustedAddresses`), with the guard otherwise closed as in production. Each
 * forbidden sub-resource (og:image, twitter:image, JSON-LD image, icons, the web app manifest
 * and its icons, oEmbed and its thumbnail, sub-resources that redirect) points at a *real
 * listener* on another loopback address (127.0.0.2, 127.0.0.3, ..., ::1): an IP literal, a
 * local name, or a name the test resolver maps there. Loopback is forbidden and not trusted, so
 * the closed guard must refuse them; the Jest loopback-only net lets them through, so if the
 * guard did not refuse, the socket would connect and the listener would record it.
 *
 * For each kind: the closed service refuses (the fetcher was asked, and the refusal came from
 * the guard: LinkNotAllowedError, from checkUrl or at lookup), no listener
 * sees a connection, and the record comes back without that image or icon; then the same page
 * through the same fetcher with loopback opened (allowLoopback) reaches that very listener, which
 * shows the listener, the resolver mapping and the sub-fetch are real.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import sharp from 'sharp';
import { LinkNotAllowedError } from '../../lib/errors';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { createFetcher, type FetcherDeps } from '../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../lib/fetch/types';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';

/** A real HTTP server on one forbidden loopback address that records every connection and request. */
interface Listener {
  address: string;
  port: number;
  /** `host:port` as it goes in a URL (IPv6 bracketed). */
  authority: string;
  hits: string[];
  close(): Promise<void>;
}

let imagePng: Buffer;
let iconPng: Buffer;

async function startListener(address: string): Promise<Listener> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    hits.push(`${address}: ${req.method} ${req.url}`);
    const path = (req.url ?? '/').split('?')[0];
    const authority = `${address.includes(':') ? `[${address}]` : address}:${port}`;
    if (path.endsWith('.png')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(/icon/.test(path) ? iconPng : imagePng);
    } else if (path === '/manifest.json') {
      res.writeHead(200, { 'content-type': 'application/manifest+json' });
      res.end(JSON.stringify({ icons: [{ src: '/manifest-icon.png', sizes: '128x128', type: 'image/png' }] }));
    } else if (path === '/oembed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ type: 'photo', version: '1.0', thumbnail_url: `http://${authority}/oembed-thumb.png`, thumbnail_width: 400, thumbnail_height: 300 }),
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<title>internal</title>');
    }
  });
  server.on('connection', (s) => {
    hits.push(`${address}: connection`);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    address,
    port,
    authority: `${address.includes(':') ? `[${address}]` : address}:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** How a fetch the pipeline asked for ended. */
type Outcome = 'fetched' | 'refused by checkUrl' | 'refused at lookup' | `failed: ${string}`;
function outcomeOf(err: unknown): Outcome {
  if (err instanceof LinkNotAllowedError) return 'refused by checkUrl';
  if (err instanceof FetchFailure && err.cause instanceof LinkNotAllowedError) return 'refused at lookup';
  return `failed: ${(err as { code?: string }).code ?? String(err)}`;
}

interface Case {
  kind: string;
  /** The forbidden address whose listener must see nothing. */
  address: string;
  /** The page's <head> (given the forbidden target's authority). */
  head(target: string): string;
  /** The URL the pipeline asks the fetcher for (the forbidden one, or a trusted URL that redirects to it). */
  asked(target: string): string;
  refusal: Outcome;
  /** The record field the sub-resource would fill. */
  field?: 'image' | 'icon';
}

const ld = (target: string) =>
  `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Article', headline: 'Public page', image: `http://${target}/ld-image.png` })}</script>`;

// Names the test resolver maps to forbidden loopback addresses (checked by the guard at lookup).
const NAMES: Record<string, string> = {
  'og-image.test': '127.0.0.2',
  'ld-image.test': '127.0.0.4',
  'manifest.test': '127.0.0.6',
  'manifest-icon.test': '127.0.0.7',
  'oembed.test': '127.0.0.8',
  'redirect-target.test': '127.0.0.10',
  // The local name: refused by checkUrl; with the guard off it would resolve (here) to a listener.
  localhost: '127.0.0.5',
};

let PORT = 0; // the trusted fixture's port, once started
const pub = (path: string) => `http://public.test:${PORT}${path}`;
const name = (host: string, target: string) => `${host}:${target.split(':').pop()}`;

const CASES: Case[] = [
  {
    kind: 'og:image (a name resolving to loopback)',
    address: '127.0.0.2',
    head: (t) => `<meta property="og:image" content="http://${name('og-image.test', t)}/og.png">`,
    asked: (t) => `http://${name('og-image.test', t)}/og.png`,
    refusal: 'refused at lookup',
    field: 'image',
  },
  {
    kind: 'twitter:image (a loopback IP literal)',
    address: '127.0.0.3',
    head: (t) => `<meta name="twitter:image" content="http://${t}/twitter.png">`,
    asked: (t) => `http://${t}/twitter.png`,
    refusal: 'refused by checkUrl',
    field: 'image',
  },
  {
    kind: 'JSON-LD image (a name resolving to loopback)',
    address: '127.0.0.4',
    head: (t) => ld(name('ld-image.test', t)),
    asked: (t) => `http://${name('ld-image.test', t)}/ld-image.png`,
    refusal: 'refused at lookup',
    field: 'image',
  },
  {
    kind: 'icon (the IPv6 loopback literal [::1])',
    address: '::1',
    head: (t) => `<link rel="icon" type="image/png" sizes="128x128" href="http://${t}/favicon-icon.png">`,
    asked: (t) => `http://${t}/favicon-icon.png`,
    refusal: 'refused by checkUrl',
    field: 'icon',
  },
  {
    kind: 'apple-touch-icon (localhost)',
    address: '127.0.0.5',
    head: (t) => `<link rel="apple-touch-icon" href="http://${name('localhost', t)}/touch-icon.png">`,
    asked: (t) => `http://${name('localhost', t)}/touch-icon.png`,
    refusal: 'refused by checkUrl',
    field: 'icon',
  },
  {
    kind: 'web app manifest (a name resolving to loopback)',
    address: '127.0.0.6',
    head: (t) => `<link rel="manifest" href="http://${name('manifest.test', t)}/manifest.json">`,
    asked: (t) => `http://${name('manifest.test', t)}/manifest.json`,
    refusal: 'refused at lookup',
    field: 'icon',
  },
  {
    kind: "the manifest's icons (manifest on the trusted host, icon on a name resolving to loopback)",
    address: '127.0.0.7',
    head: () => `<link rel="manifest" href="${pub('/app.webmanifest')}">`,
    asked: (t) => `http://${name('manifest-icon.test', t)}/app-icon.png`,
    refusal: 'refused at lookup',
    field: 'icon',
  },
  {
    kind: 'oEmbed endpoint (a name resolving to loopback)',
    address: '127.0.0.8',
    head: (t) => `<link rel="alternate" type="application/json+oembed" href="http://${name('oembed.test', t)}/oembed?url=x">`,
    asked: (t) => `http://${name('oembed.test', t)}/oembed?url=x`,
    refusal: 'refused at lookup',
    field: 'image',
  },
  {
    kind: "oEmbed's thumbnail (oEmbed on the trusted host, thumbnail on a loopback IP literal)",
    address: '127.0.0.9',
    head: () => `<link rel="alternate" type="application/json+oembed" href="${pub('/oembed.json')}">`,
    asked: (t) => `http://${t}/thumbnail.png`,
    refusal: 'refused by checkUrl',
    field: 'image',
  },
  {
    kind: 'og:image on the trusted host redirecting to a name resolving to loopback',
    address: '127.0.0.10',
    head: () => `<meta property="og:image" content="${pub('/redirect/og.png')}">`,
    asked: () => pub('/redirect/og.png'),
    refusal: 'refused at lookup',
    field: 'image',
  },
  {
    kind: 'icon on the trusted host redirecting to a loopback IP literal',
    address: '127.0.0.11',
    head: () => `<link rel="icon" type="image/png" sizes="128x128" href="${pub('/redirect/icon.png')}">`,
    asked: () => pub('/redirect/icon.png'),
    refusal: 'refused by checkUrl',
    field: 'icon',
  },
];

let site: FixtureServer;
const listeners = new Map<string, Listener>();
const target = (address: string) => listeners.get(address)!.authority;
/** Every connection and request any forbidden listener saw (since the last reset). */
const allHits = () => [...listeners.values()].flatMap((l) => l.hits);
const resetHits = () => {
  for (const l of listeners.values()) l.hits.length = 0;
};

const resolved: string[] = [];
/** Every fetch the closed service's pipeline asked for, how it ended and, when refused, the URL refused (the hop). */
const calls: { url: string; outcome: Outcome; refused?: string }[] = [];
let closed: TestHandler;
let opened: TestHandler;
/** A closed service of its own (its own data dir, so no image-URL memo from earlier runs). */
let closedService: () => TestHandler;

beforeAll(async () => {
  imagePng = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  iconPng = await sharp({ create: { width: 128, height: 128, channels: 3, background: '#cc3366' } })
    .png()
    .toBuffer();
  site = await startFixtureServer();
  PORT = site.port;
  for (const address of new Set(CASES.map((c) => c.address))) listeners.set(address, await startListener(address));

  for (const c of CASES)
    site.route(`/page/${CASES.indexOf(c)}`, {
      body: `<!doctype html><html lang="en"><head><title>Public page</title>${c.head(target(c.address))}</head><body><p>Hello</p></body></html>`,
    });
  site.route('/app.webmanifest', {
    headers: { 'content-type': 'application/manifest+json' },
    body: JSON.stringify({ icons: [{ src: `http://${name('manifest-icon.test', target('127.0.0.7'))}/app-icon.png`, sizes: '192x192', type: 'image/png' }] }),
  });
  site.route('/oembed.json', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'photo',
      version: '1.0',
      thumbnail_url: `http://${target('127.0.0.9')}/thumbnail.png`,
      thumbnail_width: 400,
      thumbnail_height: 300,
    }),
  });
  site.route('/redirect/og.png', { status: 302, headers: { location: `http://${name('redirect-target.test', target('127.0.0.10'))}/redirected.png` } });
  site.route('/redirect/icon.png', { status: 302, headers: { location: `http://${target('127.0.0.11')}/redirected-icon.png` } });
  site.route('/ok.png', { headers: { 'content-type': 'image/png' }, body: imagePng });
  site.route('/page-ok', { body: `<html><head><title>Control</title><meta property="og:image" content="${pub('/ok.png')}"></head></html>` });

  // Every listener is on an allowed port: the address, not the port, is what the guard must refuse.
  const allowedPorts = [site.port, ...[...listeners.values()].map((l) => l.port)];
  const deps: FetcherDeps = {
    allowPrivateNetworks: false,
    allowedPorts,
    userAgent: 'linklens-test',
    maxRedirects: 10,
    trustedAddresses: ['127.0.0.1'],
    resolver: async (host) => {
      resolved.push(host);
      if (host === 'public.test') return [{ address: '127.0.0.1', family: 4 }];
      const address = NAMES[host];
      if (address) return [{ address, family: 4 }];
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    },
  };
  const recorded =
    (f: Fetcher): Fetcher =>
    async (url, options) => {
      try {
        const res = await f(url, options);
        calls.push({ url, outcome: 'fetched' });
        return res;
      } catch (err) {
        const e = err as { details?: { url?: string }; trail?: string[] };
        calls.push({ url, outcome: outcomeOf(err), refused: err instanceof LinkNotAllowedError ? e.details?.url : e.trail?.at(-1) });
        throw err;
      }
    };
  // The closed guard of production, with the one trusted fixture address.
  closedService = () => createTestHandler({ config: { allowPrivateNetworks: false, allowedPorts }, fetch: recorded(createFetcher(deps)) });
  closed = closedService();
  // The same fetcher with loopback opened: the control that every listener is reachable.
  opened = createTestHandler({ config: { allowPrivateNetworks: false, allowedPorts }, fetch: createFetcher({ ...deps, allowLoopback: true }) });
});
afterAll(async () => {
  await site?.close();
  for (const l of listeners.values()) await l.close();
  closed?.cleanup();
  opened?.cleanup();
});

test('control: the closed guard lets an image on the trusted host through', async () => {
  const res = await closed.post(JSON.stringify({ link: pub('/page-ok') }));
  expect(res.json.image?.original).toMatchObject({ width: 400, height: 300 });
});

describe.each(CASES.map((c, i) => [c.kind, c, i] as const))('%s', (_kind, c, i) => {
  test('is refused by the guard and its listener sees nothing; the record still comes back', async () => {
    resetHits();
    calls.length = 0;
    resolved.length = 0;
    const res = await closed.post(JSON.stringify({ link: pub(`/page/${i}`) }));
    // No forbidden listener saw a connection, let alone a request.
    expect(allHits()).toEqual([]);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, title: 'Public page' });
    if (c.field) expect(res.json[c.field]).toBeUndefined();
    // The sub-fetch was attempted, and the guard (not DNS, not a dead port) refused it.
    const asked = c.asked(target(c.address));
    expect(calls.filter((x) => x.url === asked)).toEqual([expect.objectContaining({ url: asked, outcome: c.refusal })]);
    // What was refused is the forbidden target itself (for a redirect: its second hop, after the
    // first reached the trusted fixture).
    const refused = new URL(calls.find((x) => x.url === asked)!.refused!);
    expect(refused.port).toBe(String(listeners.get(c.address)!.port));
    if (asked.startsWith(pub('/'))) expect(site.requests.map((r) => r.url)).toContain(new URL(asked).pathname);
  });

  test('control: with loopback opened, the same page reaches that listener', async () => {
    resetHits();
    const res = await opened.post(JSON.stringify({ link: pub(`/page/${i}`) }));
    expect(res.statusCode).toBe(200);
    expect(listeners.get(c.address)!.hits.some((h) => / GET \//.test(h))).toBe(true);
    if (c.field) expect(res.json[c.field]).toBeDefined();
    resetHits();
  });
});

test('all pages at once, on a fresh closed service: no listener touched, every name resolved by the test resolver, only the trusted host fetched', async () => {
  resetHits();
  calls.length = 0;
  resolved.length = 0;
  const fresh = closedService();
  try {
    for (let i = 0; i < CASES.length; i++) await fresh.post(JSON.stringify({ link: pub(`/page/${i}`) }));
  } finally {
    fresh.cleanup();
  }
  expect(allHits()).toEqual([]);
  for (const host of ['og-image.test', 'ld-image.test', 'manifest.test', 'manifest-icon.test', 'oembed.test', 'redirect-target.test'])
    expect(resolved).toContain(host);
  // localhost is refused by name before any lookup.
  expect(resolved).not.toContain('localhost');
  expect(calls.filter((x) => x.outcome === 'fetched').every((x) => x.url.startsWith(pub('/')))).toBe(true);
});
