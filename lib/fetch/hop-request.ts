/**
 * One hop's HTTP request (lib/fetch/safe-fetch.ts follows the redirects, and chooses each hop's
 * route): the request on its agents, its answer read under the caps, or the FetchFailure it is.
 *  - direct, the name is resolved by `guardedLookup` for every request, before a socket is chosen,
 *    and the request is pinned to the checked addresses: a pooled socket is reused only when it is
 *    connected to the pinned one (lib/fetch/connection-agents.ts). A pooled socket that turns out
 *    dead (a Lambda instance thawed after its server closed it) is retried once on a new
 *    connection, for GET and HEAD only;
 *  - through the proxy, a tunnel to the address the guard checked, never the name, and never
 *    pooled (lib/fetch/proxy-tunnel.ts);
 *  - the hop has the time left of the fetch's own timeout, and reads at most `maxBytes` after
 *    decompression (a gzip bomb stops too); a redirect's or a HEAD's body is not read;
 *  - a name that resolves to a forbidden address fails exactly like a name that does not resolve
 *    (DNS_FAILURE): the address and its class are logged, never returned (`brokenOff`).
 */
import type http from 'node:http';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import got, { type Headers } from 'got';
import { LinkNotAllowedError } from '../errors.js';
import type { Log } from '../log.js';
import type { guardedLookup } from './address-guard.js';
import { type Agents, type CheckedAddress, type ConnectionPool, pinnedLookup } from './connection-agents.js';
import { classifyError, DNS_FAILURE_MESSAGE, FetchFailure } from './fetch-failure.js';
import type { ProxyPolicy } from './proxy-route.js';
import { tunnelAgents } from './proxy-tunnel.js';
import type { ProxyEndpoint } from './proxy-url.js';
import type { FetchOptions, FetchResult, WireFacts } from './types.js';

/** The answers that redirect (their Location says where): their body is not read. */
export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The guard's connect-time refusal somewhere in the cause chain of a request error. */
function notAllowedFrom(err: unknown): LinkNotAllowedError | undefined {
  let e = err as { cause?: unknown } | undefined;
  for (let i = 0; i < 4 && e; i++) {
    if (e instanceof LinkNotAllowedError) return e;
    e = e.cause as typeof e;
  }
  return undefined;
}

function parseDeclaredSize(headers: Headers): number | undefined {
  const range = headers['content-range'];
  if (typeof range === 'string') {
    const total = /\/(\d+)\s*$/.exec(range);
    if (total) return Number(total[1]);
  }
  const len = headers['content-length'];
  if (typeof len === 'string' && /^\d+$/.test(len)) return Number(len);
  return undefined;
}

/** What every hop of a fetcher shares: the guarded lookup, the direct route's connections, the proxy route. */
export interface HopDeps {
  lookup: ReturnType<typeof guardedLookup>;
  /** The lookup of one URL's request, when host rules deny addresses (lib/fetch/denied-addresses.ts); else `lookup`. */
  lookupFor?: (url: URL) => ReturnType<typeof guardedLookup>;
  pool: ConnectionPool;
  proxy?: ProxyPolicy;
  log?: Pick<Log, 'warn'> & Partial<Pick<Log, 'info'>>;
}

export type HopAnswer = Omit<FetchResult, 'url' | 'finalUrl' | 'trail'>;

/** What a hop's request reads of its fetch's redirect chain (safe-fetch.ts's Chain). */
export interface HopChain {
  readonly current: URL;
  readonly options: FetchOptions;
  readonly trail: string[];
  readonly lastStatus: number;
}

export interface HopRequest {
  chain: HopChain;
  headers: Record<string, string>;
  timeoutMs: number;
  viaProxy: boolean;
  hop: number;
}

/** How one hop goes out: its agents, and the lookup its new connection uses. */
interface HopWay {
  agents: Agents;
  lookup: LookupFunction;
  /** Direct on the pool (a dead pooled socket may be retried once), or a tunnel / the retry's fresh connection. */
  pooled: boolean;
}

