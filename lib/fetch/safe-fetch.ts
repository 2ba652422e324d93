/**
 * The one outbound HTTP client (its contract: lib/fetch/types.ts). Every fetch of the service (the
 * link, icons, images, oEmbed, platform APIs, media) goes through `safeFetch`, which:
 *  - follows redirects itself (at most `maxRedirects` hops), checking each hop's URL with the
 *    SSRF guard and recording the trail; loops and non-http(s) targets stop the fetch;
 *  - resolves names through `guardedLookup` for every request, and connects (or reuses a pooled
 *    connection) only to an address it checked, so the address that was checked is the address
 *    connected to; idle connections are pooled per origin and address, and TLS sessions resumed
 *    (lib/fetch/connection-agents.ts, lib/fetch/hop-request.ts);
 *  - caps the total time (all hops) and the bytes read after decompression (gzip bombs stop too:
 *    each hop's request, lib/fetch/hop-request.ts);
 *  - sends the caller's credentials (Authorization, Proxy-Authorization, Cookie) only while the
 *    chain stays on the link's origin: a redirect to another origin drops them for good (`Chain`);
 *  - never tells a caller what DNS answered: a name that resolves to a forbidden address fails
 *    exactly like a name that does not resolve (DNS_FAILURE); the address and its class are
 *    logged, not returned, so internal names cannot be mapped through the service (hop-request.ts);
 *  - takes each hop direct or through the operator's forward proxy (lib/fetch/proxy-route.ts): the
 *    guard checks the hop first, and the proxy is asked for the checked address, never the name
 *    (lib/fetch/proxy-tunnel.ts). In `fallback` mode a direct answer that is a wall, or a refused or
 *    reset connection, is asked again through the proxy, and the host stays on the proxy for the
 *    rest of the preview (`FetchOptions.route`, `fetchHop`).
 * This file is the fetcher: the redirect chain, the credentials per origin and each hop's route;
 * one hop's request is lib/fetch/hop-request.ts.
 */
import { isIP } from 'node:net';
import { LinkNotAllowedError } from '../errors.js';
import { proxyWorthyWall, titleOf } from '../extract/walls.js';
import { normalizeHost, onAnyHost } from '../host.js';
import type { Log } from '../log.js';
import { checkUrl, type GuardPolicy, guardedLookup, type Resolver, systemResolver } from './address-guard.js';
import { connectionPool } from './connection-agents.js';
import { type DeniedAddresses, deniedAddressesOf, ruleCheckedLookup } from './denied-addresses.js';
import { FetchFailure, type FetchFailureCode } from './fetch-failure.js';
import { flatHeaders } from './headers.js';
import { type HopAnswer, type HopDeps, REDIRECT_STATUSES, requestOnce } from './hop-request.js';
import { HostGate } from './host-gate.js';
import { type HostRuleSettings, type HostRules, hostRulesOf } from './host-rules.js';
import { type ProxyPolicy, RouteState, type RouteTaken, routeViaProxy } from './proxy-route.js';
import { SlowDownMemo } from './slow-down.js';
import type { Fetcher, FetchOptions, WireFacts } from './types.js';

export interface FetcherDeps extends GuardPolicy {
  userAgent: string;
  maxRedirects: number;
  resolver?: Resolver;
  /** Where the guard's refusals of resolved addresses are logged (host, address, class): never in a response. */
  log?: Pick<Log, 'warn'> & Partial<Pick<Log, 'info'>>;
  /** The forward proxy route (LINKPREVIEW_PROXY_*); absent: every request goes direct. */
  proxy?: ProxyPolicy;
  /** The operator's host rules (LINKPREVIEW_HOST_RULES): a `deny`ed URL is never asked, at any hop. */
  hostRules?: HostRules;
  /** At most this many requests at once to one host (LINKPREVIEW_HOST_CONCURRENCY; lib/fetch/host-gate.ts); absent: no limit. */
  hostGate?: HostGate;
  /** Hosts that asked to slow down (429/503 with Retry-After; lib/fetch/slow-down.ts); absent: none remembered. */
  slowDown?: SlowDownMemo;
}

/** Request headers that carry credentials: sent only while every hop is on the link's origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

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

/** The fetcher the configuration describes (guard policy, User-Agent, redirects), and its proxy route when there is one. */
export function fetcherFromConfig(
  config: {
    allowPrivateNetworks: boolean;
    allowLoopback?: boolean;
    allowedPorts: number[];
    userAgent: string;
    maxRedirects: number;
    hostConcurrency?: number;
    retryAfterMaxMs?: number;
  } & HostRuleSettings,
  resolver?: Resolver,
  log?: FetcherDeps['log'],
  proxy?: ProxyPolicy,
): Fetcher {
  return createFetcher({
    allowPrivateNetworks: config.allowPrivateNetworks,
    allowLoopback: config.allowLoopback,
    allowedPorts: config.allowedPorts,
    userAgent: config.userAgent,
    maxRedirects: config.maxRedirects,
    resolver,
    log,
    proxy,
    hostRules: hostRulesOf(config),
    ...(config.hostConcurrency ? { hostGate: new HostGate(config.hostConcurrency) } : {}),
    ...(config.retryAfterMaxMs ? { slowDown: new SlowDownMemo(config.retryAfterMaxMs) } : {}),
  });
}

