import { getEventListeners } from 'node:events';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import { LinkNotAllowedError } from '../../lib/errors';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { createFetcher, type FetcherDeps } from '../../lib/fetch/safe-fetch';
import type { FetchOptions } from '../../lib/fetch/types';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { makeTestCertificates } from '../helpers/tls-certs';

let site: FixtureServer;
const open: FetcherDeps = { allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 10 };
const fetchOpen = createFetcher(open);
const opts = { maxBytes: 1024 * 1024, timeoutMs: 3000 };

beforeAll(async () => {
  site = await startFixtureServer({
    '/page': { body: '<html><title>ok</title></html>' },
    '/r1': { status: 301, headers: { location: '/r2' } },
    '/r2': { status: 302, headers: { location: '/r3?x=1' } },
    '/r3': { status: 307, headers: { location: '/page' } },
    '/loop-a': { status: 302, headers: { location: '/loop-b' } },
    '/loop-b': { status: 302, headers: { location: '/loop-a' } },
    '/missing': { status: 404, body: 'nope' },
    '/boom': { status: 500, body: 'err' },
    '/to-file': { status: 302, headers: { location: 'file:///etc/passwd' } },
    '/to-gopher': { status: 302, headers: { location: 'gopher://127.0.0.1:70/' } },
    '/to-metadata': { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
    '/to-private-name': { status: 302, headers: { location: 'http://internal.test/admin' } },
    '/to-localhost': { status: 302, headers: { location: 'http://localhost/' } },
    '/to-v6-loopback': { status: 302, headers: { location: 'http://[::1]/' } },
    '/big': { body: 'x'.repeat(200_000) },
    '/big-declared': { headers: { 'content-length': '200000' }, body: 'y'.repeat(200_000) },
    '/gzip': { headers: { 'content-encoding': 'gzip' }, body: zlib.gzipSync(Buffer.alloc(5_000_000, 0x61)) },
    '/cookie-redirect': (req, res) => {
      if ((req.headers.cookie ?? '').includes('seen=1')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<title>after cookie</title>');
        return;
      }
      res.writeHead(302, { location: '/cookie-redirect', 'set-cookie': 'seen=1; Path=/' });
      res.end();
    },
    '/slow-headers': () => {
      /* never answers */
    },
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>'); /* never ends */
    },
  });
  for (let i = 0; i < 12; i++) site.route(`/hop${i}`, { status: 302, headers: { location: `/hop${i + 1}` } });
  site.route('/hop12', { body: 'end' });
});
afterAll(() => site.close());