/** The proxy route's way: a tunnel through the proxy to the address the guard checked (any failure to get one is the proxy's). */
async function proxyWay(deps: HopDeps, req: HopRequest): Promise<HopWay> {
  const failure = (message: string, cause?: unknown) =>
    new FetchFailure('PROXY_FAILURE', message, { trail: req.chain.trail, status: req.chain.lastStatus, cause });
  let endpoint: ProxyEndpoint | undefined;
  try {
    endpoint = await deps.proxy?.endpoint();
  } catch (err) {
    throw failure('The proxy settings could not be read.', err);
  }
  if (!endpoint) throw failure('No proxy is configured for this route.');
  const lookup = deps.lookupFor?.(req.chain.current) ?? deps.lookup;
  const resolve = (host: string) =>
    new Promise<string>((ok, fail) => {
      lookup(host, {}, (err, address) => (err ? fail(err) : ok(address as string)));
    });
  try {
    const agents = tunnelAgents(endpoint, resolve, { timeoutMs: req.timeoutMs, signal: req.chain.options.signal, secureContext: deps.pool.secureContext });
    return { agents, lookup, pooled: false };
  } catch (err) {
    throw err instanceof FetchFailure ? err : failure('The proxy failed.', err);
  }
}

/** Hosts' last pinned address, so a rotating DNS answer keeps using the pooled socket while its address is still in the answer. */
const LAST_PINS_KEPT = 1024;

/**
 * The direct route's way: the host resolved now through the guarded lookup (a forbidden or denied
 * address refuses the hop here, pooled socket or not), and the request pinned to the checked
 * addresses, the one pinned last time first when it is still among them.
 */
async function directWay(deps: HopDeps, req: HopRequest): Promise<HopWay> {
  const url = req.chain.current;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses = literal ? [{ address: host, family: literal }] : await checkedAddresses(deps.lookupFor?.(url) ?? deps.lookup, host, req);
  const key = `${url.protocol}//${url.host}`;
  const last = deps.pool.lastPins.get(key);
  const first = addresses.findIndex((a) => a.address === last);
  const ordered = first > 0 ? [addresses[first], ...addresses.filter((_, i) => i !== first)] : addresses;
  deps.pool.lastPins.delete(key);
  deps.pool.lastPins.set(key, ordered[0].address);
  if (deps.pool.lastPins.size > LAST_PINS_KEPT) deps.pool.lastPins.delete(deps.pool.lastPins.keys().next().value as string);
  return { agents: deps.pool.pooled, lookup: pinnedLookup(ordered), pooled: true };
}