/** The fetcher with a preview's (or a job's) route state on every call that has none of its own. */
export function routedFetcher(fetch: Fetcher, route: RouteState | undefined): Fetcher {
  if (!route) return fetch;
  return (url, options) => fetch(url, options.route ? options : { ...options, route });
}

export function createFetcher(deps: FetcherDeps): Fetcher {
  const policy: GuardPolicy = {
    allowPrivateNetworks: deps.allowPrivateNetworks,
    allowLoopback: deps.allowLoopback,
    allowedPorts: deps.allowedPorts,
    trustedAddresses: deps.trustedAddresses,
  };
  const resolver = deps.resolver ?? systemResolver;
  const lookup = guardedLookup(policy, resolver);
  const pool = connectionPool();
  const proxy = deps.proxy && deps.proxy.mode !== 'off' ? deps.proxy : undefined;
  const denied = deps.hostRules && deniedAddressesOf(deps.hostRules, resolver);
  const lookupFor = denied && ((target: URL) => ruleCheckedLookup(lookup, denied, target));
  const hop: HopDeps = { lookup, lookupFor, pool, proxy, log: deps.log };
  const hold = { gate: deps.hostGate, slowDown: deps.slowDown, rules: deps.hostRules, proxy };

  return async function safeFetch(url, options) {
    const chain = new Chain(url, options, deps.maxRedirects);
    try {
      for (let n = 0; ; n++) {
        const current = chain.current;
        const verdict = checkUrl(current, policy);
        if (!verdict.allowed) {
          throw new LinkNotAllowedError(
            n === 0 ? `The link is not allowed: ${verdict.reason}.` : `The link redirects to a URL that is not allowed: ${verdict.reason}.`,
            { url: current.href, hop: n },
          );
        }
        await refuseDenied({ rules: deps.hostRules, denied }, chain, n);
        chain.visit();
        const answer = await heldHop(hold, chain, () => fetchHop(hop, chain, { userAgent: deps.userAgent, hop: n }));
        const next = chain.follow(answer, n);
        if (!next) {
          const result = { ...answer, url, finalUrl: current.href, trail: chain.trail, route: chain.taken, wire: chain.wire };
          chain.route.fetched(result);
          return result;
        }
      }
    } catch (err) {
      if (err instanceof FetchFailure) err.route = chain.taken;
      throw err;
    }
  };
}

/**
 * One hop, held to what the host asked and allows: a host that asked to slow down is not asked
 * (RATE_LIMITED, with the status it gave and the seconds left) unless a host rule sends it through
 * the proxy; at most the gate's number of requests at once to the host, waiting within the fetch's
 * own time. Its answer is heard: a 429 or 503 with Retry-After is remembered.
 */
async function heldHop(
  hold: { gate?: HostGate; slowDown?: SlowDownMemo; rules?: HostRules; proxy?: ProxyPolicy },
  chain: Chain,
  hop: () => Promise<HopAnswer>,
): Promise<HopAnswer> {
  const host = normalizeHost(chain.current.hostname);
  const held = hold.slowDown?.held(host);
  if (held && !(hold.proxy && hold.rules?.has(chain.current, 'proxy'))) {
    const retryAfter = hold.slowDown?.secondsLeft(held);
    chain.route.slowedDown(host);
    throw new FetchFailure('RATE_LIMITED', `The host asked to slow down (${held.status}); it is asked again in ${retryAfter} s.`, {
      trail: chain.trail,
      status: held.status,
      retryAfter,
    });
  }
  const timeout = () => new FetchFailure('TIMEOUT', 'The link did not answer in time.', { trail: chain.trail, status: chain.lastStatus });
  const leave = hold.gate
    ? await hold.gate.enter(host, chain.remaining(), timeout, chain.options.signal).catch((err) => {
        throw err instanceof FetchFailure
          ? err
          : new FetchFailure('ABORTED', 'The fetch was cancelled.', { trail: chain.trail, status: chain.lastStatus, cause: err });
      })
    : undefined;
  try {
    const answer = await hop();
    hold.slowDown?.heard(host, answer.status, answer.headers['retry-after']);
    return answer;
  } finally {
    leave?.();
  }
}

