/**
 * A loopback fixture server for tests: routes answer with recorded/generated responses. It
 * listens on 127.0.0.1 only; tests open the SSRF guard for loopback explicitly.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface FixtureResponse {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface FixtureServer {
  url(path?: string): string;
  readonly origin: string;
  readonly port: number;
  route(path: string, handler: RouteHandler | FixtureResponse): void;
  /**
   * Serves the same routes on another loopback address, on the same port: names mapped to it are
   * the same site at an address of its own (a host whose address a rule denies, beside others that
   * must stay reachable).
   */
  alsoOn(host: string): Promise<void>;
  /** Requests seen, in order (method and URL path). */
  readonly requests: { method: string; url: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** `host`: the loopback address it listens on (another than 127.0.0.1 makes a second "site"). */
export async function startFixtureServer(routes: Record<string, RouteHandler | FixtureResponse> = {}, host = '127.0.0.1'): Promise<FixtureServer> {
  const table = new Map<string, RouteHandler | FixtureResponse>(Object.entries(routes));
  const requests: FixtureServer['requests'] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
    const path = (req.url ?? '/').split('?')[0];
    const entry = table.get(req.url ?? '/') ?? table.get(path);
    if (!entry) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><head><title>Not found</title></head></html>');
      return;
    }
    if (typeof entry === 'function') {
      await entry(req, res);
      return;
    }
    res.writeHead(entry.status ?? 200, { 'content-type': 'text/html; charset=utf-8', ...entry.headers });
    res.end(entry.body ?? '');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host}:${port}`;
  const others: http.Server[] = [];
  const alsoOn = async (other: string) => {
    const twin = http.createServer((req, res) => server.emit('request', req, res));
    twin.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      twin.once('error', reject);
      twin.listen(port, other, resolve);
    });
    others.push(twin);
  };
  return {
    origin,
    port,
    url: (path = '/') => `${origin}${path}`,
    route: (path, handler) => {
      table.set(path, handler);
    },
    requests,
    alsoOn,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([server, ...others].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** An HTML page with the given head and body. */
export function html(head: string, body = '', lang?: string): string {
  return `<!doctype html><html${lang ? ` lang="${lang}"` : ''}><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
}

/** A loopback server standing for a private address: counts every TCP connection it accepts (a refused fetch never connects) and the paths asked. */
export interface CountingServer {
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

export async function startCountingServer(host: string, headers: http.OutgoingHttpHeaders = { 'content-type': 'text/plain' }): Promise<CountingServer> {
  const sockets = new Set<Socket>();
  const state = { port: 0, connections: 0, requests: [] as string[] };
  const server = http.createServer((req, res) => {
    state.requests.push(req.url ?? '/');
    res.writeHead(200, headers);
    res.end('secret');
  });
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}
