/**
 * The direct route's connections: a bounded keep-alive pool whose sockets are reused only for the
 * address the SSRF guard checked for the request at hand, and a TLS session cache. Through the
 * proxy, a request takes its own tunnel instead, never pooled (lib/fetch/proxy-tunnel.ts), so a
 * tunnelled socket is never handed to a direct request, nor the reverse.
 *
 * How a pooled socket keeps the guard's guarantee:
 *  - every request resolves its host again through the guarded lookup (with the host rules' denied
 *    addresses, lib/fetch/denied-addresses.ts) before any socket is chosen: a name whose answer has
 *    turned private, or whose address a rule now denies, is refused whether a socket is pooled or not;
 *  - the request is pinned to one of those checked addresses (`pinnedLookup`), and the pool's key
 *    (`getName`) carries that address: a pooled socket is reused only by a request pinned to the
 *    address it is connected to;
 *  - a socket whose connection ended on another address than its pin (happy eyeballs fell back to a
 *    later address of the answer, all of them checked) is closed after its request, not pooled.
 *
 * Bounds (`POOL_LIMITS`): idle sockets per origin and address, idle sockets in all, and idle time
 * (shorter when the server's Keep-Alive header says so). Requests at once per host are bounded by
 * the host gate (lib/fetch/host-gate.ts), not here.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { LookupFunction } from 'node:net';
import tls from 'node:tls';

/** Sessions kept per fetcher (one per host, port, server name and address; the oldest goes first). */
const MAX_CACHED_TLS_SESSIONS = 256;

/**
 * The pool's bounds:
 *  - `idlePerOrigin`: idle sockets kept per host, port and address, the host gate's 6 at once;
 *  - `idleTotal`: idle sockets kept in all, per agent (http, https): a busy server previews many
 *    hosts, a Lambda instance few, and each idle socket holds a file descriptor and some memory;
 *  - `idleMs`: an idle socket is closed after 4 s, below the 5 s keep-alive timeout of Node's and
 *    many other servers, so the pool rarely picks a socket the server is closing. A shorter
 *    `Keep-Alive: timeout=` from the server wins (Node's agent reads it).
 */
export const POOL_LIMITS = { idlePerOrigin: 6, idleTotal: 64, idleMs: 4_000 };

const PIN = Symbol('linklens.pinnedAddress');

export interface CheckedAddress {
  address: string;
  family: number;
}

type PinnedLookup = LookupFunction & { [PIN]: string };

/**
 * A socket lookup that answers the addresses the guard checked for this request and nothing else:
 * the pinned one first (the pool's key), the others after it for happy eyeballs.
 */
export function pinnedLookup(addresses: readonly CheckedAddress[]): PinnedLookup {
  const lookup = ((hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    const opts = (typeof options === 'number' ? { family: options } : (options ?? {})) as { family?: number | string; all?: boolean };
    const family = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : opts.family;
    const list = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : [...addresses];
    if (!list.length) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
      return;
    }
    if (opts.all) callback(null, list);
    else callback(null, list[0].address, list[0].family);
  }) as PinnedLookup;
  lookup[PIN] = addresses[0]?.address ?? '';
  return lookup;
}

/** The address a request was pinned to (its lookup's), or '' when it has none. */
function pinOf(options: { lookup?: unknown } | undefined): string {
  return (options?.lookup as Partial<PinnedLookup> | undefined)?.[PIN] ?? '';
}

type PinnedSocket = net.Socket & { [PIN]?: string };

const plainAddress = (ip: string | undefined) => (ip ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/** What the two pooled agents add to Node's: the pin in the key, the pin checked before a socket is pooled, the total idle bound. */
interface PoolHooks {
  getName(options?: object): string;
  keepSocketAlive(socket: net.Socket): boolean;
  createConnection(options: object, callback: unknown): net.Socket | undefined;
  freeSockets: NodeJS.ReadOnlyDict<net.Socket[]>;
}

function pooled<A extends http.Agent>(agent: A): A {
  const base = agent as unknown as PoolHooks;
  const getName = base.getName.bind(agent);
  const keepSocketAlive = base.keepSocketAlive.bind(agent);
  const createConnection = base.createConnection.bind(agent);
  base.getName = (options) => `${getName(options)}|${pinOf(options)}`;
  base.createConnection = (options, callback) => {
    const socket = createConnection(options, callback) as PinnedSocket | undefined;
    if (socket) socket[PIN] = pinOf(options);
    return socket;
  };
  base.keepSocketAlive = (socket: PinnedSocket) => {
    const pin = socket[PIN];
    if (!pin || plainAddress(socket.remoteAddress) !== plainAddress(pin)) return false;
    let idle = 0;
    for (const list of Object.values(base.freeSockets)) idle += list?.length ?? 0;
    if (idle >= POOL_LIMITS.idleTotal) return false;
    return keepSocketAlive(socket);
  };
  return agent;
}

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/** The direct route's agents: `pooled` for every request, `fresh` (no pool) for the one retry of a request whose pooled socket was dead. */
export interface ConnectionPool {
  pooled: Agents;
  fresh: Agents;
  /** Per origin, the address its last request was pinned to (lib/fetch/hop-request.ts keeps it, bounded). */
  lastPins: Map<string, string>;
  /** The TLS context every direct and tunnelled connection shares (the default CA store, NODE_EXTRA_CA_CERTS included). */
  secureContext: tls.SecureContext;
}

/**
 * A fetcher's connections. One secure context, built once instead of once per connection; the
 * https agent's session cache, keyed like the pool, so a new connection to a host seen before
 * resumes its TLS session (a resumed session skips the certificate and host name checks: they
 * passed when the session was made, and only a server holding its secret can resume it).
 */
export function connectionPool(): ConnectionPool {
  const secureContext = tls.createSecureContext();
  const keep = { keepAlive: true, maxFreeSockets: POOL_LIMITS.idlePerOrigin, timeout: POOL_LIMITS.idleMs, scheduling: 'lifo' as const };
  return {
    pooled: {
      http: pooled(new http.Agent(keep)),
      https: pooled(new https.Agent({ ...keep, maxCachedSessions: MAX_CACHED_TLS_SESSIONS, secureContext })),
    },
    fresh: {
      http: new http.Agent({ keepAlive: false }),
      https: new https.Agent({ keepAlive: false, maxCachedSessions: 0, secureContext }),
    },
    lastPins: new Map(),
    secureContext,
  };
}