/** Every address of `host` the guarded lookup allows (it refuses the whole answer when one is forbidden), within the hop's time. */
function checkedAddresses(lookup: ReturnType<typeof guardedLookup>, host: string, req: HopRequest): Promise<CheckedAddress[]> {
  const { signal } = req.chain.options;
  return new Promise<CheckedAddress[]>((resolve, reject) => {
    const cancelled = () => Object.assign(new Error('The fetch was cancelled.'), { name: 'AbortError', cause: signal?.reason });
    if (signal?.aborted) return reject(cancelled());
    // Whichever comes first settles it, and takes the others' listeners and timer away.
    const settle = (fn: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => settle(() => reject(cancelled()));
    const timer = setTimeout(() => settle(() => reject(Object.assign(new Error(`DNS lookup of ${host} timed out`), { code: 'ETIMEDOUT' }))), req.timeoutMs);
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
    lookup(host, { all: true }, (err, addresses) => settle(() => (err ? reject(err) : resolve(addresses as unknown as CheckedAddress[]))));
  });
}

/** The hop's way: the proxy's tunnel, or the direct route's pool (its DNS refusals fail the hop as a request's would). */
async function hopWay(deps: HopDeps, req: HopRequest): Promise<HopWay> {
  if (req.viaProxy) return proxyWay(deps, req);
  try {
    return await directWay(deps, req);
  } catch (err) {
    // With nothing received, brokenOff always throws the hop's FetchFailure.
    brokenOff(deps, req, err, { status: 0, headers: {}, chunks: [], bytes: 0 });
    throw err;
  }
}

/** One hop's request: its answer (a redirect's or a HEAD's without a body), or a FetchFailure. */
export async function requestOnce(deps: HopDeps, req: HopRequest): Promise<HopAnswer> {
  const way = await hopWay(deps, req);
  const first = await attempt(deps, req, way);
  if (first !== DEAD_POOLED_SOCKET) return first;
  // The pooled socket was dead before any answer (the server had closed it): once more, on a new connection.
  deps.log?.info?.('a pooled connection was dead: retrying once on a new one', { url: req.chain.current.href, hop: req.hop });
  const again = await attempt(deps, req, { ...way, agents: deps.pool.fresh, pooled: false });
  if (again === DEAD_POOLED_SOCKET) throw new Error('unreachable: a fresh connection is never retried');
  return { ...again, wire: { opened: again.wire?.opened ?? 1, reused: 1, roundTrips: (again.wire?.roundTrips ?? 0) + 1 } };
}

const DEAD_POOLED_SOCKET = Symbol('dead pooled socket');

/** A request that may be sent twice: a GET or HEAD, whose second sending changes nothing at the origin. */
const idempotent = (req: HopRequest) => (req.chain.options.method ?? 'GET') !== 'POST';

/** One sending of the hop's request; DEAD_POOLED_SOCKET when a reused socket broke before any answer and the request may be sent again. */
async function attempt(deps: HopDeps, req: HopRequest, way: HopWay): Promise<HopAnswer | typeof DEAD_POOLED_SOCKET> {
  const stream = openStream(req, way);
  const received: Received = { status: 0, headers: {}, chunks: [], bytes: 0 };
  let reused = false;
  stream.once('request', (request: http.ClientRequest) => {
    reused = request.reusedSocket;
  });
  try {
    const answer = await receive(stream, req, received);
    return { ...answer, wire: wireOf(req, reused) };
  } catch (err) {
    stream.destroy();
    if (way.pooled && reused && received.status === 0 && idempotent(req) && classifyError(err).code === 'CONNECTION_RESET') return DEAD_POOLED_SOCKET;
    return brokenOff(deps, req, err, received);
  }
}

/** A hop's connection: reused (one round trip, the request's), or opened (TCP, then TLS for https, then the request). */
function wireOf(req: HopRequest, reused: boolean): WireFacts {
  if (reused) return { opened: 0, reused: 1, roundTrips: 1 };
  return { opened: 1, reused: 0, roundTrips: req.chain.current.protocol === 'https:' ? 3 : 2 };
}

type HopStream = ReturnType<typeof got.stream>;

function openStream(req: HopRequest, way: HopWay): HopStream {
  const { options } = req.chain;
  const { headers, timeoutMs } = req;
  return got.stream(req.chain.current, {
    method: options.method ?? 'GET',
    headers,
    ...(options.method === 'POST' && options.body !== undefined ? { body: options.body } : {}),
    followRedirect: false,
    throwHttpErrors: false,
    decompress: true,
    retry: { limit: 0 },
    dnsLookup: way.lookup as never,
    // Direct: the pool, keyed by the checked address (connectionPool). Through the proxy: this request's tunnel (tunnelAgents).
    agent: way.agents,
    timeout: { lookup: timeoutMs, connect: timeoutMs, secureConnect: timeoutMs, send: timeoutMs, response: timeoutMs, request: timeoutMs },
    signal: options.signal,
    http2: false,
  });
}

/** What a hop received before it ended or broke off. */
interface Received {
  status: number;
  headers: Headers;
  chunks: Buffer[];
  bytes: number;
}

/** Reads the response: its status and headers, then its body under the byte cap. */
async function receive(stream: HopStream, req: HopRequest, received: Received): Promise<HopAnswer> {
  const { options, trail } = req.chain;
  const maxBytes = options.maxBytes;
  const response = await new Promise<{ statusCode: number; headers: Headers }>((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
  const status = response.statusCode;
  received.status = status;
  received.headers = response.headers;
  const declared = parseDeclaredSize(response.headers);
  const isRedirect = REDIRECT_STATUSES.has(status) && typeof response.headers.location === 'string';
  if (isRedirect || options.method === 'HEAD') {
    releaseWhenRead(stream, isRedirect ? declared : 0);
    return { status, headers: response.headers, body: Buffer.alloc(0), truncated: false, declaredSize: declared };
  }
  if (declared !== undefined && declared > maxBytes && options.onTooLarge === 'fail' && !options.rangePrefixBytes) {
    stream.destroy();
    throw new FetchFailure('TOO_LARGE', `The resource is larger than ${maxBytes} bytes.`, { trail, status });
  }
  let truncated = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (received.bytes + chunk.length > maxBytes) {
      if (options.onTooLarge === 'fail') {
        stream.destroy();
        throw new FetchFailure('TOO_LARGE', `The resource is larger than ${maxBytes} bytes.`, { trail, status });
      }
      received.chunks.push(chunk.subarray(0, maxBytes - received.bytes));
      received.bytes = maxBytes;
      truncated = true;
      stream.destroy();
      break;
    }
    received.chunks.push(chunk);
    received.bytes += chunk.length;
  }
  // got takes its abort listener off the caller's signal when its stream is destroyed, not at the body's end.
  stream.destroy();
  return { status, headers: response.headers, body: Buffer.concat(received.chunks, received.bytes), truncated, declaredSize: declared };
}

/** The most bytes of a redirect's body read only to give its connection back to the pool. */
const REDIRECT_BODY_DRAINED = 16 * 1024;

/**
 * A redirect's body (small, declared) is read and dropped in the background, so its connection
 * goes back to the pool for the next hop or fetch; a larger or undeclared one, or one that is not
 * done within the drain's time, closes the connection. Nothing waits for it.
 */
function releaseWhenRead(stream: HopStream, declared: number | undefined): void {
  if (declared === undefined || declared > REDIRECT_BODY_DRAINED) {
    stream.destroy();
    return;
  }
  const timer = setTimeout(() => stream.destroy(), 2_000);
  timer.unref();
  stream.on('data', () => undefined);
  stream.once('end', () => {
    clearTimeout(timer);
    stream.destroy();
  });
  stream.once('error', () => clearTimeout(timer));
}

/** A hop that failed: what it received when the body broke off after the headers, else the FetchFailure it is. */
function brokenOff(deps: HopDeps, req: HopRequest, err: unknown, received: Received): HopAnswer {
  const { chain } = req;
  const { status } = received;
  if (err instanceof FetchFailure) throw err;
  const denied = notAllowedFrom(err);
  if (denied?.hostRule) {
    // The operator's own rule: no internal name is learnt from it, so the caller is told which rule refused.
    deps.log?.warn('fetch refused: a host rule denies the address', { url: chain.current.href, hop: req.hop, address: denied.address, rule: denied.hostRule });
    throw new FetchFailure('LINK_NOT_ALLOWED', denied.message, { trail: chain.trail, status: status || chain.lastStatus, cause: denied });
  }
  if (denied) {
    // The refusal is logged here, with the host, address and class; the caller gets exactly what
    // a name that does not resolve gives (code, message, status, trail): whether an internal
    // name exists, and where it points, is not the caller's to learn.
    deps.log?.warn('fetch refused: the host resolves to a forbidden address', {
      url: chain.current.href,
      hop: req.hop,
      host: denied.hostname,
      address: denied.address,
      reason: denied.reason,
    });
    throw new FetchFailure('DNS_FAILURE', DNS_FAILURE_MESSAGE, { trail: chain.trail, status: status || chain.lastStatus, cause: denied });
  }
  const { code, message } = classifyError(err);
  // A body that broke off after the headers still has a status: keep it.
  if (status && received.chunks.length && (code === 'CONNECTION_RESET' || code === 'TIMEOUT')) {
    const { headers } = received;
    return { status, headers, body: Buffer.concat(received.chunks, received.bytes), truncated: true, declaredSize: parseDeclaredSize(headers) };
  }
  throw new FetchFailure(code, message, { trail: chain.trail, status: status || chain.lastStatus, cause: err });
}
