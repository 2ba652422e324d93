/**
 * The proxy route of the fetcher (lib/fetch/proxy-route.ts, proxy-tunnel.ts), against a real
 * forward proxy on loopback (test/helpers/forward-proxy.ts) and sites that wall direct requests:
 * a site tells a proxied request by its source address (the proxy connects from 127.0.0.2).
 *
 * The guard stays closed as in production; the fixture address 127.0.0.1 is trusted in code and
 * every test host name resolves to it, while `internal.test` resolves to a private address.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { hostRulesOf } from '../../lib/fetch/host-rules';
import { type ProxyMode, type ProxyPolicy, RouteState, type WallMemo } from '../../lib/fetch/proxy-route';
import { parseProxyUrl } from '../../lib/fetch/proxy-url';
import type { Fetcher } from '../../lib/fetch/types';
import { blobWallMemo } from '../../lib/fetch/wall-memo';
import { type ForwardProxy, PROXY_SOURCE, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { memoryBlobs } from '../helpers/memory-blobs';
import { closedGuardFetcher, recordingLog } from '../helpers/service';
import { makeTestCertificates } from '../helpers/tls-certs';
import { realPage, WALLS, walled } from './wall-fixtures';

const CREDENTIALS = 'scraper:s3cr3t-Pa55';
const certs = makeTestCertificates(['secure.test', '127.0.0.1']);

// The test CA for every secure context of this file (the fetcher's, the tunnel's TLS, the proxy's).
const realCreateSecureContext = tls.createSecureContext;
const secureContexts = jest.spyOn(tls, 'createSecureContext').mockImplementation((options) => realCreateSecureContext({ ...options, ca: certs.ca }));
afterAll(() => secureContexts.mockRestore());

/** One loopback server for every site: the Host header picks the site. */
interface Sites {
  port: number;
  /** `host path direct|proxy`, in order. */
  seen: string[];
  route(host: string, path: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): void;
  close(): Promise<void>;
}

