/**
 * Which route an outbound request takes: direct, or through the operator's forward proxy
 * (LINKPREVIEW_PROXY_URL, tunnelled by lib/fetch/proxy-tunnel.ts). The policy is the
 * configuration's (`LINKPREVIEW_PROXY_MODE`, the `proxy` host rules of lib/fetch/host-rules.ts,
 * `LINKPREVIEW_PROXY_HOSTS` among them); the `RouteState` is one
 * preview's: once a host answers with a wall (lib/extract/walls.ts) or refuses the connection and
 * the request is taken again through the proxy, every later request of that preview to that host
 * goes through the proxy as well (redirect hops, images, icons, oEmbed, platform sources, jobs and
 * the browser's requests), and the walled host is remembered (`WallMemo`) so the next preview of it
 * goes to the proxy first.
 */

import type { Headers } from 'got';
import { normalizeHost } from '../host.js';
import { type HostRule, type HostRules, hostRulesOf } from './host-rules.js';
import { type ProxyEndpoint, parseProxyUrl } from './proxy-url.js';

export type ProxyMode = 'off' | 'fallback' | 'hosts' | 'always';

/** How the link's own fetch went: straight to the site, through the proxy, or through it after a wall. */
export type RouteTaken = 'direct' | 'proxy' | 'proxy-after-wall';

/** Remembers walled hosts across previews (through the blob store: lib/fetch/wall-memo.ts). */
export interface WallMemo {
  isWalled(host: string): Promise<boolean>;
  remember(host: string, wall: string): Promise<void>;
}

export interface ProxyPolicy {
  mode: ProxyMode;
  /** The proxy (on AWS read from a secret and cached); undefined: no proxy, every request goes direct. */
  endpoint: () => Promise<ProxyEndpoint | undefined>;
  /** The host rules (lib/fetch/host-rules.ts): URLs with the `proxy` action go to the proxy first (`fallback`) or only (`hosts`). */
  rules?: HostRules;
  memo?: WallMemo;
}

/** A wall or a refusal that sent a host to the proxy, for logs and metrics. */
export interface WallSeen {
  host: string;
  /** The wall's kind (lib/extract/walls.ts), or the connection failure (`CONNECTION_REFUSED`, `CONNECTION_RESET`). */
  wall: string;
}

/** What a preview's route state says about it: for the log line, the metrics and the response header. */
export interface RouteSummary {
  /** Requests that went through the proxy. */
  proxied: number;
  walls: WallSeen[];
  /** Hosts that were sent through the proxy in this preview. */
  proxyHosts: string[];
  /** The preview's connections (in this process: on AWS the workers' own fetches are not counted). */
  wire?: WireSummary;
  /** Hosts a fetch of the preview did not ask because they had asked to slow down (lib/fetch/slow-down.ts), once each. */
  slowedDown?: string[];
}

/**
 * A preview's connections: opened and reused by all its fetches, and the round trips of the two
 * on its critical path, the link's own fetch (`page`) and its slowest image (`image`, 0 when none
 * was fetched here).
 */
export interface WireSummary {
  opened: number;
  reused: number;
  page: number;
  image: number;
}

/**
 * A fetch's connections: how many it opened and reused, and its round trips counted by design
 * (a reused connection 1, a new one 2 for http and 3 for https: TCP, TLS, the request), the
 * network's distance apart from the server's own time (FetchResult.wire, lib/fetch/types.ts).
 */
export interface WireFacts {
  opened: number;
  reused: number;
  roundTrips: number;
}

/** The part of a route state that travels with a job (JSON): the hosts already on the proxy. */
export interface RouteHint {
  proxyHosts: string[];
}

/** One preview's route: the hosts it has sent to the proxy, and what it saw. */
export class RouteState {
  private readonly onProxy = new Set<string>();
  private count = 0;
  readonly walls: WallSeen[] = [];
  private readonly wires: { image: boolean; wire: WireFacts }[] = [];
  private readonly heldBack = new Set<string>();

  constructor(hint?: Partial<RouteHint>) {
    for (const h of hint?.proxyHosts ?? []) if (typeof h === 'string') this.onProxy.add(normalizeHost(h));
  }

  /** True when the host goes through the proxy for the rest of this preview. */
  onProxyRoute(host: string): boolean {
    return this.onProxy.has(normalizeHost(host));
  }

