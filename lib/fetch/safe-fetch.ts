/**
 * The one outbound HTTP client. Every fetch of the service (the link, icons, images, oEmbed,
 * platform APIs, media) goes through `safeFetch`, which:
 *  - follows redirects itself (at most `maxRedirects` hops), checking each hop's URL with the
 *    SSRF guard and recording the trail; loops and non-http(s) targets stop the fetch;
 *  - resolves names through `guardedLookup` on a fresh connection (no pooled sockets), so the
 *    address that was checked is the address connected to; TLS sessions are resumed per host
 *    (`connectionAgents`), the certificate having been verified when the session was made;
 *  - caps the total time (all hops) and the bytes read after decompression (gzip bombs stop too);
 *  - sends the caller's credentials (Authorization, Proxy-Authorization, Cookie) only while the
 *    chain stays on the link's origin: a redirect to another origin drops them for good;
 *  - never tells a caller what DNS answered: a name that resolves to a forbidden address fails
 *    exactly like a name that does not resolve (DNS_FAILURE); the address and its class are
 *    logged, not returned, so internal names cannot be mapped through the service.
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import got, { type Headers } from 'got';
import { ExpectedFailure, LinkNotAllowedError } from '../errors.js';
import type { Log } from '../log.js';
import { checkUrl, type GuardPolicy, guardedLookup, type Resolver, systemResolver } from './address-guard.js';

export type FetchFailureCode =
  | 'DNS_FAILURE'
  | 'CONNECTION_REFUSED'
  | 'CONNECTION_RESET'
  | 'TIMEOUT'
  | 'TLS_ERROR'
  | 'TOO_MANY_REDIRECTS'
  | 'REDIRECT_LOOP'
  | 'REDIRECT_INVALID'
  | 'TOO_LARGE'
  | 'ABORTED'
  | 'NETWORK_ERROR';

/** Failures that may pass on a later try (the others are the resource's own: too large, a redirect loop ...). */
const TRANSIENT_CODES: ReadonlySet<FetchFailureCode> = new Set([
  'TIMEOUT',
  'CONNECTION_RESET',
  'CONNECTION_REFUSED',
  'DNS_FAILURE',
  'NETWORK_ERROR',
  'ABORTED',
]);

/** An upstream failure: no usable response. Becomes an `ok: false` record, never a 5xx. */
export class FetchFailure extends ExpectedFailure {
  constructor(
    readonly code: FetchFailureCode,
    message: string,
    /** The URLs visited so far, the original first. */
    readonly trail: string[],
    /** The last HTTP status seen, 0 when there was no response. */
    readonly status = 0,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause, transient: TRANSIENT_CODES.has(code) });
  }
}

export interface FetchOptions {
  /** POST is for platform APIs (an OAuth token call); its redirects are not followed. */
  method?: 'GET' | 'HEAD' | 'POST';
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Byte cap on the (decompressed) body. */
  maxBytes: number;
  /** 'truncate' keeps the first maxBytes (HTML: metadata is at the top); 'fail' throws TOO_LARGE. */
  onTooLarge?: 'truncate' | 'fail';
  /** Total time for all hops. */
  timeoutMs: number;
  maxRedirects?: number;
  /** Aborts the fetch; a `TimeoutError` reason (the request's time budget ran out, lib/budget.ts) is a TIMEOUT. */
  signal?: AbortSignal;
  /** Sets `Range: bytes=0-(n-1)`: a prefix of large media (from `rangeStart` when given). */
  rangePrefixBytes?: number;
  /** With rangePrefixBytes: the first byte asked for (`Range: bytes=start-(start+n-1)`), e.g. an MP4 index at the end. */
  rangeStart?: number;
  /**
   * Host suffixes (`youtube.com` matches `www.youtube.com`) the caller's Cookie may still go to
   * after the chain has left the link's origin: a host profile's consent cookie (not a secret)
   * through its own consent hosts. Default: none. Authorization never leaves the origin.
   */
  cookieHosts?: string[];
}

export interface FetchResult {
  /** The URL asked for. */
  url: string;
  finalUrl: string;
  status: number;
  headers: Headers;
  body: Buffer;
  truncated: boolean;
  /** The full size of the resource when the server said (Content-Length, or the total of Content-Range). */
  declaredSize?: number;
  /** The original URL, then every URL redirected to; the last is finalUrl. */
  trail: string[];
}

