/**
 * The local server: a thin node:http adapter. It turns each HTTP request into the API Gateway
 * HTTP API (v2) event the Lambda gets and calls the same handler, and it serves stored assets
 * under /assets/. Start it with `npm start` (functions/start-local.ts).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../lib/config.js';
import { bearerRejection } from '../lib/auth/key-store.js';
import { InternalError, LinkPreviewError, toErrorBody } from '../lib/errors.js';
import { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import type { HandlerDeps, HttpResponse } from '../lib/http/preview-handler.js';
import { createApiHandler } from '../lib/http/api-handler.js';
import { ConcurrencyGate } from '../lib/http/overload.js';
import { createConsoleLogger, errorFields, type Log } from '../lib/log.js';
import { PhaseTimer } from '../lib/timing.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { browserAvailable } from '../lib/browser/availability.js';
import { flatHeaders } from '../lib/fetch/headers.js';
import { closeBrowser } from '../lib/browser/browser.js';
import { buildLocalDeps } from './wiring.js';

const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** Optional binaries /status reports on, as found on this machine. */
function localStatusDeps(config: Pick<Config, 'browserPath'>): { ffprobePath?: string; browserPath?: string } {
  let ffprobePath: string | undefined;
  try {
    ffprobePath = (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  } catch {
    ffprobePath = undefined;
  }
  return { ffprobePath, browserPath: config.browserPath };
}


export interface LocalServerOptions {
  /** Over HOST from `env`. */
  host?: string;
  /** Over PORT from `env`. */
  port?: number;
  /** The environment the configuration is read from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Overrides applied on top of the configuration read from env (tests). */
  config?: Partial<Config>;
  log?: Log;
  resolver?: Resolver;
}

export interface LocalServer {
  url: string;
  /** The key to use: the configured first key, or the one generated at start. */
  apiKey: string;
  keyGenerated: boolean;
  deps: HandlerDeps;
  server: http.Server;
  close(): Promise<void>;
}

export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  const base = loadConfig(options.env ?? process.env);
  let keyGenerated = false;
  let apiKeys = options.config?.apiKeys ?? base.apiKeys;
  if (apiKeys.length === 0 && base.apiKeyHashes.length === 0) {
    apiKeys = [randomBytes(24).toString('base64url')];
    keyGenerated = true;
  }
  const config: Config = { ...base, ...options.config, apiKeys };
  const log = options.log ?? createConsoleLogger(config.logLevel);
  const host = options.host ?? config.host;
  const port = options.port ?? config.port;

  let url = '';
  const deps = buildLocalDeps({ config, log, baseUrl: () => url, resolver: options.resolver });
  const gate = new ConcurrencyGate(config.maxConcurrentPreviews, config.maxQueuedPreviews);
  const handler = createApiHandler({ ...deps, status: localStatusDeps(config), gate });
  // Screenshots: one line at start-up when they cannot be taken.
  if (config.screenshots !== 'off' && !browserAvailable(config)) {
    const line = `no browser at ${config.browserPath}: records have no page screenshot (install chromium or set LINKPREVIEW_BROWSER_PATH; LINKPREVIEW_SCREENSHOTS=off silences this)`;
    if (config.screenshots === 'on') log.warn(line);
    else log.info(line);
  }
  const assets = deps.blobs instanceof FsBlobStore ? deps.blobs : undefined;

  const server = http.createServer((req, res) => {
    // Every answer carries x-request-id and Server-Timing, those made here as well as the handler's.
    const requestId = randomUUID();
    const timer = new PhaseTimer();
    handle(req, res, requestId, timer).catch((err) => {
      log.error('local server failure', { requestId, ...errorFields(err) });
      if (!res.headersSent) sendJson(req, res, 500, toErrorBody(new InternalError(err), requestId), requestId, timer);
      else res.destroy();
    });
  });
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  // `Expect: 100-continue` (curl sends it for large bodies): the client is asked for the body only
  // when it will be read, so a refused upload is answered before it is sent.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    readsBody(req)
      .then((reads) => reads && !(Number(req.headers['content-length']) > MAX_REQUEST_BODY_BYTES))
      .catch(() => false) // a key store that throws: handle() answers the 500
      .then((proceed) => {
        if (proceed) res.writeContinue();
        server.emit('request', req, res);
      });
  });

  /** Only a POST with a valid key has its body read (up to the cap). */
  async function readsBody(req: http.IncomingMessage): Promise<boolean> {
    return req.method === 'POST' && !(await bearerRejection(deps.keys, req.headers.authorization));
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, requestId: string, timer: PhaseTimer): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path.startsWith('/assets/')) {
      await serveAsset(req, res, path, requestId, timer);
      return;
    }
    // The key before the body: only a POST with a valid key has its body read (up to the cap).
    // Anything else reaches the handler with no body, which answers it (401, 404, 405, /status)
    // without it; an unread body is never drained, the connection is closed after the answer.
    let body: Buffer = Buffer.alloc(0);
    if (await readsBody(req)) {
      const read = await readBody(req, MAX_REQUEST_BODY_BYTES);
      if (read === null) {
        const err = new LinkPreviewError(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes.`);
        log.info('request rejected', { requestId, status: 413, errorCode: err.errorCode });
        sendJson(req, res, 413, toErrorBody(err, requestId), requestId, timer);
        return;
      }
      body = read;
    }
    const headers = flatHeaders(req.headers);
    const rawQuery = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?') + 1) : '';
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: path,
      rawQueryString: rawQuery,
      headers,
      requestContext: {
        http: { method: req.method ?? 'GET', path, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
        requestId,
        stage: '$default',
        timeEpoch: Date.now(),
      },
      body: body.toString('base64'),
      isBase64Encoded: true,
    };
    // API Gateway's 29 s limit: the request's time budget (LINKPREVIEW_JOB_DEADLINE_MS) is cut to it, as in the Lambda.
    const context = { awsRequestId: requestId, functionName: 'linklens-local', getRemainingTimeInMillis: () => 29_000 };
    const out = (await handler(event, context)) as HttpResponse;
    send(req, res, out.statusCode, out.headers, out.isBase64Encoded ? Buffer.from(out.body, 'base64') : out.body, requestId, timer);
  }

  async function serveAsset(req: http.IncomingMessage, res: http.ServerResponse, path: string, requestId: string, timer: PhaseTimer): Promise<void> {
    const key = assetKey(path);
    // A key that is not a regular file (a directory, nothing), or that went between has() and get(), is 404.
    const bytes = assets && key && (await assets.has(key).catch(() => false)) ? await assets.get(key).catch(() => undefined) : undefined;
    if (!assets || !key || bytes === undefined) {
      sendJson(req, res, 404, toErrorBody(new LinkPreviewError(404, 'NOT_FOUND', 'No such asset.'), requestId), requestId, timer);
      return;
    }
    const meta = await assets.meta(key);
    const etag = `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
    const headers = {
      'content-type': meta.contentType ?? 'application/octet-stream',
      'cache-control': meta.cacheControl ?? 'public, max-age=31536000, immutable',
      etag,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
    };
    if (req.headers['if-none-match'] === etag) {
      send(req, res, 304, headers, undefined, requestId, timer);
      return;
    }
    send(req, res, 200, { ...headers, 'content-length': String(bytes.length) }, req.method === 'HEAD' ? undefined : bytes, requestId, timer);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  url = `http://${urlHost}:${addr.port}`;

  return {
    url,
    apiKey: apiKeys[0] ?? '',
    keyGenerated,
    deps,
    server,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }).then(() => closeBrowser()),
  };
}

