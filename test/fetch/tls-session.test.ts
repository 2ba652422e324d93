/**
 * The fetcher's TLS sessions: a later connection to the same host resumes the session (the server
 * here closes each connection after its answer, so the pool cannot keep it: test/fetch/connection-pool.test.ts
 * covers reuse). A session
 * is never offered to another host nor by another fetcher, and one whose certificate failed the
 * checks is never kept. The server tells: `isSessionReused()` on each handshake it completes.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { createFetcher, type FetcherDeps } from '../../lib/fetch/safe-fetch';
import { makeTestCertificates } from '../helpers/tls-certs';

const certs = makeTestCertificates(['a.test', 'b.test']);

// The fetcher trusts the default CA store; here, the test CA instead. Every secure context made in
// this file (the fetcher's, and any a connection would make for itself) goes through this spy.
const realCreateSecureContext = tls.createSecureContext;
const secureContexts = jest.spyOn(tls, 'createSecureContext').mockImplementation((options) => realCreateSecureContext({ ...options, ca: certs.ca }));
afterAll(() => secureContexts.mockRestore());

// Every name is this loopback server.
const deps: FetcherDeps = {
  allowPrivateNetworks: true,
  allowedPorts: [],
  userAgent: 'linklens-test',
  maxRedirects: 10,
  resolver: async () => [{ address: '127.0.0.1', family: 4 }],
};
const opts = { maxBytes: 1024, timeoutMs: 3000 };

interface Handshake {
  servername: string | false;
  reused: boolean;
}

interface TlsServer {
  port: number;
  /** TCP connections accepted. */
  connections: number;
  /** Each handshake the server completed, in order. */
  handshakes: Handshake[];
  close(): Promise<void>;
}

const servers: TlsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A loopback HTTPS server for a.test and b.test (session tickets on, as by default), answering `ok` and closing the connection. */
async function startTlsServer(maxVersion: tls.SecureVersion = 'TLSv1.3'): Promise<TlsServer> {
  const server = https.createServer({ key: certs.key, cert: certs.cert, maxVersion }, (_req, res) => {
    res.setHeader('connection', 'close');
    res.end('ok');
  });
  const handle: TlsServer = {
    port: 0,
    connections: 0,
    handshakes: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('connection', () => handle.connections++);
  // A server-side TLSSocket carries the client's SNI as `servername` (not in @types/node).
  server.on('secureConnection', (socket: tls.TLSSocket & { servername: string | false }) =>
    handle.handshakes.push({ servername: socket.servername, reused: socket.isSessionReused() }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  handle.port = (server.address() as AddressInfo).port;
  servers.push(handle);
  return handle;
}

async function body(fetch: ReturnType<typeof createFetcher>, server: TlsServer, host: string): Promise<string> {
  return (await fetch(`https://${host}:${server.port}/`, opts)).body.toString();
}

test.each(['TLSv1.3', 'TLSv1.2'] as const)(
  '%s: a second request to the host resumes its TLS session, on a new connection, with the one secure context',
  async (version) => {
    const server = await startTlsServer(version);
    secureContexts.mockClear();
    const fetch = createFetcher(deps);
    expect(await body(fetch, server, 'a.test')).toBe('ok');
    expect(await body(fetch, server, 'a.test')).toBe('ok');
    // The server closed the first connection: two TCP connections, the second resuming the session.
    expect(server.connections).toBe(2);
    expect(server.handshakes.map((h) => h.reused)).toEqual([false, true]);
    // Made once, by createFetcher: no connection built its own.
    expect(secureContexts).toHaveBeenCalledTimes(1);
  },
);

test('a session is offered only to the host it was made with', async () => {
  const server = await startTlsServer();
  const fetch = createFetcher(deps);
  await body(fetch, server, 'a.test');
  await body(fetch, server, 'b.test');
  await body(fetch, server, 'a.test');
  expect(server.handshakes).toEqual([
    { servername: 'a.test', reused: false },
    { servername: 'b.test', reused: false },
    { servername: 'a.test', reused: true },
  ]);

  // Not the server refusing it: offered a.test's session under the name b.test, this server resumes it.
  server.handshakes.length = 0;
  const connect = (servername: string, session?: Buffer) =>
    new Promise<Buffer | undefined>((resolve, reject) => {
      let latest: Buffer | undefined;
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, servername, session, ALPNProtocols: ['http/1.1'] });
      socket.on('session', (s: Buffer) => {
        latest = s;
      });
      socket.once('secureConnect', () => socket.end('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
      socket.resume();
      socket.once('close', () => resolve(latest));
      socket.once('error', reject);
    });
  await connect('b.test', await connect('a.test'));
  expect(server.handshakes).toEqual([
    { servername: 'a.test', reused: false },
    { servername: 'b.test', reused: true },
  ]);
});

test('another fetcher does not resume the first one’s session', async () => {
  const server = await startTlsServer();
  const first = createFetcher(deps);
  const second = createFetcher(deps);
  await body(first, server, 'a.test');
  await body(second, server, 'a.test');
  await body(first, server, 'a.test');
  expect(server.connections).toBe(3);
  expect(server.handshakes.map((h) => h.reused)).toEqual([false, false, true]);
});

test('a session whose certificate failed the host name check is never resumed', async () => {
  // TLS 1.2: the client holds the server's session ticket before it checks the host name, and a
  // resumed session skips that check (offered to this server, it would resume and pass). The CA is
  // trusted; the name c.test is not on the certificate. Node keeps a session only once verified.
  const server = await startTlsServer('TLSv1.2');
  const fetch = createFetcher(deps);
  for (let i = 0; i < 2; i++) {
    const err = await body(fetch, server, 'c.test').catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err.code).toBe('TLS_ERROR');
  }
  expect(server.handshakes).toEqual([
    { servername: 'c.test', reused: false },
    { servername: 'c.test', reused: false },
  ]);
});