/**
 * A URL a host rule denies is never asked, by its name or, for an IP literal, by its address (a
 * denied host's address is denied under every name: lib/fetch/denied-addresses.ts): the link itself
 * is not allowed (400 LINK_NOT_ALLOWED); a redirect into it ends the fetch as an upstream failure of
 * the same code (an `ok: false` record).
 */
async function refuseDenied(table: { rules?: HostRules; denied?: DeniedAddresses }, chain: Chain, n: number): Promise<void> {
  const url = chain.current;
  const rule = table.rules?.denies(url) ?? (isIP(normalizeHost(url.hostname)) ? await table.denied?.denyingRule(url, url.hostname) : undefined);
  if (!rule) return;
  if (n === 0) {
    throw new LinkNotAllowedError(
      `The link is not allowed: a host rule (${rule.pattern}=deny) refuses it.`,
      { url: url.href, hop: 0, rule: rule.pattern },
      { reason: 'host rule', hostRule: rule.pattern },
    );
  }
  throw new FetchFailure('LINK_NOT_ALLOWED', `The link redirects to a URL that a host rule (${rule.pattern}=deny) refuses.`, {
    trail: chain.trail,
    status: chain.lastStatus,
  });
}

/** Throws LinkNotAllowedError (400 for the link itself) when a host rule denies `url`. */
export function assertNotDenied(rules: HostRules | undefined, url: URL | string): void {
  const rule = rules?.denies(url);
  if (!rule) return;
  const href = typeof url === 'string' ? url : url.href;
  throw new LinkNotAllowedError(
    `The link is not allowed: a host rule (${rule.pattern}=deny) refuses it.`,
    { url: href, hop: 0, rule: rule.pattern },
    { reason: 'host rule' },
  );
}

/**
 * One fetch's redirect chain: where it is, where it has been, the cookies set on the way, the
 * caller's credentials (sent only while the chain stays on the link's origin) and its route.
 */
class Chain {
  readonly trail: string[];
  readonly route: RouteState;
  current: URL;
  lastStatus = 0;
  taken: RouteTaken = 'direct';
  /** The chain's connections so far (every hop's). */
  readonly wire: WireFacts = { opened: 0, reused: 0, roundTrips: 0 };
  readonly started = Date.now();
  private readonly visits = new Map<string, number>();
  private readonly cookies = new HopCookies();
  private readonly origin: string;
  private readonly maxRedirects: number;
  /** The caller's headers: credentials apart, as they do not follow the chain to another origin. */
  private readonly plain: Record<string, string> = {};
  private readonly credentials: Record<string, string> = {};
  private callerCookie: string | undefined;
  private onOrigin = true;

  constructor(
    url: string,
    readonly options: FetchOptions,
    maxRedirects: number,
  ) {
    this.trail = [url];
    this.current = new URL(url);
    this.origin = this.current.origin;
    this.route = options.route ?? new RouteState();
    this.maxRedirects = options.method === 'POST' ? 0 : Math.min(options.maxRedirects ?? maxRedirects, 10);
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const lower = name.toLowerCase();
      if (lower === 'cookie') this.callerCookie = this.callerCookie ? `${this.callerCookie}; ${value}` : value;
      else if (CREDENTIAL_HEADERS.has(lower)) this.credentials[lower] = value;
      else this.plain[name] = value;
    }
  }

  /** Counts a visit of the current URL: a third is a loop. */
  visit(): void {
    const seen = (this.visits.get(this.current.href) ?? 0) + 1;
    this.visits.set(this.current.href, seen);
    if (seen > 2) throw new FetchFailure('REDIRECT_LOOP', 'The link redirects in a loop.', { trail: this.trail, status: this.lastStatus });
  }

  /** Time left of the fetch's own timeout (all hops); TIMEOUT when none is. */
  remaining(): number {
    const left = this.options.timeoutMs - (Date.now() - this.started);
    if (left <= 0) throw new FetchFailure('TIMEOUT', 'The link did not answer in time.', { trail: this.trail, status: this.lastStatus });
    return left;
  }

  /** The current hop's request headers: the caller's (credentials on the origin only), the chain's cookies, the range. */
  headers(userAgent: string): Record<string, string> {
    // Once the chain leaves the link's origin (scheme, host, port), the credentials stay behind.
    if (this.current.origin !== this.origin) this.onOrigin = false;
    const headers: Record<string, string> = {
      'user-agent': userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.8',
      ...this.plain,
      ...(this.onOrigin ? this.credentials : {}),
    };
    // Cookies set during the chain go back to the host that set them only (HopCookies).
    const consent = this.onOrigin || onAnyHost(this.current.hostname, this.options.cookieHosts ?? []);
    const cookie = this.cookies.header(this.current.host, consent ? this.callerCookie : undefined);
    if (cookie) headers.cookie = cookie;
    if (this.options.rangePrefixBytes) {
      const from = this.options.rangeStart ?? 0;
      headers.range = `bytes=${from}-${from + this.options.rangePrefixBytes - 1}`;
    }
    return headers;
  }

  /** Takes in a hop's answer: its connection, its cookies, and its redirect (the next URL, or undefined when the answer is final). */
  follow(res: HopAnswer, n: number): URL | undefined {
    this.lastStatus = res.status;
    if (res.wire) {
      this.wire.opened += res.wire.opened;
      this.wire.reused += res.wire.reused;
      this.wire.roundTrips += res.wire.roundTrips;
    }
    this.cookies.store(this.current.host, res.headers['set-cookie']);
    const next = redirectTarget(this.current, res, this.trail);
    if (!next) return undefined;
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new LinkNotAllowedError(`The link redirects to a ${next.protocol.replace(':', '')}: URL, which is not allowed.`, {
        url: next.href.slice(0, 200),
        hop: n + 1,
      });
    }
    if (n + 1 > this.maxRedirects) {
      throw new FetchFailure('TOO_MANY_REDIRECTS', `The link redirects more than ${this.maxRedirects} times.`, { trail: this.trail, status: res.status });
    }
    this.trail.push(next.href);
    this.current = next;
    return next;
  }
}