export interface FetcherDeps extends GuardPolicy {
  userAgent: string;
  maxRedirects: number;
  resolver?: Resolver;
  /** Where the guard's refusals of resolved addresses are logged (host, address, class): never in a response. */
  log?: Pick<Log, 'warn'>;
}

export type Fetcher = (url: string, options: FetchOptions) => Promise<FetchResult>;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Request headers that carry credentials: sent only while every hop is on the link's origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

const DNS_FAILURE_MESSAGE = 'The host name of the link could not be resolved.';

function classifyError(err: unknown): { code: FetchFailureCode; message: string } {
  const e = err as { code?: string; message?: string; name?: string };
  const code = e.code ?? '';
  if (e.name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return { code: 'TIMEOUT', message: 'The link did not answer in time.' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA' || code === 'ESERVFAIL') return { code: 'DNS_FAILURE', message: DNS_FAILURE_MESSAGE };
  if (code === 'ECONNREFUSED') return { code: 'CONNECTION_REFUSED', message: 'The server refused the connection.' };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'HPE_INVALID_CONSTANT')
    return { code: 'CONNECTION_RESET', message: 'The connection was closed before the response was complete.' };
  if (code === 'ERR_ABORTED' || e.name === 'AbortError' || code === 'ABORT_ERR') return { code: 'ABORTED', message: 'The fetch was cancelled.' };
  if (/CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/i.test(code) || /certificate|ssl|tls/i.test(e.message ?? '')) {
    return { code: 'TLS_ERROR', message: `The TLS handshake failed (${code || e.message}).` };
  }
  return { code: 'NETWORK_ERROR', message: `The link could not be fetched (${code || e.message}).` };
}

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

/** A tiny per-fetch cookie jar: cookies set during a redirect chain are sent back on later hops of the same host. */
class HopCookies {
  private byHost = new Map<string, Map<string, string>>();
  store(host: string, setCookie: string[] | string | undefined): void {
    if (!setCookie) return;
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    for (const line of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const pair = line.split(';', 1)[0];
      const eq = pair.indexOf('=');
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    this.byHost.set(host, jar);
  }
  header(host: string, initial?: string): string | undefined {
    const jar = this.byHost.get(host);
    const parts = initial ? [initial] : [];
    if (jar) for (const [k, val] of jar) parts.push(`${k}=${val}`);
    return parts.length ? parts.join('; ') : undefined;
  }
}

/** The fetcher the configuration describes (guard policy, User-Agent, redirects). */
export function fetcherFromConfig(
  config: { allowPrivateNetworks: boolean; allowLoopback?: boolean; allowedPorts: number[]; userAgent: string; maxRedirects: number },
  resolver?: Resolver,
  log?: Pick<Log, 'warn'>,
): Fetcher {
  return createFetcher({
    allowPrivateNetworks: config.allowPrivateNetworks,
    allowLoopback: config.allowLoopback,
    allowedPorts: config.allowedPorts,
    userAgent: config.userAgent,
    maxRedirects: config.maxRedirects,
    resolver,
    log,
  });
}

function hostMatches(hostname: string, suffixes: string[] | undefined): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return !!suffixes?.some((h) => host === h || host.endsWith(`.${h}`));
}

/** Sessions kept per fetcher (one per host, port and server name; the oldest goes first). */
const MAX_CACHED_TLS_SESSIONS = 256;

/**
 * A fetcher's agents. keepAlive stays off: every request opens a new TCP connection through the
 * guarded lookup (a pooled socket would skip it), so the address checked is the address connected to.
 * What is shared is TLS state only: one secure context (the default CA store, NODE_EXTRA_CA_CERTS
 * included), built once instead of once per connection, and the https agent's session cache, keyed
 * by host, port and server name, so a later request to the same host (the page, then its image,
 * icons, manifest, oEmbed) resumes the session with an abbreviated handshake. A resumed session skips
 * the certificate and host name checks: they passed when the session was made (Node hands a session
 * to the agent only once they have), and only a server holding that session's secret can resume it.
 */
function connectionAgents(): { http: http.Agent; https: https.Agent } {
  return {
    http: new http.Agent({ keepAlive: false }),
    https: new https.Agent({ keepAlive: false, maxCachedSessions: MAX_CACHED_TLS_SESSIONS, secureContext: tls.createSecureContext() }),
  };
}

export function createFetcher(deps: FetcherDeps): Fetcher {
  const policy: GuardPolicy = {
    allowPrivateNetworks: deps.allowPrivateNetworks,
    allowLoopback: deps.allowLoopback,
    allowedPorts: deps.allowedPorts,
    trustedAddresses: deps.trustedAddresses,
  };
  const lookup = guardedLookup(policy, deps.resolver ?? systemResolver);
  const agents = connectionAgents();

  return async function safeFetch(url, options) {
    const started = Date.now();
    const maxRedirects = options.method === 'POST' ? 0 : Math.min(options.maxRedirects ?? deps.maxRedirects, 10);
    const trail: string[] = [url];
    const visits = new Map<string, number>();
    const cookies = new HopCookies();
    let current = new URL(url);
    let lastStatus = 0;
    const origin = current.origin;
    // The caller's headers: credentials apart, as they do not follow the chain to another origin.
    const plain: Record<string, string> = {};
    const credentials: Record<string, string> = {};
    let callerCookie: string | undefined;
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const lower = name.toLowerCase();
      if (lower === 'cookie') callerCookie = callerCookie ? `${callerCookie}; ${value}` : value;
      else if (CREDENTIAL_HEADERS.has(lower)) credentials[lower] = value;
      else plain[name] = value;
    }
    let onOrigin = true;

    for (let hop = 0; ; hop++) {
      const verdict = checkUrl(current, policy);
      if (!verdict.allowed) {
        throw new LinkNotAllowedError(
          hop === 0 ? `The link is not allowed: ${verdict.reason}.` : `The link redirects to a URL that is not allowed: ${verdict.reason}.`,
          { url: current.href, hop },
        );
      }
      const seen = (visits.get(current.href) ?? 0) + 1;
      visits.set(current.href, seen);
      if (seen > 2) throw new FetchFailure('REDIRECT_LOOP', 'The link redirects in a loop.', trail, lastStatus);

      const remaining = options.timeoutMs - (Date.now() - started);
      if (remaining <= 0) throw new FetchFailure('TIMEOUT', 'The link did not answer in time.', trail, lastStatus);

      // Once the chain leaves the link's origin (scheme, host, port), the credentials stay behind.
      if (current.origin !== origin) onOrigin = false;
      const headers: Record<string, string> = {
        'user-agent': deps.userAgent,
        accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
        'accept-language': 'en-US,en;q=0.8',
        ...plain,
        ...(onOrigin ? credentials : {}),
      };
      // Cookies set during the chain go back to the host that set them only (HopCookies).
      const cookie = cookies.header(current.host, onOrigin || hostMatches(current.hostname, options.cookieHosts) ? callerCookie : undefined);
      if (cookie) headers.cookie = cookie;
      if (options.rangePrefixBytes) {
        const from = options.rangeStart ?? 0;
        headers.range = `bytes=${from}-${from + options.rangePrefixBytes - 1}`;
      }

      let res: Awaited<ReturnType<typeof requestOnce>>;
      try {
        res = await requestOnce(current, options, headers, remaining, lookup, agents, trail, lastStatus);
      } catch (err) {
        if (err instanceof FetchFailure && err.cause instanceof LinkNotAllowedError) {
          const denied = err.cause;
          deps.log?.warn('fetch refused: the host resolves to a forbidden address', {
            url: current.href,
            hop,
            host: denied.hostname,
            address: denied.address,
            reason: denied.reason,
          });
        }
        throw err;
      }
      lastStatus = res.status;
      cookies.store(current.host, res.headers['set-cookie']);

      const location = res.headers.location;
      if (REDIRECT_STATUSES.has(res.status) && typeof location === 'string' && location.trim()) {
        let next: URL;
        try {
          next = new URL(location.trim(), current);
        } catch {
          throw new FetchFailure('REDIRECT_INVALID', `The link redirects to an invalid URL (${location.slice(0, 200)}).`, trail, res.status);
        }
        next.hash = '';
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new LinkNotAllowedError(`The link redirects to a ${next.protocol.replace(':', '')}: URL, which is not allowed.`, {
            url: next.href.slice(0, 200),
            hop: hop + 1,
          });
        }
        if (hop + 1 > maxRedirects) {
          throw new FetchFailure('TOO_MANY_REDIRECTS', `The link redirects more than ${maxRedirects} times.`, trail, res.status);
        }
        trail.push(next.href);
        current = next;
        continue;
      }
      return { ...res, url, finalUrl: current.href, trail };
    }
  };
}

