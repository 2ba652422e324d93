/**
 * The fetcher's connection pool (lib/fetch/connection-agents.ts, hop-request.ts): connections are
 * reused, and the guard's guarantee holds over them. The guard stays closed as in production; the
 * fixture addresses are trusted in code, and a resolver the test controls says where each name is.
 * The servers count the TCP connections they accept, so reuse is what the server saw.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { type ProxyPolicy, RouteState } from '../../lib/fetch/proxy-route';
import { parseProxyUrl } from '../../lib/fetch/proxy-url';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../lib/fetch/types';
import { type ForwardProxy, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { recordingLog } from '../helpers/service';

interface Site {
  port: number;
  /** TCP connections accepted, and the source of each request (`direct` / `proxy`). */
  connections: number;
  seen: string[];
  /** Sockets open now (server side). */
  open: Set<Socket>;
  close(): Promise<void>;
}

/** A loopback site on `host` (and optionally the same port on a second address), answering `ok` with keep-alive. */
async function startSite(host = '127.0.0.1', handler?: http.RequestListener): Promise<Site> {
  const site: Site = { port: 0, connections: 0, seen: [], open: new Set(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    site.seen.push(`${req.method} ${req.url} ${viaProxy(req) ? 'proxy' : 'direct'}`);
    if (handler) return handler(req, res);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  server.on('connection', (s) => {
    site.connections++;
    site.open.add(s);
    s.on('close', () => site.open.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  site.port = (server.address() as AddressInfo).port;
  site.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return site;
}

/** A fetcher with a closed guard whose resolver answers `where[host]` at the time of each lookup. */
function fetcherFor(where: Record<string, string>, ports: number[], extra: { proxy?: ProxyPolicy; trusted?: string[] } = {}): Fetcher {
  return createFetcher({
    allowPrivateNetworks: false,
    allowedPorts: ports,
    trustedAddresses: extra.trusted ?? ['127.0.0.1'],
    userAgent: 'linklens-test',
    maxRedirects: 5,
    log: recordingLog(),
    proxy: extra.proxy,
    resolver: async (host) => {
      const address = where[host];
      if (address) return [{ address, family: 4 }];
      throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
  });
}

const opts = { maxBytes: 64 * 1024, timeoutMs: 3000 };
const sites: Site[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((s) => s.close()));
});
async function site(host?: string, handler?: http.RequestListener): Promise<Site> {
  const s = await startSite(host, handler);
  sites.push(s);
  return s;
}

test('a second request to the host reuses the first one’s connection, and says so', async () => {
  const s = await site();
  const fetch = fetcherFor({ 'news.test': '127.0.0.1' }, [s.port]);
  const first = await fetch(`http://news.test:${s.port}/a`, opts);
  const second = await fetch(`http://news.test:${s.port}/b`, opts);
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(s.connections).toBe(1);
  expect(first.wire).toEqual({ opened: 1, reused: 0, roundTrips: 2 });
  expect(second.wire).toEqual({ opened: 0, reused: 1, roundTrips: 1 });
});

test('the route counts a preview’s connections: the link’s round trips first, and its images’', async () => {
  const s = await site('127.0.0.1', (req, res) => {
    res.writeHead(200, { 'content-type': req.url === '/i.png' ? 'image/png' : 'text/html' });
    res.end('x');
  });
  const fetch = fetcherFor({ 'news.test': '127.0.0.1' }, [s.port]);
  const route = new RouteState();
  await fetch(`http://news.test:${s.port}/page`, { ...opts, route });
  await fetch(`http://news.test:${s.port}/i.png`, { ...opts, route });
  expect(route.summary().wire).toEqual({ opened: 1, reused: 1, page: 2, image: 1 });
});

test('a name whose answer turned private is refused on the next request, though its pooled connection is alive', async () => {
  const s = await site();
  const where: Record<string, string> = { 'flip.test': '127.0.0.1' };
  const fetch = fetcherFor(where, [s.port]);
  expect((await fetch(`http://flip.test:${s.port}/a`, opts)).status).toBe(200);
  expect(s.open.size).toBe(1);
  where['flip.test'] = '10.0.0.7';
  const err = await fetch(`http://flip.test:${s.port}/b`, opts).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FetchFailure);
  expect((err as FetchFailure).code).toBe('DNS_FAILURE');
  // The pooled socket stayed idle: the server saw one request only.
  expect(s.seen).toEqual(['GET /a direct']);
});

test('a name that moved to another allowed address gets a connection there, not the pooled one', async () => {
  const a = await site('127.0.0.1');
  const where: Record<string, string> = { 'moved.test': '127.0.0.1' };
  // The same port on a second loopback address.
  const b = await startSite('127.0.0.3');
  sites.push(b);
  const fetch = fetcherFor(where, [a.port, b.port], { trusted: ['127.0.0.1', '127.0.0.3'] });
  expect((await fetch(`http://moved.test:${a.port}/a`, opts)).status).toBe(200);
  where['moved.test'] = '127.0.0.3';
  // Port a.port on 127.0.0.3 has no server: the request must connect there (and fail), not reuse 127.0.0.1's socket.
  const err = await fetch(`http://moved.test:${a.port}/b`, opts).catch((e: unknown) => e);
  expect((err as FetchFailure).code).toBe('CONNECTION_REFUSED');
  expect(a.seen).toEqual(['GET /a direct']);
  expect((await fetch(`http://moved.test:${b.port}/c`, opts)).status).toBe(200);
  expect(b.seen).toEqual(['GET /c direct']);
});

test('a connection that fell back to a later address of the answer is not pooled (its key is the first)', async () => {
  const s = await site();
  // 127.0.0.9 refuses (nothing listens there); the connection falls back to 127.0.0.1.
  const fetch = createFetcher({
    allowPrivateNetworks: false,
    allowedPorts: [s.port],
    trustedAddresses: ['127.0.0.1', '127.0.0.9'],
    userAgent: 'linklens-test',
    maxRedirects: 0,
    resolver: async () => [
      { address: '127.0.0.9', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ],
  });
  const first = await fetch(`http://two.test:${s.port}/a`, opts);
  const second = await fetch(`http://two.test:${s.port}/b`, opts);
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(s.connections).toBe(2);
  expect(second.wire?.reused).toBe(0);
});

describe('the proxy route and the pool never share a connection', () => {
  let proxy: ForwardProxy;
  beforeAll(async () => {
    proxy = await startForwardProxy();
  });
  afterAll(() => proxy.close());
  beforeEach(() => {
    proxy.log.length = 0;
  });
  const policy = (): ProxyPolicy => {
    const endpoint = parseProxyUrl(proxy.url());
    return { mode: 'fallback', endpoint: async () => endpoint };
  };

  test('a tunnelled connection is not handed to a direct request, nor a pooled one to a proxied request', async () => {
    const s = await site();
    const fetch = fetcherFor({ 'mixed.test': '127.0.0.1' }, [s.port], { proxy: policy() });
    const onProxy = new RouteState();
    onProxy.useProxy('mixed.test');
    await fetch(`http://mixed.test:${s.port}/1`, { ...opts, route: onProxy });
    await fetch(`http://mixed.test:${s.port}/2`, opts);
    await fetch(`http://mixed.test:${s.port}/3`, opts);
    await fetch(`http://mixed.test:${s.port}/4`, { ...opts, route: onProxy });
    expect(s.seen).toEqual(['GET /1 proxy', 'GET /2 direct', 'GET /3 direct', 'GET /4 proxy']);
    // One tunnel per proxied request; the two direct ones shared one pooled connection.
    expect(proxy.log).toEqual([`CONNECT 127.0.0.1:${s.port}`, `CONNECT 127.0.0.1:${s.port}`]);
    expect(s.connections).toBe(3);
  });
});

describe('a pooled connection that is dead when reused', () => {
  /** A site that answers the first request of each connection and resets the connection on the next. */
  async function onceThenReset(): Promise<Site> {
    const served = new WeakMap<Socket, number>();
    return site('127.0.0.1', (req, res) => {
      const n = served.get(req.socket) ?? 0;
      served.set(req.socket, n + 1);
      if (n > 0) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`ok ${req.method}`);
    });
  }

  test('a GET is sent again once, on a new connection, and succeeds', async () => {
    const s = await onceThenReset();
    const fetch = fetcherFor({ 'dead.test': '127.0.0.1' }, [s.port]);
    await fetch(`http://dead.test:${s.port}/a`, opts);
    const res = await fetch(`http://dead.test:${s.port}/b`, opts);
    expect(res.body.toString()).toBe('ok GET');
    expect(s.seen).toEqual(['GET /a direct', 'GET /b direct', 'GET /b direct']);
    expect(s.connections).toBe(2);
    expect(res.wire).toEqual({ opened: 1, reused: 1, roundTrips: 3 });
  });

  test('a POST is never sent twice: the reset is its failure', async () => {
    const s = await onceThenReset();
    const fetch = fetcherFor({ 'dead.test': '127.0.0.1' }, [s.port]);
    await fetch(`http://dead.test:${s.port}/a`, opts);
    const err = await fetch(`http://dead.test:${s.port}/token`, { ...opts, method: 'POST', body: 'x=1' }).catch((e: unknown) => e);
    expect((err as FetchFailure).code).toBe('CONNECTION_RESET');
    expect(s.seen).toEqual(['GET /a direct', 'POST /token direct']);
  });

  test('a new connection that breaks is not retried', async () => {
    const s = await site('127.0.0.1', (req) => req.socket.destroy());
    const fetch = fetcherFor({ 'dead.test': '127.0.0.1' }, [s.port]);
    const err = await fetch(`http://dead.test:${s.port}/a`, opts).catch((e: unknown) => e);
    expect((err as FetchFailure).code).toBe('CONNECTION_RESET');
    expect(s.seen).toEqual(['GET /a direct']);
  });
});

test('the pool keeps at most 6 idle connections per origin: the others close when their requests end', async () => {
  const s = await site();
  const fetch = fetcherFor({ 'busy.test': '127.0.0.1' }, [s.port]);
  await Promise.all(Array.from({ length: 9 }, (_, i) => fetch(`http://busy.test:${s.port}/${i}`, opts)));
  expect(s.connections).toBe(9);
  // The 3 beyond the bound are closed by the client; wait for the server to see it.
  for (let i = 0; i < 200 && s.open.size > 6; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(s.open.size).toBe(6);
  // And the 6 kept are reused: 6 more requests at once open nothing new.
  await Promise.all(Array.from({ length: 6 }, (_, i) => fetch(`http://busy.test:${s.port}/again-${i}`, opts)));
  expect(s.connections).toBe(9);
});