async function startSites(secure = false): Promise<Sites> {
  const table = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();
  const seen: string[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = (req.url ?? '/').split('?')[0];
    seen.push(`${host} ${path} ${viaProxy(req) ? 'proxy' : 'direct'}`);
    const h = table.get(`${host} ${path}`);
    if (h) return h(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  };
  const server = secure ? https.createServer({ cert: certs.cert, key: certs.key }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    route: (host, path, h) => table.set(`${host} ${path}`, h),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const page = (body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(body);
};

/** The guard closed; every name is the fixture address, but `internal.test` (private) and unknown `*.invalid`. */
function fetcher(ports: number[], proxy?: ProxyPolicy, log = recordingLog()): Fetcher {
  const addressOf = (host: string) => (host === 'internal.test' ? '10.0.0.7' : host.endsWith('.invalid') ? undefined : '127.0.0.1');
  return closedGuardFetcher(ports, addressOf, { proxy, log });
}

function policy(proxy: ForwardProxy | string, mode: ProxyMode, extra: Partial<ProxyPolicy> = {}): ProxyPolicy {
  const endpoint = parseProxyUrl(typeof proxy === 'string' ? proxy : proxy.url(CREDENTIALS));
  return { mode, endpoint: async () => endpoint, ...extra };
}

const opts = { maxBytes: 256 * 1024, timeoutMs: 3000 };

let sites: Sites;
let proxy: ForwardProxy;
beforeAll(async () => {
  sites = await startSites();
  proxy = await startForwardProxy({ credentials: CREDENTIALS });
});
afterAll(async () => {
  await sites.close();
  await proxy.close();
});
beforeEach(() => {
  sites.seen.length = 0;
  proxy.log.length = 0;
  proxy.authorizations.length = 0;
  proxy.behaviour = 'ok';
});

describe('the tunnel goes to the address the guard checked', () => {
  test('always: CONNECT names the checked address, never the host; the site gets the host name in Host', async () => {
    let hostHeader = '';
    sites.route('news.test', '/a', (req, res) => {
      hostHeader = req.headers.host ?? '';
      page('<title>A</title>')(req, res);
    });
    const res = await fetcher([sites.port], policy(proxy, 'always'))(`http://news.test:${sites.port}/a`, opts);
    expect(res.status).toBe(200);
    expect(res.route).toBe('proxy');
    expect(proxy.log).toEqual([`CONNECT 127.0.0.1:${sites.port}`]);
    expect(hostHeader).toBe(`news.test:${sites.port}`);
    expect(sites.seen).toEqual(['news.test /a proxy']);
    // The credentials went to the proxy, in Proxy-Authorization, and nowhere else.
    expect(proxy.authorizations).toEqual([`Basic ${Buffer.from(CREDENTIALS).toString('base64')}`]);
  });

  test('https through CONNECT: TLS to the host name (SNI and certificate) on top of the tunnel', async () => {
    const secure = await startSites(true);
    try {
      let sni: string | false = false;
      secure.route('secure.test', '/s', (req, res) => {
        sni = (req.socket as tls.TLSSocket & { servername?: string | false }).servername ?? false;
        page('<title>Secure</title>')(req, res);
      });
      const res = await fetcher([secure.port], policy(proxy, 'always'))(`https://secure.test:${secure.port}/s`, opts);
      expect(res.status).toBe(200);
      expect(res.body.toString()).toContain('Secure');
      expect(sni).toBe('secure.test');
      expect(proxy.log).toEqual([`CONNECT 127.0.0.1:${secure.port}`]);
      expect(secure.seen).toEqual(['secure.test /s proxy']);
    } finally {
      await secure.close();
    }
  });

  test('an https:// proxy: TLS to the proxy, CONNECT inside it, TLS to the site inside that', async () => {
    const tlsProxy = await startForwardProxy({ credentials: CREDENTIALS, tls: { cert: certs.cert, key: certs.key } });
    const secure = await startSites(true);
    try {
      secure.route('secure.test', '/s', page('<title>Twice wrapped</title>'));
      const res = await fetcher([secure.port], policy(tlsProxy, 'always'))(`https://secure.test:${secure.port}/s`, opts);
      expect(res.body.toString()).toContain('Twice wrapped');
      expect(tlsProxy.log).toEqual([`CONNECT 127.0.0.1:${secure.port}`]);
    } finally {
      await secure.close();
      await tlsProxy.close();
    }
  });
});

describe('the guard holds through the proxy: what it refuses never reaches the proxy', () => {
  const forbidden: [string, (port: number) => string][] = [
    ['a private address literal', () => 'http://10.1.2.3/'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['an IPv6 loopback literal', (p) => `http://[::1]:${p}/`],
    ['an IPv4-mapped metadata address', () => 'http://[::ffff:169.254.169.254]/'],
    ['a name that resolves to a private address', () => 'http://internal.test/'],
  ];

  test.each(forbidden)('%s, asked directly', async (_name, link) => {
    const f = fetcher([sites.port], policy(proxy, 'always'));
    await expect(f(link(sites.port), opts)).rejects.toThrow();
    expect(proxy.log).toEqual([]);
  });

  test.each(forbidden)('%s, as the target of a redirect through the proxy', async (_name, link) => {
    sites.route('hop.test', '/go', (_req, res) => {
      res.writeHead(302, { location: link(sites.port) });
      res.end();
    });
    const f = fetcher([sites.port], policy(proxy, 'always'));
    await expect(f(`http://hop.test:${sites.port}/go`, opts)).rejects.toThrow();
    // The first hop went through the proxy; the forbidden second never did.
    expect(proxy.log).toEqual([`CONNECT 127.0.0.1:${sites.port}`]);
  });

  test('a name that resolves to a private address fails as a name that does not resolve, through the proxy too', async () => {
    const f = fetcher([sites.port], policy(proxy, 'always'));
    const internal = await f('http://internal.test/', opts).catch((e) => e);
    const unknown = await f('http://nowhere.invalid/', opts).catch((e) => e);
    expect(internal).toBeInstanceOf(FetchFailure);
    expect([internal.code, internal.message]).toEqual([unknown.code, unknown.message]);
    expect(proxy.log).toEqual([]);
  });
});

describe('modes', () => {
  beforeAll(() => {
    sites.route('shop.amazon.com', '/p', page('<title>Shop</title>'));
    sites.route('amazon.com', '/p', page('<title>Apex</title>'));
    sites.route('notamazon.com', '/p', page('<title>Other</title>'));
    sites.route('news.test', '/p', page('<title>News</title>'));
  });

  test('hosts: only the listed hosts (and their subdomains) go through the proxy', async () => {
    const f = fetcher([sites.port], policy(proxy, 'hosts', { rules: hostRulesOf({ proxyHosts: ['amazon.com'] }) }));
    for (const host of ['shop.amazon.com', 'amazon.com', 'notamazon.com', 'news.test']) await f(`http://${host}:${sites.port}/p`, opts);
    expect(sites.seen).toEqual(['shop.amazon.com /p proxy', 'amazon.com /p proxy', 'notamazon.com /p direct', 'news.test /p direct']);
  });

  test('fallback: a listed host goes to the proxy first; the others direct', async () => {
    const f = fetcher([sites.port], policy(proxy, 'fallback', { rules: hostRulesOf({ proxyHosts: ['*.amazon.com'] }) }));
    const listed = await f(`http://shop.amazon.com:${sites.port}/p`, opts);
    const other = await f(`http://news.test:${sites.port}/p`, opts);
    expect([listed.route, other.route]).toEqual(['proxy', 'direct']);
    expect(sites.seen).toEqual(['shop.amazon.com /p proxy', 'news.test /p direct']);
  });

  test('off, or no policy: nothing goes through the proxy', async () => {
    await fetcher([sites.port], policy(proxy, 'off'))(`http://news.test:${sites.port}/p`, opts);
    await fetcher([sites.port])(`http://news.test:${sites.port}/p`, opts);
    expect(proxy.log).toEqual([]);
    expect(sites.seen).toEqual(['news.test /p direct', 'news.test /p direct']);
  });
});

describe('fallback: each wall, then the proxy', () => {
  beforeAll(() => {
    for (const wall of WALLS) {
      sites.route(wall.host, wall.path, walled(wall, viaProxy, page(realPage(wall.host))));
      // The login redirect's target, as Instagram answers it.
      if (wall.kind === 'login-redirect') sites.route(wall.host, '/accounts/login/', page('<title>Login • Instagram</title>'));
    }
  });

  test.each(WALLS.map((w) => [w.kind, w] as const))('%s: without a proxy, the wall is what comes back', async (_kind, wall) => {
    const res = await fetcher([sites.port])(`http://${wall.host}:${sites.port}${wall.path}`, opts);
    expect(res.route).toBe('direct');
    expect(res.body.toString()).not.toContain('The real page');
    expect(proxy.log).toEqual([]);
  });

  test.each(WALLS.map((w) => [w.kind, w] as const))('%s: direct, the wall, then the real page through the proxy', async (kind, wall) => {
    const log = recordingLog();
    const route = new RouteState();
    const res = await fetcher([sites.port], policy(proxy, 'fallback'), log)(`http://${wall.host}:${sites.port}${wall.path}`, { ...opts, route });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toContain(`The real page of ${wall.host}`);
    expect(res.route).toBe('proxy-after-wall');
    expect(route.walls).toEqual([{ host: wall.host, wall: kind }]);
    expect(sites.seen).toEqual([`${wall.host} ${wall.path} direct`, `${wall.host} ${wall.path} proxy`]);
    expect(log.lines).toContainEqual(
      expect.objectContaining({ message: 'wall seen: asking again through the proxy', extra: expect.objectContaining({ host: wall.host, wall: kind }) }),
    );
  });

  test('after a wall, the rest of the preview goes to that host through the proxy at once (and other hosts still direct)', async () => {
    const wall = WALLS[0];
    sites.route(
      wall.host,
      '/og.png',
      walled(wall, viaProxy, (_q, r) => r.end('png')),
    );
    sites.route('cdn.test', '/og.png', (_q, r) => r.end('png'));
    const route = new RouteState();
    const f = fetcher([sites.port], policy(proxy, 'fallback'));
    await f(`http://${wall.host}:${sites.port}${wall.path}`, { ...opts, route });
    sites.seen.length = 0;
    const image = await f(`http://${wall.host}:${sites.port}/og.png`, { ...opts, route });
    await f(`http://cdn.test:${sites.port}/og.png`, { ...opts, route });
    expect(image.route).toBe('proxy');
    expect(sites.seen).toEqual([`${wall.host} /og.png proxy`, 'cdn.test /og.png direct']);
    expect(route.hint()).toEqual({ proxyHosts: [wall.host] });
  });

  test("a route hint (a job of the preview on a worker) starts with the preview's proxied hosts", async () => {
    const wall = WALLS[1];
    await fetcher([sites.port], policy(proxy, 'fallback'))(`http://${wall.host}:${sites.port}${wall.path}`, {
      ...opts,
      route: new RouteState({ proxyHosts: [wall.host] }),
    });
    expect(sites.seen).toEqual([`${wall.host} ${wall.path} proxy`]);
  });

  test('a refused or reset connection is asked again through the proxy', async () => {
    sites.route('resets.test', '/r', (req, res) => {
      if (viaProxy(req)) return page('<title>Through</title>')(req, res);
      req.socket.destroy();
    });
    const route = new RouteState();
    const res = await fetcher([sites.port], policy(proxy, 'fallback'))(`http://resets.test:${sites.port}/r`, { ...opts, route });
    expect(res.body.toString()).toContain('Through');
    expect(route.walls).toEqual([{ host: 'resets.test', wall: 'CONNECTION_RESET' }]);
  });

  test('the memo: the next preview of a walled host goes to the proxy first, one round trip', async () => {
    const wall = WALLS[2];
    const blobs = memoryBlobs();
    const memo: WallMemo = blobWallMemo(blobs, 3_600_000);
    const f = fetcher([sites.port], policy(proxy, 'fallback', { memo }));
    await f(`http://${wall.host}:${sites.port}${wall.path}`, { ...opts, route: new RouteState() });
    await new Promise((r) => setImmediate(r)); // the memo write is not awaited by the fetch
    expect(blobs.keys()).toEqual([expect.stringMatching(/^jobs\/proxy-walls\/[0-9a-f]{64}\.json$/)]);
    sites.seen.length = 0;
    // Another process: a memo over the same store, nothing cached.
    const g = fetcher([sites.port], policy(proxy, 'fallback', { memo: blobWallMemo(blobs, 3_600_000) }));
    const res = await g(`http://${wall.host}:${sites.port}${wall.path}`, { ...opts, route: new RouteState() });
    expect(res.route).toBe('proxy');
    expect(sites.seen).toEqual([`${wall.host} ${wall.path} proxy`]);
  });

  test('the memo forgets a wall after its time to live', async () => {
    const blobs = memoryBlobs();
    let now = 1_000_000;
    const memo = blobWallMemo(blobs, 60_000, () => now);
    await memo.remember('www.amazon.com', 'amazon-robot-check');
    expect(await blobWallMemo(blobs, 60_000, () => now + 59_000).isWalled('www.amazon.com')).toBe(true);
    expect(await blobWallMemo(blobs, 60_000, () => now + 61_000).isWalled('www.amazon.com')).toBe(false);
    now += 61_000;
    expect(await memo.isWalled('www.amazon.com')).toBe(false);
  });

  test('a POST (a platform token call) is never asked again', async () => {
    const wall = WALLS[0];
    const res = await fetcher([sites.port], policy(proxy, 'fallback'))(`http://${wall.host}:${sites.port}${wall.path}`, { ...opts, method: 'POST', body: 'x' });
    expect(res.status).toBe(403);
    expect(proxy.log).toEqual([]);
  });
});

describe('a failing proxy is a PROXY_FAILURE, and its credentials are never told', () => {
  const linkTo = () => `http://news.test:${sites.port}/p`;

  async function failure(p: ProxyPolicy, log = recordingLog()): Promise<FetchFailure> {
    const err = await fetcher([sites.port], p, log)(linkTo(), { ...opts, timeoutMs: 1500 }).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    const told = JSON.stringify({ message: err.message, log: log.lines, cause: String(err.cause) });
    expect(told).not.toContain('s3cr3t');
    expect(told).not.toContain(Buffer.from(CREDENTIALS).toString('base64'));
    return err;
  }

  test('it refuses the credentials (407)', async () => {
    const err = await failure(policy(proxy.url('scraper:wrong-s3cr3t'), 'always'));
    expect(err.code).toBe('PROXY_FAILURE');
    expect(err.message).toMatch(/refused the credentials/);
    expect(err.route).toBe('proxy');
  });

  test('it answers 502', async () => {
    proxy.behaviour = 'status-502';
    const err = await failure(policy(proxy, 'always'));
    expect([err.code, err.message]).toEqual(['PROXY_FAILURE', `The proxy http://127.0.0.1:${proxy.port} answered 502 to CONNECT.`]);
  });

  test('it never answers the CONNECT', async () => {
    proxy.behaviour = 'hang';
    const err = await failure(policy(proxy, 'always'));
    expect(err.code).toBe('PROXY_FAILURE');
    expect(err.message).toMatch(/did not answer in time/);
  });

  test('nothing listens at its address', async () => {
    const gone = await startForwardProxy();
    const url = gone.url(CREDENTIALS);
    await gone.close();
    const err = await failure(policy(url, 'always'));
    expect(err.code).toBe('PROXY_FAILURE');
    expect(err.message).toMatch(/could not be reached \(ECONNREFUSED\)/);
  });

  test('after a wall, a failing proxy leaves a PROXY_FAILURE (the wall is not taken for the page)', async () => {
    proxy.behaviour = 'status-502';
    const wall = WALLS[0];
    const err = await fetcher([sites.port], policy(proxy, 'fallback'))(`http://${wall.host}:${sites.port}${wall.path}`, opts).catch((e) => e);
    expect([err.code, err.route]).toEqual(['PROXY_FAILURE', 'proxy-after-wall']);
  });

  test("the source address of a proxied request is the proxy's, as the fixtures assume", () => {
    expect(PROXY_SOURCE).toBe('127.0.0.2');
  });
});
