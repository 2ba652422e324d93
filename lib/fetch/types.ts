/**
 * The fetcher's contract: what a fetch is asked with (FetchOptions), what it answers (FetchResult)
 * and the Fetcher itself. The one implementation is lib/fetch/safe-fetch.ts; the pipeline, the
 * jobs, the platforms and the browser take a Fetcher through their ports.
 */
import type { Headers } from 'got';
import type { RouteState, RouteTaken, WireFacts } from './proxy-route.js';

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
  /** The preview's route (which hosts go through the proxy); default: a route of this fetch alone. */
  route?: RouteState;
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
  /** How the fetch went: direct, through the proxy, or through it after a wall (set by the fetcher). */
  route?: RouteTaken;
  /** Its connections over all hops: opened, reused, and the round trips they cost (set by the fetcher). */
  wire?: WireFacts;
}

export type { WireFacts };

export type Fetcher = (url: string, options: FetchOptions) => Promise<FetchResult>;