  /** Sends the host to the proxy for the rest of this preview. */
  useProxy(host: string): void {
    this.onProxy.add(normalizeHost(host));
  }

  /** The host answered with a wall (or refused): it goes through the proxy from now on. */
  walled(host: string, wall: string): void {
    this.walls.push({ host: normalizeHost(host), wall });
    this.useProxy(host);
  }

  /** One request went through the proxy. */
  proxiedOne(): void {
    this.count++;
  }

  /** A fetch of this preview ended with an answer: its connections are counted (the first is the link's own). */
  fetched(result: { headers: Headers; wire?: WireFacts }): void {
    if (!result.wire) return;
    const type = result.headers['content-type'];
    this.wires.push({ image: typeof type === 'string' && /^\s*image\//i.test(type), wire: result.wire });
  }

  /** A fetch of this preview was not made: its host had asked to slow down. */
  slowedDown(host: string): void {
    this.heldBack.add(normalizeHost(host));
  }

  hint(): RouteHint {
    return { proxyHosts: [...this.onProxy] };
  }

  summary(): RouteSummary {
    const wire: WireSummary = { opened: 0, reused: 0, page: this.wires[0]?.wire.roundTrips ?? 0, image: 0 };
    for (const w of this.wires) {
      wire.opened += w.wire.opened;
      wire.reused += w.wire.reused;
      if (w.image) wire.image = Math.max(wire.image, w.wire.roundTrips);
    }
    const slowedDown = this.heldBack.size ? { slowedDown: [...this.heldBack] } : {};
    return { proxied: this.count, walls: [...this.walls], proxyHosts: [...this.onProxy], wire, ...slowedDown };
  }
}

/** True when the policy's host rules give the URL the `proxy` action (LINKPREVIEW_PROXY_HOSTS among them). */
function listed(policy: ProxyPolicy, host: string, url: URL | undefined): boolean {
  return !!policy.rules?.has(url ?? `http://${host}/`, 'proxy');
}

/**
 * Whether a request to `host` (at `url`) goes through the proxy now: always in `always`; in `hosts`
 * when it is listed (the patterns, the `proxy` host rules); in `fallback` when it is listed, or this
 * preview already sent it there, or the memo remembers a wall on it.
 */
export async function routeViaProxy(policy: ProxyPolicy, state: RouteState, host: string, url?: URL): Promise<boolean> {
  switch (policy.mode) {
    case 'off':
      return false;
    case 'always':
      return true;
    case 'hosts':
      return listed(policy, host, url);
    case 'fallback': {
      if (state.onProxyRoute(host) || listed(policy, host, url)) return true;
      if (!policy.memo || !(await policy.memo.isWalled(normalizeHost(host)))) return false;
      state.useProxy(host);
      return true;
    }
  }
}

/** The proxy settings (lib/core-settings.ts) a policy is made from. */
export interface ProxySettings {
  proxyUrl: string;
  proxyMode: ProxyMode;
  proxyHosts: readonly string[];
  /** LINKPREVIEW_HOST_RULES: its `proxy` rules join the listed hosts in one table. */
  hostRules?: readonly HostRule[];
}

/**
 * The policy the settings describe, or undefined when nothing goes through a proxy (mode `off`, or
 * no proxy at all). `endpoint`: where the URL comes from when not from LINKPREVIEW_PROXY_URL (on
 * AWS, a secret or a parameter).
 */
export function proxyPolicyFrom(
  settings: ProxySettings,
  options: { memo?: WallMemo; endpoint?: () => Promise<ProxyEndpoint | undefined> } = {},
): ProxyPolicy | undefined {
  if (settings.proxyMode === 'off') return undefined;
  let endpoint = options.endpoint;
  if (!endpoint && settings.proxyUrl) {
    const parsed = parseProxyUrl(settings.proxyUrl);
    endpoint = async () => parsed;
  }
  if (!endpoint) return undefined;
  // The listed hosts are entries of the host rules' table (LINKPREVIEW_PROXY_HOSTS as `host=proxy`).
  return { mode: settings.proxyMode, endpoint, rules: hostRulesOf(settings), memo: options.memo };
}

/** The route a preview's link took, from what its state saw when the link's own fetch did not say. */
export function routeOf(summary: RouteSummary): RouteTaken {
  return summary.walls.length ? 'proxy-after-wall' : summary.proxied ? 'proxy' : 'direct';
}
