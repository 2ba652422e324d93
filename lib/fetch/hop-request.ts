/**
 * One hop's HTTP request (lib/fetch/safe-fetch.ts follows the redirects, and chooses each hop's
 * route): the request on its agents, its answer read under the caps, or the FetchFailure it is.
 *  - the name is resolved by `guardedLookup` (got's dnsLookup) on a fresh connection: direct, the
 *    fetcher's agents (lib/fetch/connection-agents.ts); through the proxy, a tunnel to the address
 *    the guard checked, never the name (lib/fetch/proxy-tunnel.ts);
 *  - the hop has the time left of the fetch's own timeout, and reads at most `maxBytes` after
 *    decompression (a gzip bomb stops too); a redirect's or a HEAD's body is not read;
 *  - a name that resolves to a forbidden address fails exactly like a name that does not resolve
 *    (DNS_FAILURE): the address and its class are logged, never returned (`brokenOff`).
 */
import type https from 'node:https';
import type tls from 'node:tls';
import got, { type Headers } from 'got';
import { LinkNotAllowedError } from '../errors.js';
import type { Log } from '../log.js';
import type { guardedLookup } from './address-guard.js';
import type { connectionAgents } from './connection-agents.js';
import { classifyError, DNS_FAILURE_MESSAGE, FetchFailure } from './fetch-failure.js';
import type { ProxyPolicy } from './proxy-route.js';
import { tunnelAgents } from './proxy-tunnel.js';
import type { ProxyEndpoint } from './proxy-url.js';
import type { FetchOptions, FetchResult } from './types.js';

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

/** What every hop of a fetcher shares: the guarded lookup, the direct route's agents, the proxy route. */
export interface HopDeps {
  lookup: ReturnType<typeof guardedLookup>;
  /** The lookup of one URL's request, when host rules deny addresses (lib/fetch/denied-addresses.ts); else `lookup`. */
  lookupFor?: (url: URL) => ReturnType<typeof guardedLookup>;
  agents: ReturnType<typeof connectionAgents>;
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

/** The agents of one request: the fetcher's own (direct), or a tunnel through the proxy to the checked address. */
async function agentsFor(deps: HopDeps, req: HopRequest): Promise<ReturnType<typeof connectionAgents>> {
  if (!req.viaProxy) return deps.agents;
  let endpoint: ProxyEndpoint | undefined;
  try {
    endpoint = await deps.proxy?.endpoint();
  } catch (err) {
    throw new FetchFailure('PROXY_FAILURE', 'The proxy settings could not be read.', {
      trail: req.chain.trail,
      status: req.chain.lastStatus,
      cause: err,
    });
  }
  if (!endpoint) throw new FetchFailure('PROXY_FAILURE', 'No proxy is configured for this route.', { trail: req.chain.trail, status: req.chain.lastStatus });
  const lookup = deps.lookupFor?.(req.chain.current) ?? deps.lookup;
  const resolve = (host: string) =>
    new Promise<string>((ok, fail) => {
      lookup(host, {}, (err, address) => (err ? fail(err) : ok(address as string)));
    });
  const secureContext = (deps.agents.https as https.Agent & { options: { secureContext?: tls.SecureContext } }).options.secureContext;
  return tunnelAgents(endpoint, resolve, { timeoutMs: req.timeoutMs, signal: req.chain.options.signal, secureContext });
}
/** One hop's request: its answer (a redirect's or a HEAD's without a body), or a FetchFailure. */
export async function requestOnce(deps: HopDeps, req: HopRequest): Promise<HopAnswer> {
  const stream = openStream(deps, req, await hopAgents(deps, req));
  const received: Received = { status: 0, headers: {}, chunks: [], bytes: 0 };
  try {
    return await receive(stream, req, received);
  } catch (err) {
    stream.destroy();
    return brokenOff(deps, req, err, received);
  }
}

/** The hop's agents (agentsFor); any failure to get them is the proxy's. */
async function hopAgents(deps: HopDeps, req: HopRequest): Promise<ReturnType<typeof connectionAgents>> {
  try {
    return await agentsFor(deps, req);
  } catch (err) {
    throw err instanceof FetchFailure
      ? err
      : new FetchFailure('PROXY_FAILURE', 'The proxy failed.', { trail: req.chain.trail, status: req.chain.lastStatus, cause: err });
  }
}

type HopStream = ReturnType<typeof got.stream>;

function openStream(deps: HopDeps, req: HopRequest, agents: ReturnType<typeof connectionAgents>): HopStream {
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
    dnsLookup: (deps.lookupFor?.(req.chain.current) ?? deps.lookup) as never,
    // Direct: the fetcher's agents (connectionAgents), a fresh connection per request, TLS sessions
    // resumed per host. Through the proxy: this request's tunnel (tunnelAgents).
    agent: agents,
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
    stream.destroy();
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