/**
 * The blob key an /assets/ path names, or undefined when it names none that may be served. The
 * path is normalised first: each segment percent-decoded once, and a segment that is empty
 * (`//`, a trailing `/`), `.` or `..`, or that holds `/`, `\`, `:` or a control character once
 * decoded, or ends in `.` or a space (names Windows would trim), names nothing. Only then are
 * the store's own files refused: `<key>.meta.json` (any case) and the `.tmp` files of a put.
 */
function assetKey(path: string): string | undefined {
  const segments = path.replace(/^\//, '').split('/');
  if (segments[0] !== 'assets' || segments.length < 2) return undefined;
  const decoded: string[] = [];
  for (const raw of segments) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..' || /[/\\:\x00-\x1f\x7f]/.test(segment) || /[. ]$/.test(segment)) return undefined;
    decoded.push(segment);
  }
  const key = decoded.join('/');
  if (/\.meta\.json$/i.test(key) || /\.tmp$/i.test(key)) return undefined;
  return key;
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
      if (size <= limit) { chunks.push(c); return; }
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
function send(req: http.IncomingMessage, res: http.ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer | undefined, requestId: string, timer: PhaseTimer): void {
  const out: Record<string, string> = { ...headers };
  if (!out['x-request-id']) out['x-request-id'] = requestId;
  if (!out['server-timing']) out['server-timing'] = timer.header([]);
  const unread = !req.complete;
  if (unread) out.connection = 'close';
  res.writeHead(status, out);
  res.end(body);
  // With `connection: close`, node shuts the socket down once the answer is written and reads on
  // only until then; a client that keeps sending after that is cut off.
  if (unread) res.once('finish', () => { setTimeout(() => req.socket.destroy(), 1000).unref(); });
}

function sendJson(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: unknown, requestId: string, timer: PhaseTimer): void {
  send(req, res, status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }, JSON.stringify(body), requestId, timer);
}