describe('redirects', () => {
  test('follows and records the whole trail', async () => {
    const res = await fetchOpen(site.url('/r1'), opts);
    expect(res.status).toBe(200);
    expect(res.finalUrl).toBe(site.url('/page'));
    expect(res.trail).toEqual([site.url('/r1'), site.url('/r2'), site.url('/r3?x=1'), site.url('/page')]);
    expect(res.body.toString()).toContain('<title>ok</title>');
  });

  test('a loop stops with REDIRECT_LOOP and the trail so far', async () => {
    const err = await fetchOpen(site.url('/loop-a'), opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('REDIRECT_LOOP');
    expect(err.trail.slice(0, 3)).toEqual([site.url('/loop-a'), site.url('/loop-b'), site.url('/loop-a')]);
    expect(err.status).toBe(302);
  });

  test('at most 10 hops', async () => {
    const ok = await fetchOpen(site.url('/hop2'), opts);
    expect(ok.trail).toHaveLength(11); // hop2..hop12: 10 redirects
    const err = await fetchOpen(site.url('/hop0'), opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('TOO_MANY_REDIRECTS');
    expect(err.trail).toHaveLength(11);
  });

  test('cookies set on a hop are sent on the next hop of the same host', async () => {
    const res = await fetchOpen(site.url('/cookie-redirect'), opts);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('<title>after cookie</title>');
    expect(res.trail).toHaveLength(2);
  });

  test.each(['/to-file', '/to-gopher'])('a redirect to a non-http scheme is refused (%s)', async (route) => {
    const err = await fetchOpen(site.url(route), opts).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err.errorCode).toBe('LINK_NOT_ALLOWED');
  });
});

describe('upstream statuses and failures', () => {
  test('4xx and 5xx are responses, not exceptions', async () => {
    expect((await fetchOpen(site.url('/missing'), opts)).status).toBe(404);
    expect((await fetchOpen(site.url('/boom'), opts)).status).toBe(500);
  });

  test('a refused connection', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const err = await fetchOpen(`http://127.0.0.1:${port}/`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('CONNECTION_REFUSED');
    expect(err.status).toBe(0);
  });

  test('a DNS failure', async () => {
    const f = createFetcher({
      ...open,
      resolver: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
      },
    });
    const err = await f('http://no-such-host.test/', opts).catch((e) => e);
    expect(err.code).toBe('DNS_FAILURE');
    expect(err.status).toBe(0);
  });

  test('headers that never come: TIMEOUT at the cap, a failure that may pass', async () => {
    // The headers never come: only the 300 ms cap can end the fetch, and it says so.
    const err = await fetchOpen(site.url('/slow-headers'), { ...opts, timeoutMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('TIMEOUT');
    expect(err.transient).toBe(true);
  });

  test('a body that never ends keeps what arrived, marked truncated', async () => {
    const res = await fetchOpen(site.url('/slow-body'), { ...opts, timeoutMs: 300 });
    expect(res.status).toBe(200);
    expect(res.truncated).toBe(true);
    expect(res.body.toString()).toBe('<html>');
  });

  test('a TLS failure (self-signed certificate)', async () => {
    const { ca, caKey } = makeTestCertificates(['127.0.0.1']);
    const server = https.createServer({ key: caKey, cert: ca }, (_q, r) => r.end('secret'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const err = await fetchOpen(`https://127.0.0.1:${port}/`, opts).catch((e) => e);
    server.close();
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('TLS_ERROR');
  });
});

describe('size caps', () => {
  test('truncate keeps the first maxBytes', async () => {
    const res = await fetchOpen(site.url('/big'), { ...opts, maxBytes: 1000, onTooLarge: 'truncate' });
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBe(true);
  });

  test('fail refuses a declared or streamed body past the cap, a failure of the resource itself', async () => {
    await expect(fetchOpen(site.url('/big-declared'), { ...opts, maxBytes: 1000, onTooLarge: 'fail' })).rejects.toMatchObject({
      code: 'TOO_LARGE',
      transient: false,
    });
    await expect(fetchOpen(site.url('/big'), { ...opts, maxBytes: 1000, onTooLarge: 'fail' })).rejects.toMatchObject({ code: 'TOO_LARGE', transient: false });
  });

  test('the cap counts decompressed bytes (a gzip bomb stops at the cap)', async () => {
    const res = await fetchOpen(site.url('/gzip'), { ...opts, maxBytes: 64 * 1024 });
    expect(res.body.length).toBe(64 * 1024);
    expect(res.truncated).toBe(true);
    expect(res.body[0]).toBe(0x61);
  });
});

describe("the caller's abort signal", () => {
  test('every fetch under one signal takes its abort listener off it when done, however it ended', async () => {
    // One signal for many fetches, as a request's budget or a page's image downloads.
    const signal = new AbortController().signal;
    const fetches: [string, Partial<FetchOptions>][] = [
      ['/page', {}],
      ['/r1', {}],
      ['/missing', {}],
      ['/page', { method: 'HEAD' }],
      ['/big', { maxBytes: 1000, onTooLarge: 'truncate' }],
      ['/big', { maxBytes: 1000, onTooLarge: 'fail' }],
      ['/big-declared', { maxBytes: 1000, onTooLarge: 'fail' }],
      ['/loop-a', {}],
      ['/slow-body', { timeoutMs: 300 }],
    ];
    for (const [path, more] of fetches) await fetchOpen(site.url(path), { ...opts, ...more, signal }).catch(() => undefined);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('the SSRF guard in the fetcher (closed, as in production)', () => {
  // The fixture plays a public host "public.test" (its loopback address trusted in code);
  // every other private address stays forbidden. The test safety net refuses non-loopback sockets.
  const closed = (extra: Partial<FetcherDeps> = {}) =>
    createFetcher({
      allowPrivateNetworks: false,
      allowedPorts: [site.port],
      userAgent: 'linklens-test',
      maxRedirects: 10,
      trustedAddresses: ['127.0.0.1'],
      resolver: async (host) => {
        if (host === 'public.test') return [{ address: '127.0.0.1', family: 4 }];
        if (host === 'internal.test') return [{ address: '10.1.2.3', family: 4 }];
        if (host === 'loopback.test') return [{ address: '127.0.0.2', family: 4 }];
        throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      },
      ...extra,
    });

  test('the trusted fixture answers', async () => {
    const res = await closed()(`http://public.test:${site.port}/page`, opts);
    expect(res.status).toBe(200);
  });

  test.each(['/to-metadata', '/to-localhost', '/to-v6-loopback'])('a public-looking redirect to a private address is refused (%s)', async (route) => {
    const before = site.requests.length;
    const err = await closed()(`http://public.test:${site.port}${route}`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err.message).toMatch(/redirects/);
    expect(site.requests.length).toBe(before + 1); // only the first hop reached the fixture
  });

  test('a public-looking redirect to a name resolving to a private address is refused, as a DNS failure', async () => {
    const before = site.requests.length;
    const err = await closed()(`http://public.test:${site.port}/to-private-name`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('DNS_FAILURE');
    expect(err.trail).toEqual([`http://public.test:${site.port}/to-private-name`, 'http://internal.test/admin']);
    expect(site.requests.length).toBe(before + 1); // only the first hop reached the fixture
  });

  test('a name resolving to a loopback address is refused at connect time', async () => {
    const err = await closed()(`http://loopback.test:${site.port}/page`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('DNS_FAILURE');
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain('127.0.0.2');
  });

  test('a port outside the allowed set is refused', async () => {
    const err = await closed({ allowedPorts: [] })(`http://public.test:${site.port}/page`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err.message).toContain(`port ${site.port}`);
  });

  test('DNS rebinding: the address checked is the address connected to', async () => {
    // First lookup public (trusted), second private: each connection uses its own checked lookup.
    let calls = 0;
    const f = closed({
      resolver: async () => (++calls === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]),
    });
    expect((await f(`http://rebind.test:${site.port}/page`, opts)).status).toBe(200);
    const err = await f(`http://rebind.test:${site.port}/page`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('DNS_FAILURE');
    expect(calls).toBe(2);
  });
});

describe('what DNS answered never reaches a caller', () => {
  // "private.test" and friends resolve to forbidden addresses; "nowhere.test" does not resolve.
  const answers: Record<string, string> = {
    'public.test': '127.0.0.1',
    'private.test': '10.0.0.5',
    'loopback.test': '127.0.0.2',
    'metadata.test': '169.254.169.254',
    'metadata6.test': 'fd00:ec2::254',
    'mapped.test': '::ffff:169.254.169.254',
  };
  const lines: { message: string; extra?: Record<string, unknown> }[] = [];
  const guarded = createFetcher({
    allowPrivateNetworks: false,
    allowedPorts: [],
    userAgent: 'linklens-test',
    maxRedirects: 10,
    trustedAddresses: ['127.0.0.1'],
    log: {
      warn: (message, extra) => {
        lines.push({ message, extra });
      },
    },
    resolver: async (host) => {
      const address = answers[host];
      if (address) return [{ address, family: address.includes(':') ? 6 : 4 }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
  });
  // Everything a response could carry: the error's class, code, message, status, trail and details.
  const visible = (err: any) => ({
    kind: err?.constructor?.name,
    code: err.code,
    errorCode: err.errorCode,
    message: err.message,
    status: err.status,
    trail: err.trail?.map((u: string) => u.replace(/\/\/[a-z0-9]+\.test/, '//NAME')),
    details: err.details,
  });
  const serialized = (err: any) => JSON.stringify({ ...err, message: err.message, stack: err.stack });

  test.each(Object.keys(answers).filter((h) => h !== 'public.test'))(
    'a link to a name resolving to a forbidden address (%s) looks exactly like an unknown name',
    async (host) => {
      const unknown = await guarded('http://nowhere.test/latest/meta-data/', opts).catch((e) => e);
      const forbidden = await guarded(`http://${host}/latest/meta-data/`, opts).catch((e) => e);
      expect(unknown).toBeInstanceOf(FetchFailure);
      expect(visible(unknown)).toMatchObject({ kind: 'FetchFailure', code: 'DNS_FAILURE', status: 0 });
      expect(visible(forbidden)).toEqual(visible(unknown));
      expect(serialized(forbidden)).not.toContain(answers[host]);
      // The logs keep what happened.
      expect(lines.at(-1)).toMatchObject({ extra: { host, address: answers[host] } });
    },
  );

  test('through a redirect too: the same DNS_FAILURE, status and trail as a redirect to an unknown name', async () => {
    site.route('/to-metadata-name', { status: 302, headers: { location: 'http://metadata.test/latest/meta-data/' } });
    site.route('/to-unknown-name', { status: 302, headers: { location: 'http://nowhere.test/latest/meta-data/' } });
    // The fixture is on a high port: open it for this pair.
    const viaPort = createFetcher({
      allowPrivateNetworks: false,
      allowedPorts: [site.port],
      userAgent: 'linklens-test',
      maxRedirects: 10,
      trustedAddresses: ['127.0.0.1'],
      log: {
        warn: (message, extra) => {
          lines.push({ message, extra });
        },
      },
      resolver: async (host) => {
        const address = answers[host];
        if (address) return [{ address, family: 4 }];
        throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      },
    });
    const a = await viaPort(`http://public.test:${site.port}/to-unknown-name`, opts).catch((e) => e);
    const b = await viaPort(`http://public.test:${site.port}/to-metadata-name`, opts).catch((e) => e);
    expect(visible(a)).toMatchObject({ kind: 'FetchFailure', code: 'DNS_FAILURE', status: 302 });
    expect({ ...visible(b), trail: b.trail.length }).toEqual({ ...visible(a), trail: a.trail.length });
    expect(b.trail).toEqual([`http://public.test:${site.port}/to-metadata-name`, 'http://metadata.test/latest/meta-data/']);
    expect(serialized(b)).not.toContain('169.254.169.254');
    expect(lines.at(-1)).toMatchObject({ extra: { host: 'metadata.test', address: '169.254.169.254', reason: 'metadata', hop: 1 } });
  });
});

describe('the open settings (LINKPREVIEW_ALLOW_PRIVATE_NETWORKS, LINKPREVIEW_ALLOW_LOOPBACK) in the fetcher', () => {
  const resolver = async (host: string) => {
    if (host === 'metadata.test') return [{ address: '169.254.169.254', family: 4 }];
    if (host === 'metadata6.test') return [{ address: 'fd00:ec2::254', family: 6 }];
    if (host === 'private.test') return [{ address: '10.0.0.5', family: 4 }];
    if (host === 'fixture.test' || host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  };
  const privateNets = createFetcher({ ...open, resolver });
  const loopbackOnly = createFetcher({ ...open, allowPrivateNetworks: false, allowLoopback: true, resolver });

  test.each([
    ['ALLOW_PRIVATE_NETWORKS', privateNets],
    ['ALLOW_LOOPBACK', loopbackOnly],
  ] as const)('%s: metadata stays closed, as a literal, a redirect and a name', async (_name, f) => {
    const before = site.requests.length;
    for (const link of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://100.100.100.200/',
      'http://[64:ff9b::a9fe:a9fe]/',
    ]) {
      const err = await f(link, opts).catch((e) => e);
      expect({ link, err }).toEqual({ link, err: expect.any(LinkNotAllowedError) });
    }
    const redirected = await f(site.url('/to-metadata'), opts).catch((e) => e);
    expect(redirected).toBeInstanceOf(LinkNotAllowedError);
    for (const host of ['metadata.test', 'metadata6.test']) {
      const err = await f(`http://${host}/latest/meta-data/`, opts).catch((e) => e);
      expect(err.code).toBe('DNS_FAILURE');
      // Refused by the guard (not by the test safety net, which would be EBLOCKEDBYTEST).
      expect(err.cause).toBeInstanceOf(LinkNotAllowedError);
    }
    expect(site.requests.length).toBe(before + 1); // only /to-metadata itself
  });

  test('ALLOW_LOOPBACK reaches loopback fixtures on any port, and nothing private', async () => {
    expect((await loopbackOnly(site.url('/page'), opts)).status).toBe(200);
    expect((await loopbackOnly(`http://localhost:${site.port}/page`, opts)).status).toBe(200);
    expect(await loopbackOnly('http://10.0.0.5/', opts).catch((e) => e)).toBeInstanceOf(LinkNotAllowedError);
    const named = await loopbackOnly('http://private.test/', opts).catch((e) => e);
    expect(named.cause).toBeInstanceOf(LinkNotAllowedError);
    // A name resolving to loopback is allowed, but only on 80, 443 and the configured ports.
    expect(await loopbackOnly(`http://fixture.test:${site.port}/page`, opts).catch((e) => e)).toBeInstanceOf(LinkNotAllowedError);
  });

  test('ALLOW_PRIVATE_NETWORKS still opens private names and loopback (the test fixtures)', async () => {
    expect((await privateNets(`http://fixture.test:${site.port}/page`, opts)).status).toBe(200);
    // private.test resolves to 10.0.0.5: the guard lets it through, the test safety net refuses the socket.
    const err = await privateNets('http://private.test/', opts).catch((e) => e);
    expect(err.cause).not.toBeInstanceOf(LinkNotAllowedError);
    expect(String(err.cause?.code ?? err.cause?.cause?.code)).toBe('EBLOCKEDBYTEST');
  });
});

describe('credentials do not follow a redirect to another origin', () => {
  let other: FixtureServer;
  const echo = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        authorization: req.headers.authorization ?? null,
        cookie: req.headers.cookie ?? null,
        proxy: req.headers['proxy-authorization'] ?? null,
        other: req.headers['x-other'] ?? null,
      }),
    );
  };
  const secrets = { authorization: 'Bearer ghp_secret', Cookie: 'session=s3cr3t', 'proxy-authorization': 'Basic cHJveHk=', 'x-other': 'kept' };
  beforeAll(async () => {
    other = await startFixtureServer({ '/echo': echo });
    other.route('/back', { status: 302, headers: { location: site.url('/echo') } });
    site.route('/echo', echo);
    site.route('/same-origin', { status: 302, headers: { location: '/echo' } });
    site.route('/cross-origin', { status: 307, headers: { location: other.url('/echo') } });
    site.route('/there-and-back', { status: 302, headers: { location: other.url('/back') } });
  });
  afterAll(() => other.close());
  const seen = async (link: string, options = {}) => JSON.parse((await fetchOpen(link, { ...opts, headers: secrets, ...options })).body.toString());

  test('a same-origin redirect keeps Authorization and Cookie', async () => {
    expect(await seen(site.url('/same-origin'))).toEqual({
      authorization: 'Bearer ghp_secret',
      cookie: 'session=s3cr3t',
      proxy: 'Basic cHJveHk=',
      other: 'kept',
    });
  });

  test('a redirect to another port (another origin) arrives without them; other headers still go', async () => {
    expect(await seen(site.url('/cross-origin'))).toEqual({ authorization: null, cookie: null, proxy: null, other: 'kept' });
  });

  test('once the chain has left the origin, they stay behind, even back on the first origin', async () => {
    expect(await seen(site.url('/there-and-back'))).toEqual({ authorization: null, cookie: null, proxy: null, other: 'kept' });
  });

  test('cookieHosts lets a (consent) Cookie follow to the hosts named, never Authorization', async () => {
    const named = createFetcher({ ...open, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    site.route('/to-www', { status: 302, headers: { location: `http://www.profile.test:${other.port}/echo` } });
    site.route('/to-elsewhere', { status: 302, headers: { location: `http://elsewhere.test:${other.port}/echo` } });
    const get = async (link: string) => JSON.parse((await named(link, { ...opts, headers: secrets, cookieHosts: ['profile.test'] })).body.toString());
    expect(await get(`http://short.profile.test:${site.port}/to-www`)).toEqual({ authorization: null, cookie: 'session=s3cr3t', proxy: null, other: 'kept' });
    expect(await get(`http://short.profile.test:${site.port}/to-elsewhere`)).toEqual({ authorization: null, cookie: null, proxy: null, other: 'kept' });
  });
});
