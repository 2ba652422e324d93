import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { LinkNotAllowedError } from '../../lib/errors';
import { createFetcher, FetchFailure, type FetcherDeps } from '../../lib/fetch/safe-fetch';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server';

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
      if ((req.headers.cookie ?? '').includes('seen=1')) { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>after cookie</title>'); return; }
      res.writeHead(302, { location: '/cookie-redirect', 'set-cookie': 'seen=1; Path=/' });
      res.end();
    },
    '/slow-headers': () => { /* never answers */ },
    '/slow-body': (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.write('<html>'); /* never ends */ },
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
      s.listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
    });
    const err = await fetchOpen(`http://127.0.0.1:${port}/`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('CONNECTION_REFUSED');
    expect(err.status).toBe(0);
  });

  test('a DNS failure', async () => {
    const f = createFetcher({ ...open, resolver: async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); } });
    const err = await f('http://no-such-host.test/', opts).catch((e) => e);
    expect(err.code).toBe('DNS_FAILURE');
    expect(err.status).toBe(0);
  });

  test('headers that never come: TIMEOUT within the cap', async () => {
    const t0 = Date.now();
    const err = await fetchOpen(site.url('/slow-headers'), { ...opts, timeoutMs: 300 }).catch((e) => e);
    expect(err.code).toBe('TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(2500);
  });

  test('a body that never ends keeps what arrived, marked truncated', async () => {
    const res = await fetchOpen(site.url('/slow-body'), { ...opts, timeoutMs: 300 });
    expect(res.status).toBe(200);
    expect(res.truncated).toBe(true);
    expect(res.body.toString()).toBe('<html>');
  });

  test('a TLS failure (self-signed certificate)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const server = https.createServer({ key: readFileSync(`${dir}/k.pem`), cert: readFileSync(`${dir}/c.pem`) }, (_q, r) => r.end('secret'));
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

  test('fail refuses a declared or streamed body past the cap', async () => {
    await expect(fetchOpen(site.url('/big-declared'), { ...opts, maxBytes: 1000, onTooLarge: 'fail' })).rejects.toMatchObject({ code: 'TOO_LARGE' });
    await expect(fetchOpen(site.url('/big'), { ...opts, maxBytes: 1000, onTooLarge: 'fail' })).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });

  test('the cap counts decompressed bytes (a gzip bomb stops at the cap)', async () => {
    const res = await fetchOpen(site.url('/gzip'), { ...opts, maxBytes: 64 * 1024 });
    expect(res.body.length).toBe(64 * 1024);
    expect(res.truncated).toBe(true);
    expect(res.body[0]).toBe(0x61);
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

  test.each(['/to-metadata', '/to-private-name', '/to-localhost', '/to-v6-loopback'])('a public-looking redirect to a private address is refused (%s)', async (route) => {
    const before = site.requests.length;
    const err = await closed()(`http://public.test:${site.port}${route}`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err.message).toMatch(/redirects/);
    expect(site.requests.length).toBe(before + 1); // only the first hop reached the fixture
  });

  test('a name resolving to a loopback address is refused at connect time', async () => {
    const err = await closed()(`http://loopback.test:${site.port}/page`, opts).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err.details).toMatchObject({ host: 'loopback.test', address: '127.0.0.2' });
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
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(calls).toBe(2);
  });
});