async function requestOnce(
  target: URL,
  options: FetchOptions,
  headers: Record<string, string>,
  timeoutMs: number,
  lookup: ReturnType<typeof guardedLookup>,
  agents: ReturnType<typeof connectionAgents>,
  trail: string[],
  lastStatus: number,
): Promise<Omit<FetchResult, 'url' | 'finalUrl' | 'trail'>> {
  const maxBytes = options.maxBytes;
  const stream = got.stream(target, {
    method: options.method ?? 'GET',
    headers,
    ...(options.method === 'POST' && options.body !== undefined ? { body: options.body } : {}),
    followRedirect: false,
    throwHttpErrors: false,
    decompress: true,
    retry: { limit: 0 },
    dnsLookup: lookup as never,
    // The fetcher's agents (connectionAgents): a fresh connection per request, TLS sessions resumed per host.
    agent: agents,
    timeout: { lookup: timeoutMs, connect: timeoutMs, secureConnect: timeoutMs, send: timeoutMs, response: timeoutMs, request: timeoutMs },
    signal: options.signal,
    http2: false,
  });

  let status = 0;
  let resHeaders: Headers = {};
  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  try {
    const response = await new Promise<{ statusCode: number; headers: Headers }>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    });
    status = response.statusCode;
    resHeaders = response.headers;
    const declared = parseDeclaredSize(resHeaders);
    const isRedirect = REDIRECT_STATUSES.has(status) && typeof resHeaders.location === 'string';
    if (isRedirect || options.method === 'HEAD') {
      stream.destroy();
      return { status, headers: resHeaders, body: Buffer.alloc(0), truncated: false, declaredSize: declared };
    }
    if (declared !== undefined && declared > maxBytes && options.onTooLarge === 'fail' && !options.rangePrefixBytes) {
      stream.destroy();
      throw new FetchFailure('TOO_LARGE', `The resource is larger than ${maxBytes} bytes.`, trail, status);
    }
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (bytes + chunk.length > maxBytes) {
        if (options.onTooLarge === 'fail') {
          stream.destroy();
          throw new FetchFailure('TOO_LARGE', `The resource is larger than ${maxBytes} bytes.`, trail, status);
        }
        chunks.push(chunk.subarray(0, maxBytes - bytes));
        bytes = maxBytes;
        truncated = true;
        stream.destroy();
        break;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    }
    return { status, headers: resHeaders, body: Buffer.concat(chunks, bytes), truncated, declaredSize: declared };
  } catch (err) {
    stream.destroy();
    if (err instanceof FetchFailure) throw err;
    const denied = notAllowedFrom(err);
    if (denied) {
      // Exactly what a name that does not resolve gives (code, message, status, trail): whether an
      // internal name exists, and where it points, is not the caller's to learn. The refusal is
      // logged by the fetcher; the cause (host, address, class) stays on this side.
      throw new FetchFailure('DNS_FAILURE', DNS_FAILURE_MESSAGE, trail, status || lastStatus, { cause: denied });
    }
    const { code, message } = classifyError(err);
    // A body that broke off after the headers still has a status: keep it.
    if (status && chunks.length && (code === 'CONNECTION_RESET' || code === 'TIMEOUT')) {
      return { status, headers: resHeaders, body: Buffer.concat(chunks, bytes), truncated: true, declaredSize: parseDeclaredSize(resHeaders) };
    }
    throw new FetchFailure(code, message, trail, status || lastStatus, { cause: err });
  }
}

/**
 * A small sub-document of a page (oEmbed, a web app manifest): its text when it answers 2xx within
 * its own caps (at most 3 redirects, too large is a failure); undefined on any failure, since a
 * missing sub-document only leaves fields to the other rules.
 */
export async function fetchSmallText(
  fetch: Fetcher,
  url: string,
  limits: { maxBytes: number; timeoutMs: number; accept: string },
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      maxBytes: limits.maxBytes,
      onTooLarge: 'fail',
      timeoutMs: limits.timeoutMs,
      signal,
      headers: { accept: limits.accept },
      maxRedirects: 3,
    });
    if (res.status < 200 || res.status >= 300) return undefined;
    return res.body.toString('utf8');
  } catch {
    return undefined;
  }
}
