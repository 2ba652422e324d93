/**
 * The three ways the preview function is invoked, brought to one shape: API Gateway REST (v1),
 * API Gateway HTTP API (v2, which the local server also produces), and a direct Lambda
 * invocation whose payload is the request body itself.
 */
import { flatHeaders } from '../fetch/headers.js';

export type InvocationKind = 'rest' | 'http' | 'direct';

export interface HttpRequestInfo {
  kind: InvocationKind;
  method: string;
  path: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The query string, percent-encoded, without its `?` ('' when none). Read only by GET /oembed. */
  query: string;
  requestId?: string;
}

type AnyEvent = Record<string, unknown>;

function invocationKind(event: unknown): InvocationKind {
  if (event && typeof event === 'object' && !Array.isArray(event)) {
    const e = event as AnyEvent;
    const rc = e.requestContext as AnyEvent | undefined;
    if (e.version === '2.0' && rc && typeof rc.http === 'object') return 'http';
    if (typeof e.httpMethod === 'string' && 'headers' in e) return 'rest';
  }
  return 'direct';
}

/** An event's headers, flattened (lib/fetch/headers.ts); a REST event's multi-value lists win over its single values. */
function eventHeaders(headers: unknown, multi?: unknown): Record<string, string> {
  const bag: Record<string, string | string[]> = {};
  if (headers && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers as Record<string, unknown>)) if (v !== undefined && v !== null) bag[k] = String(v);
  }
  if (multi && typeof multi === 'object') {
    for (const [k, v] of Object.entries(multi as Record<string, unknown>)) if (Array.isArray(v)) bag[k] = v.map(String);
  }
  return flatHeaders(bag);
}

export function describeRequest(event: unknown): HttpRequestInfo {
  const kind = invocationKind(event);
  const e = (event ?? {}) as AnyEvent;
  const rc = (e.requestContext ?? {}) as AnyEvent;
  if (kind === 'http') {
    const http = rc.http as AnyEvent;
    return {
      kind,
      method: String(http.method ?? 'GET').toUpperCase(),
      path: String(e.rawPath ?? http.path ?? '/'),
      headers: eventHeaders(e.headers),
      query: typeof e.rawQueryString === 'string' ? e.rawQueryString : '',
      requestId: typeof rc.requestId === 'string' ? rc.requestId : undefined,
    };
  }
  if (kind === 'rest') {
    return {
      kind,
      method: String(e.httpMethod).toUpperCase(),
      path: String(e.path ?? rc.path ?? '/'),
      headers: eventHeaders(e.headers, e.multiValueHeaders),
      query: restQuery(e.queryStringParameters, e.multiValueQueryStringParameters),
      requestId: typeof rc.requestId === 'string' ? rc.requestId : undefined,
    };
  }
  return { kind, method: 'POST', path: '/', headers: {}, query: '' };
}

/** A REST (v1) event's query, which API Gateway hands over decoded, encoded again; multi-value lists win. */
function restQuery(single: unknown, multi: unknown): string {
  const params = new URLSearchParams();
  const lists = multi && typeof multi === 'object' ? (multi as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(lists)) if (Array.isArray(v)) for (const item of v) params.append(k, String(item));
  if (single && typeof single === 'object')
    for (const [k, v] of Object.entries(single as Record<string, unknown>)) if (!(k in lists) && v !== undefined && v !== null) params.append(k, String(v));
  return params.toString();
}

/** The path of the API's single operation, tolerant of a stage prefix and a trailing slash. */
export function isRootPath(path: string, stage?: string): boolean {
  let p = path.split('?')[0];
  if (stage && p.startsWith(`/${stage}`)) p = p.slice(stage.length + 1);
  return p === '' || p === '/';
}

/** The API Gateway stage an event names, when it is a named one (`$default` has no prefix in its paths). */
export function stageOf(event: unknown): string | undefined {
  const stage = (event as { requestContext?: { stage?: unknown } } | null)?.requestContext?.stage;
  return typeof stage === 'string' && stage !== '$default' ? stage : undefined;
}

/**
 * The route a path names: the API Gateway stage prefix removed (a named stage's rawPath starts
 * with it; `$default` has none), as isRootPath does for `/`, and trailing slashes dropped.
 * `/prod/status` on stage `prod` is `/status`; `/x/status` and `/statusx` stay what they are.
 */
export function routePath(path: string, stage?: string): string {
  let p = path.split('?')[0];
  if (stage && (p === `/${stage}` || p.startsWith(`/${stage}/`))) p = p.slice(stage.length + 1);
  p = p.replace(/\/+$/, '');
  return p === '' ? '/' : p;
}
