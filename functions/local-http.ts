/**
 * The node:http side of the local server: each request becomes the API Gateway HTTP API (v2)
 * event the Lambda gets and goes to the same handler; GET and HEAD under /assets/ are answered
 * from the local blob store (functions/local-assets.ts).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import { bearerRejection } from '../lib/auth/key-store.js';
import { API_GATEWAY_LIMIT_MS } from '../lib/core-settings.js';
import { InternalError, LinkPreviewError, toErrorBody } from '../lib/errors.js';
import { flatHeaders } from '../lib/fetch/headers.js';
import type { HttpResponse, PreviewHandler } from '../lib/http/preview-handler.js';
import type { IdleWork } from '../lib/jobs/idle-work.js';
import { errorFields, type Log } from '../lib/log.js';
import type { KeyStore } from '../lib/ports.js';
import { PhaseTimer } from '../lib/timing.js';
import { assetAnswer } from './local-assets.js';

const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

export interface LocalHttpDeps {
  /** The API handler (the Lambda's): preview, /status, /openapi.json. */
  handler: PreviewHandler;
  keys: KeyStore;
  /** Where /assets/ are read from; undefined: every asset is 404. */
  assets?: FsBlobStore;
  /** The work parked until the server is idle (lib/jobs/idle-work.ts): a request for the handler marks it busy; a version asked for starts its build. */
  idle?: IdleWork;
  log: Log;
}

/** The HTTP server (not yet listening). */
export function createLocalHttpServer(deps: LocalHttpDeps): http.Server {
  const { log } = deps;
  const server = http.createServer((req, res) => {
    // Every answer carries x-request-id and Server-Timing, those made here as well as the handler's.
    const x: Exchange = { req, res, requestId: randomUUID(), timer: new PhaseTimer(), arrived: performance.now() };
    handle(deps, x).catch((err) => {
      log.error('local server failure', { requestId: x.requestId, ...errorFields(err) });
      if (!res.headersSent) sendJson(x, 500, toErrorBody(new InternalError(err), x.requestId));
      else res.destroy();
    });
  });
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  // `Expect: 100-continue` (curl sends it for large bodies): the client is asked for the body only
  // when it will be read, so a refused upload is answered before it is sent.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    readsBody(deps.keys, req)
      .then((reads) => reads && !(Number(req.headers['content-length']) > MAX_REQUEST_BODY_BYTES))
      .catch(() => false) // a key store that throws: handle() answers the 500
      .then((proceed) => {
        if (proceed) res.writeContinue();
        server.emit('request', req, res);
      });
  });
  return server;
}

/** Only a POST with a valid key has its body read (up to the cap). */
async function readsBody(keys: KeyStore, req: http.IncomingMessage): Promise<boolean> {
  return req.method === 'POST' && !(await bearerRejection(keys, req.headers.authorization));
}

/** A request in flight: its answer, its id and its phase timer (every answer carries both). */
interface Exchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  requestId: string;
  timer: PhaseTimer;
  /** When the request arrived (performance.now()). */
  arrived: number;
}

async function handle(deps: LocalHttpDeps, x: Exchange): Promise<void> {
  const { req, requestId } = x;
  const path = (req.url ?? '/').split('?')[0];
  if ((req.method === 'GET' || req.method === 'HEAD') && path.startsWith('/assets/')) {
    const source = deps.assets && { store: deps.assets, pending: deps.idle && ((digest: string) => deps.idle?.want(digest)) };
    const asset = await assetAnswer(source, req.method, path, req.headers['if-none-match']);
    if (asset) send(x, asset);
    else sendJson(x, 404, toErrorBody(new LinkPreviewError(404, 'NOT_FOUND', 'No such asset.'), requestId));
    return;
  }
  // A request for the handler in flight (a preview, GET /oembed's too): nothing parked starts meanwhile.
  const ended = deps.idle?.busy();
  try {
    await answer(deps, x, path);
  } finally {
    ended?.();
  }
}

/** Everything but /assets/: the handler's answer. */
async function answer(deps: LocalHttpDeps, x: Exchange, path: string): Promise<void> {
  const { req, requestId } = x;
  // The key before the body: only a POST with a valid key has its body read (up to the cap).
  // Anything else reaches the handler with no body, which answers it (401, 404, 405, /status)
  // without it; an unread body is never drained, the connection is closed after the answer.
  let body: Buffer = Buffer.alloc(0);
  if (await readsBody(deps.keys, req)) {
    const read = await readBody(req, MAX_REQUEST_BODY_BYTES);
    if (read === null) {
      const err = new LinkPreviewError(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes.`);
      deps.log.info('request rejected', { requestId, status: 413, errorCode: err.errorCode });
      sendJson(x, 413, toErrorBody(err, requestId));
      return;
    }
    body = read;
  }
  // API Gateway's 29 s limit, counted from the request's arrival (the body's read and the queue
  // included): the request's time budget (LINKPREVIEW_REQUEST_BUDGET_MS) is cut to it, as in the Lambda.
  const context = {
    awsRequestId: requestId,
    functionName: 'linklens-local',
    getRemainingTimeInMillis: () => API_GATEWAY_LIMIT_MS - (performance.now() - x.arrived),
  };
  const out = (await deps.handler(httpApiEvent(req, path, body, requestId), context)) as HttpResponse;
  send(x, { status: out.statusCode, headers: out.headers, body: out.isBase64Encoded ? Buffer.from(out.body, 'base64') : out.body });
}

/** The API Gateway HTTP API (v2) event of a request, as the Lambda would get it. */
function httpApiEvent(req: http.IncomingMessage, path: string, body: Buffer, requestId: string): Record<string, unknown> {
  const headers = flatHeaders(req.headers);
  const rawQuery = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?') + 1) : '';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: rawQuery,
    headers,
    requestContext: {
      http: {
        method: req.method ?? 'GET',
        path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      stage: '$default',
      timeEpoch: Date.now(),
    },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}

/**
 * The request body, or null as soon as it passes `limit` bytes (a Content-Length over it is
 * refused before a byte is read): reading stops there, the rest is never drained.
 */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= limit) {
        chunks.push(c);
        return;
      }
      req.off('data', onData);
      req.pause();
      chunks.length = 0;
      resolve(null);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Writes an answer with the headers every response carries (x-request-id, Server-Timing) when it
 * lacks them. When the request body was not read to its end (a refused or oversized upload), the
 * answer says `connection: close` and the connection is closed after it: the body is not drained.
 */
function send(x: Exchange, answer: { status: number; headers: Record<string, string>; body?: string | Buffer }): void {
  const { req, res, requestId, timer } = x;
  const { status, headers, body } = answer;
  const out: Record<string, string> = { ...headers };
  if (!out['x-request-id']) out['x-request-id'] = requestId;
  if (!out['server-timing']) out['server-timing'] = timer.header([]);
  const unread = !req.complete;
  if (unread) out.connection = 'close';
  res.writeHead(status, out);
  res.end(body);
  // With `connection: close`, node shuts the socket down once the answer is written and reads on
  // only until then; a client that keeps sending after that is cut off.
  if (unread)
    res.once('finish', () => {
      setTimeout(() => req.socket.destroy(), 1000).unref();
    });
}

function sendJson(x: Exchange, status: number, body: unknown): void {
  send(x, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
    body: JSON.stringify(body),
  });
}
