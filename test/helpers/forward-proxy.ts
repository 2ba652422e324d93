/**
 * A real HTTP forward proxy on loopback, for the proxy route's tests: CONNECT tunnels and
 * absolute-form requests, optional Basic authentication, and a log of every request it was asked
 * (the proof that a refused link never reached it). Its own outbound connections leave from
 * `PROXY_SOURCE` (127.0.0.2), so a fixture site can tell a proxied request from a direct one by
 * the connection's source address (`viaProxy`).
 *
 * `behaviour` makes it fail as real proxies do: refuse the credentials (407), answer 502, or never
 * answer the CONNECT.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';

export const PROXY_SOURCE = '127.0.0.2';

/** True when the request reached the site through the proxy (its connection comes from PROXY_SOURCE). */
export function viaProxy(req: http.IncomingMessage): boolean {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '') === PROXY_SOURCE;
}

export interface ProxyOptions {
  /** `user:password` the proxy asks for (Proxy-Authorization: Basic); none: no authentication. */
  credentials?: string;
  /** TLS to the proxy itself (an https:// proxy URL). */
  tls?: { cert: Buffer; key: Buffer };
  behaviour?: 'ok' | 'status-502' | 'hang';
}

export interface ForwardProxy {
  port: number;
  /** The proxy URL, with `auth` (`user:password`) when given. */
  url(auth?: string): string;
  /** What it was asked: `CONNECT 127.0.0.1:4431` or `GET http://…`, in order. */
  readonly log: string[];
  /** The Proxy-Authorization headers it received (to check what the client sends). */
  readonly authorizations: string[];
  behaviour: NonNullable<ProxyOptions['behaviour']>;
  close(): Promise<void>;
}

export async function startForwardProxy(options: ProxyOptions = {}): Promise<ForwardProxy> {
  const log: string[] = [];
  const authorizations: string[] = [];
  const sockets = new Set<net.Socket>();
  const expected = options.credentials ? `Basic ${Buffer.from(options.credentials).toString('base64')}` : undefined;
  const state = { behaviour: options.behaviour ?? 'ok' } as { behaviour: NonNullable<ProxyOptions['behaviour']> };
  const authorized = (req: http.IncomingMessage) => {
    const given = req.headers['proxy-authorization'];
    if (typeof given === 'string') authorizations.push(given);
    return !expected || given === expected;
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    log.push(`${req.method} ${req.url}`);
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
      res.end();
      return;
    }
    if (state.behaviour === 'status-502') {
      res.writeHead(502);
      res.end();
      return;
    }
    if (state.behaviour === 'hang') return;
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(
      { host: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, method: req.method, headers, localAddress: PROXY_SOURCE },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  };
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    log.push(`CONNECT ${req.url}`);
    sockets.add(client);
    client.on('error', () => {});
    if (!authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    if (state.behaviour === 'status-502') {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    if (state.behaviour === 'hang') return;
    const m = /^\[?([^\]]+)\]?:(\d+)$/.exec(req.url ?? '');
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const upstream = net.connect({ host: m[1], port: Number(m[2]), localAddress: PROXY_SOURCE }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const scheme = options.tls ? 'https' : 'http';
  return {
    port,
    url: (auth) => `${scheme}://${auth ? `${auth}@` : ''}127.0.0.1:${port}`,
    log,
    authorizations,
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(b) {
      state.behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
