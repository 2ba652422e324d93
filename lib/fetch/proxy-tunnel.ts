/**
 * A tunnel through the operator's HTTP forward proxy (LINKPREVIEW_PROXY_URL) to one address that
 * the SSRF guard has already checked: `CONNECT <address>:<port>`, never a host name, so the proxy
 * has nothing to resolve and cannot reach anything the guard did not allow. The TLS session to the
 * target (SNI, certificate check) and the Host header carry the host name on top of the tunnel.
 *
 * The proxy's credentials are sent in Proxy-Authorization on the CONNECT request only. Nothing
 * here puts them in an error message: errors name the proxy by `label` (scheme, host and port).
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { ProxyEndpoint } from './proxy-url.js';

/** Why the proxy gave no tunnel: unreachable, too slow, refused the credentials (407) or the target (403, 5xx). */
export class ProxyError extends Error {
  readonly code = 'ELINKPROXY';
  constructor(
    message: string,
    /** The proxy's status for the CONNECT, when it answered one. */
    readonly proxyStatus?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProxyError';
  }
}

export interface TunnelOptions {
  /** Time for reaching the proxy and its answer to CONNECT. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The most header bytes read of the proxy's answer to CONNECT. */
const MAX_CONNECT_RESPONSE = 16 * 1024;

/** `host:port` as a CONNECT authority (an IPv6 address in brackets). */
function authority(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * A socket tunnelled to `address:port` through the proxy (plain: the caller layers TLS on it for
 * an https target). Fails with a ProxyError; the socket to the proxy is closed then.
 */
export function openTunnel(proxy: ProxyEndpoint, address: string, port: number, options: TunnelOptions): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const target = authority(address, port);
    const socket: net.Socket =
      proxy.protocol === 'https:'
        ? tls.connect({ host: proxy.host, port: proxy.port, servername: net.isIP(proxy.host) ? undefined : proxy.host, ALPNProtocols: ['http/1.1'] })
        : net.connect({ host: proxy.host, port: proxy.port });
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeListener('readable', onReadable);
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
      if (err) {
        socket.destroy();
        reject(err);
      } else resolve(socket);
    };
    const timer = setTimeout(() => finish(new ProxyError(`The proxy ${proxy.label} did not answer in time.`)), Math.max(1, options.timeoutMs));
    const onAbort = () => finish(Object.assign(new Error('The fetch was cancelled.'), { name: 'AbortError', code: 'ABORT_ERR' }));
    const onError = (err: Error) =>
      finish(new ProxyError(`The proxy ${proxy.label} could not be reached (${(err as { code?: string }).code ?? err.message}).`, undefined, { cause: err }));
    const onClose = () => finish(new ProxyError(`The proxy ${proxy.label} closed the connection before answering.`));
    let head = Buffer.alloc(0);
    // Read with 'readable' (not 'data'), so that once the listener is gone the stream is neither
    // flowing nor paused: the HTTP client or TLS layered on it next starts it.
    const onReadable = () => {
      let chunk: Buffer | null;
      // biome-ignore lint/suspicious/noAssignInExpressions: the usual read loop
      while ((chunk = socket.read()) !== null) head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_CONNECT_RESPONSE) finish(new ProxyError(`The proxy ${proxy.label} sent an oversized answer to CONNECT.`));
        return;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1] ?? 0);
      if (status < 200 || status > 299) {
        const why = status === 407 ? 'refused the credentials' : status ? `answered ${status}` : 'answered something other than HTTP';
        finish(new ProxyError(`The proxy ${proxy.label} ${why} to CONNECT.`, status || undefined));
        return;
      }
      // Bytes after the proxy's answer belong to the target: hand them back to the stream.
      const rest = head.subarray(end + 4);
      finish();
      if (rest.length) socket.unshift(rest);
    };
    if (options.signal?.aborted) {
      onAbort();
      return;
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.on('readable', onReadable);
    socket.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      const auth = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    });
  });
}

type CreateConnection = (options: Record<string, unknown>, done: (err: Error | null, socket?: net.Socket) => void) => undefined;

/**
 * One request's agents for the proxy route: each connection is a tunnel to the address that
 * `resolve` gives for the request's host (the guarded lookup: it refuses a forbidden address
 * before the proxy is asked anything), with TLS to the host name on top for an https target.
 * Keep-alive is off: a tunnel serves one request and is never pooled, so it is never handed to a direct request (lib/fetch/connection-agents.ts).
 */
export function tunnelAgents(
  proxy: ProxyEndpoint,
  resolve: (host: string) => Promise<string>,
  options: TunnelOptions & { secureContext?: tls.SecureContext },
): { http: http.Agent; https: https.Agent } {
  const tunnel = (secure: boolean): CreateConnection =>
    function createConnection(opts, done) {
      const host = String(opts.host ?? opts.hostname ?? 'localhost').replace(/^\[|\]$/g, '');
      const port = Number(opts.port);
      (net.isIP(host) ? Promise.resolve(host) : resolve(host))
        .then((address) => openTunnel(proxy, address, port, options))
        .then((socket) => {
          if (!secure) return done(null, socket);
          const servername = typeof opts.servername === 'string' && opts.servername ? opts.servername : net.isIP(host) ? undefined : host;
          done(null, tls.connect({ ...(opts as tls.ConnectionOptions), host, socket, servername }));
        })
        .catch((err: Error) => done(err));
      return undefined;
    };
  const plain = new http.Agent({ keepAlive: false });
  const secure = new https.Agent({ keepAlive: false, secureContext: options.secureContext });
  Object.assign(plain, { createConnection: tunnel(false) });
  Object.assign(secure, { createConnection: tunnel(true) });
  return { http: plain, https: secure };
}
