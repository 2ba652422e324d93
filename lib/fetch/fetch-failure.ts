/**
 * An upstream failure of the guarded fetcher (lib/fetch/safe-fetch.ts): its codes, which of them
 * may pass on a later try, the FetchFailure that carries one (with the trail and the last status),
 * and how a request error becomes a code and the message a record shows. A FetchFailure becomes an
 * `ok: false` record, never a 5xx.
 */
import { ExpectedFailure } from '../errors.js';
import type { RouteTaken } from './proxy-route.js';

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
  | 'PROXY_FAILURE'
  | 'LINK_NOT_ALLOWED'
  | 'RATE_LIMITED'
  | 'NETWORK_ERROR';

/** Failures that may pass on a later try (the others are the resource's own: too large, a redirect loop ...). */
const TRANSIENT_CODES: ReadonlySet<FetchFailureCode> = new Set([
  'TIMEOUT',
  'CONNECTION_RESET',
  'CONNECTION_REFUSED',
  'DNS_FAILURE',
  'NETWORK_ERROR',
  'ABORTED',
  'PROXY_FAILURE',
]);

/** An upstream failure: no usable response. Becomes an `ok: false` record, never a 5xx. */
export class FetchFailure extends ExpectedFailure {
  /** The route the failed request took (set by the fetcher). */
  route?: RouteTaken;

  /** The URLs visited so far, the original first. */
  readonly trail: string[];
  /** The last HTTP status seen, 0 when there was no response. */
  readonly status: number;
  /** RATE_LIMITED: seconds before the host is asked again (lib/fetch/slow-down.ts). */
  readonly retryAfter?: number;

  constructor(
    readonly code: FetchFailureCode,
    message: string,
    details: { trail: string[]; status?: number; cause?: unknown; retryAfter?: number },
  ) {
    super(message, { cause: details.cause, transient: TRANSIENT_CODES.has(code) });
    this.trail = details.trail;
    this.status = details.status ?? 0;
    if (details.retryAfter) this.retryAfter = details.retryAfter;
  }
}

export const DNS_FAILURE_MESSAGE = 'The host name of the link could not be resolved.';

/** The failure a request error is: its code and the message a record shows. */
export function classifyError(err: unknown): { code: FetchFailureCode; message: string } {
  const e = err as { code?: string; message?: string; name?: string };
  const code = e.code ?? '';
  if (e.name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return { code: 'TIMEOUT', message: 'The link did not answer in time.' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA' || code === 'ESERVFAIL') return { code: 'DNS_FAILURE', message: DNS_FAILURE_MESSAGE };
  if (code === 'ECONNREFUSED') return { code: 'CONNECTION_REFUSED', message: 'The server refused the connection.' };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'HPE_INVALID_CONSTANT')
    return { code: 'CONNECTION_RESET', message: 'The connection was closed before the response was complete.' };
  if (code === 'ERR_ABORTED' || e.name === 'AbortError' || code === 'ABORT_ERR') return { code: 'ABORTED', message: 'The fetch was cancelled.' };
  // The proxy's own failure: its message names the proxy by scheme, host and port only.
  if (code === 'ELINKPROXY') return { code: 'PROXY_FAILURE', message: e.message ?? 'The proxy failed.' };
  if (/CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/i.test(code) || /certificate|ssl|tls/i.test(e.message ?? '')) {
    return { code: 'TLS_ERROR', message: `The TLS handshake failed (${code || e.message}).` };
  }
  return { code: 'NETWORK_ERROR', message: `The link could not be fetched (${code || e.message}).` };
}