/** The URL a redirect answer points at (fragment dropped), undefined for any other answer. */
function redirectTarget(current: URL, res: HopAnswer, trail: string[]): URL | undefined {
  const location = res.headers.location;
  if (!REDIRECT_STATUSES.has(res.status) || typeof location !== 'string' || !location.trim()) return undefined;
  let next: URL;
  try {
    next = new URL(location.trim(), current);
  } catch {
    throw new FetchFailure('REDIRECT_INVALID', `The link redirects to an invalid URL (${location.slice(0, 200)}).`, { trail, status: res.status });
  }
  next.hash = '';
  return next;
}

/** Direct failures that the proxy may get past in `fallback` mode: the site refused or reset the connection. */
const REFUSALS: ReadonlySet<FetchFailureCode> = new Set(['CONNECTION_REFUSED', 'CONNECTION_RESET']);

/**
 * One hop of the chain, on its route: through the proxy when the route says so; else direct, and
 * in `fallback` mode through the proxy again after a wall or a refusal, the host then staying on
 * the proxy for the rest of the preview (and remembered for the next).
 */
async function fetchHop(deps: HopDeps, chain: Chain, at: { userAgent: string; hop: number }): Promise<HopAnswer> {
  const { proxy } = deps;
  const host = chain.current.hostname;
  const request = (viaProxy: boolean) => {
    if (viaProxy) {
      chain.route.proxiedOne();
      if (chain.taken === 'direct') chain.taken = 'proxy';
    }
    return requestOnce(deps, { chain, headers: chain.headers(at.userAgent), timeoutMs: chain.remaining(), viaProxy, hop: at.hop });
  };
  if (proxy && (await routeViaProxy(proxy, chain.route, host, chain.current))) return request(true);
  const fallback = proxy?.mode === 'fallback' && chain.options.method !== 'POST';
  let wall: string | undefined;
  try {
    const answer = await request(false);
    wall = fallback ? wallOf(chain.current, answer) : undefined;
    if (!wall) return answer;
  } catch (err) {
    if (!fallback || !(err instanceof FetchFailure) || !REFUSALS.has(err.code)) throw err;
    wall = err.code;
  }
  chain.route.walled(host, wall);
  deps.log?.info?.('wall seen: asking again through the proxy', { host: normalizeHost(host), wall, url: chain.current.href });
  void proxy?.memo?.remember(normalizeHost(host), wall).catch(() => undefined);
  chain.taken = 'proxy-after-wall';
  return request(true);
}

/** A direct answer that a proxy could get past (lib/extract/walls.ts), or undefined. */
function wallOf(target: URL, res: HopAnswer): string | undefined {
  const headers = flatHeaders(res.headers);
  const next = REDIRECT_STATUSES.has(res.status) && headers.location ? locationUrl(headers.location, target) : undefined;
  // A page that answered 2xx is read only when it is HTML (an image or a feed is never a wall).
  const html = /html/i.test(headers['content-type'] ?? '');
  if (res.status >= 200 && res.status < 300 && !html && !next) return undefined;
  const head = res.body.subarray(0, 32 * 1024).toString('latin1');
  return proxyWorthyWall({ status: res.status, url: target.href, finalUrl: next ?? target.href, headers, head, title: titleOf(head), size: res.body.length });
}

function locationUrl(location: string, base: URL): string | undefined {
  try {
    return new URL(location.trim(), base).href;
  } catch {
    return undefined;
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
