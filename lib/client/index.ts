/**
 * A typed client for a deployed linklens over HTTP (`@linklens/client`; lib/client/lambda.ts,
 * `@linklens/client/lambda`, calls it through Lambda Invoke instead). Records come back typed;
 * error bodies become a LinkPreviewClientError. It loads nothing, Node's modules included: plain
 * fetch, so it runs in Node 20+, browsers and edge runtimes. The package is built from this
 * folder by scripts/build-client.mjs.
 */

import { acceptLanguageList } from '../contract/accept-language.js';
import type { ApiErrorResponseBody, LinkRecord } from '../contract/link.js';

// The Link record and every object in it (generated from openapi.yaml): the types a caller works with.
export type * from '../contract/link.js';

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

export interface HttpClientOptions {
  /** e.g. https://abc.execute-api.eu-west-1.amazonaws.com or http://127.0.0.1:3000 */
  baseUrl: string;
  apiKey: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export function createHttpClient(options: HttpClientOptions): LinkPreviewClient {
  const doFetch = options.fetch ?? fetch;
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/`;
  return {
    async preview(link, opts = {}) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      };
      // Only its valid entries are sent, as the service keeps them: a bad value never fails the request (fetch refuses CR/LF).
      const acceptLanguage = acceptLanguageList(opts.acceptLanguage);
      if (acceptLanguage) headers['accept-language'] = acceptLanguage;
      const signal = opts.signal ?? AbortSignal.timeout(options.timeoutMs ?? 30_000);
      let res: Response;
      try {
        res = await doFetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ link, source: opts.source ?? 'API' }), signal });
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
      return body as LinkRecord;
    },
  };
}
