/**
 * A typed client for a deployed linklens over HTTP (`@linklens/client`; lib/client/lambda.ts,
 * `@linklens/client/lambda`, calls it through Lambda Invoke instead). Records come back typed;
 * error bodies become a LinkPreviewClientError. It loads nothing, Node's modules included: plain
 * fetch, so it runs in Node 20+, browsers and edge runtimes. The package is built from this
 * folder by scripts/build-client.mjs.
 */

import { acceptLanguageList } from '../contract/accept-language.js';
import type { ApiErrorResponseBody, Batch, LinkPreviewRequestBody, LinkRecord } from '../contract/link.js';

// The Link record and every object in it (generated from openapi.yaml): the types a caller works with.
export type * from '../contract/link.js';
export { verifyWebhook, type WebhookEvent, WebhookVerificationError } from './webhooks.js';

/** The service's error body (openapi.yaml's APIErrorResponseBody). */
export type ErrorBody = ApiErrorResponseBody;

/** The fields of an error: the service's body, or the client's own (errorCode TRANSPORT_ERROR, FUNCTION_ERROR, ...). */
type ErrorFields = Omit<Partial<ErrorBody>, 'errorCode'> & { status: number; errorCode?: string };

export interface PreviewOptions {
  source?: 'API' | 'WEB';
  acceptLanguage?: string;
  signal?: AbortSignal;
}

/** An error body from the service (or a transport failure, with status 0). */
export class LinkPreviewClientError extends Error {
  readonly status: number;
  readonly errorCode: string;
  readonly details?: ErrorBody['details'];
  readonly requestId?: string;

  constructor(body: ErrorFields, options?: { cause?: unknown }) {
    super(body.message ?? body.error ?? `linklens answered ${body.status}`, options);
    this.name = 'LinkPreviewClientError';
    this.status = body.status;
    this.errorCode = body.errorCode ?? (body.status === 0 ? 'TRANSPORT_ERROR' : 'UNKNOWN_ERROR');
    this.details = body.details;
    this.requestId = body.requestId;
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return value !== null && typeof value === 'object' && (value as ErrorBody).ok === false && typeof (value as ErrorBody).errorCode === 'string';
}

export interface LinkPreviewClient {
  preview(link: string, options?: PreviewOptions): Promise<LinkRecord>;
}

export interface SubmitOptions {
  /** Where each finished item, then the batch, is POSTed, signed (verify with `verifyWebhook`). */
  callbackUrl?: string;
  signal?: AbortSignal;
}

/** Over HTTP, a client also submits batches (POST /previews) and reads them (GET /previews/{batchId}). */
export interface HttpLinkPreviewClient extends LinkPreviewClient {
  /** Queues up to 100 links (strings, or bodies as POST / takes them): the batch as accepted (202), its items `queued` or refused alone (`failed`). */
  submit(links: readonly (string | LinkPreviewRequestBody)[], options?: SubmitOptions): Promise<Batch>;
  /** A batch: each item's state, and each done item's record. */
  batch(batchId: string, options?: { signal?: AbortSignal }): Promise<Batch>;
}

export interface HttpClientOptions {
  /** e.g. https://abc.execute-api.eu-west-1.amazonaws.com or http://127.0.0.1:3000 */
  baseUrl: string;
  apiKey: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export function createHttpClient(options: HttpClientOptions): HttpLinkPreviewClient {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const endpoint = `${base}/`;
  /** A JSON call: its body, or a LinkPreviewClientError for an error answer or a failure to reach the service. */
  async function call<T>(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<T> {
    let res: Response;
    try {
      res = await doFetch(url, { ...init, signal: signal ?? AbortSignal.timeout(options.timeoutMs ?? 30_000) });
    } catch (err) {
      throw new LinkPreviewClientError({ status: 0, message: `Could not reach linklens: ${(err as Error).message}` }, { cause: err });
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new LinkPreviewClientError({ status: res.status, message: `linklens answered ${res.status} with a body that is not JSON` });
    }
    if (!res.ok || isErrorBody(body)) throw new LinkPreviewClientError({ ...(body as ErrorBody), status: res.status });
    return body as T;
  }
  const auth = { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' };
  return {
    submit(links, opts = {}) {
      const body = JSON.stringify({ links, ...(opts.callbackUrl ? { callbackUrl: opts.callbackUrl } : {}) });
      return call<Batch>(`${base}/previews`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body }, opts.signal);
    },
    batch(batchId, opts = {}) {
      return call<Batch>(`${base}/previews/${encodeURIComponent(batchId)}`, { method: 'GET', headers: auth }, opts.signal);
    },
    async preview(link, opts = {}) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      };
      // Only its valid entries are sent, as the service keeps them: a bad value never fails the request (fetch refuses CR/LF).
      const acceptLanguage = acceptLanguageList(opts.acceptLanguage);
      if (acceptLanguage) headers['accept-language'] = acceptLanguage;
      return call<LinkRecord>(endpoint, { method: 'POST', headers, body: JSON.stringify({ link, source: opts.source ?? 'API' }) }, opts.signal);
    },
  };
}
