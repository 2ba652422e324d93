/**
 * The local server: a thin node:http adapter. It turns each HTTP request into the API Gateway
 * HTTP API (v2) event the Lambda gets and calls the same handler, and it serves stored assets
 * under /assets/. Start it with `npm start` (functions/start-local.ts).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../lib/config.js';
import { LinkPreviewError, toErrorBody } from '../lib/errors.js';
import { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import type { HandlerDeps, HttpResponse } from '../lib/http/preview-handler.js';
import { createApiHandler } from '../lib/http/api-handler.js';
import { ConcurrencyGate } from '../lib/http/overload.js';
import { createConsoleLogger, type Log } from '../lib/log.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { browserAvailable } from '../lib/browser/availability.js';
import { closeBrowser } from '../lib/browser/browser.js';
import { buildLocalDeps } from './wiring.js';

export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** Optional binaries /status reports on, as found on this machine. */
export function localStatusDeps(config?: Pick<Config, 'browserPath'>): { ffprobePath?: string; browserPath?: string } {
  let ffprobePath: string | undefined;
  try {
    ffprobePath = (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  } catch {
    ffprobePath = undefined;
  }
  return { ffprobePath, browserPath: config?.browserPath ?? loadConfig(process.env).browserPath };
}


export interface LocalServerOptions {
  host?: string;
  port?: number;
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
  const env = options.env ?? process.env;
  const base = loadConfig(env);
  let keyGenerated = false;
  let apiKeys = options.config?.apiKeys ?? base.apiKeys;
  if (apiKeys.length === 0 && base.apiKeyHashes.length === 0) {
    apiKeys = [randomBytes(24).toString('base64url')];
    keyGenerated = true;
  }
  const config: Config = { ...base, ...options.config, apiKeys };
  const log = options.log ?? createConsoleLogger(config.logLevel);
  const host = options.host ?? env.HOST ?? '127.0.0.1';
  const port = options.port ?? Number(env.PORT ?? 3000);

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
    handle(req, res).catch((err) => {
      log.error('local server failure', { error: (err as Error).stack });
      if (!res.headersSent) sendJson(res, 500, toErrorBody(new LinkPreviewError(500, 'INTERNAL_ERROR', 'An unexpected error occurred.')));
      else res.destroy();
    });
  });
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path.startsWith('/assets/')) {
      await serveAsset(req, res, path);
      return;
    }
    const body = await readBody(req);
    if (body === null) {
      sendJson(res, 413, toErrorBody(new LinkPreviewError(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes.`)));
      return;
    }
    const requestId = randomUUID();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
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
    res.writeHead(out.statusCode, out.headers);
    res.end(out.isBase64Encoded ? Buffer.from(out.body, 'base64') : out.body);
  }

  async function serveAsset(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    let key: string;
    try {
      key = path.slice(1).split('/').map(decodeURIComponent).join('/');
    } catch {
      key = '';
    }
    if (!assets || !key || key.includes('..') || key.endsWith('.meta.json') || !(await assets.has(key).catch(() => false))) {
      sendJson(res, 404, toErrorBody(new LinkPreviewError(404, 'NOT_FOUND', 'No such asset.')));
      return;
    }
    const bytes = (await assets.get(key))!;
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
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
    res.end(req.method === 'HEAD' ? undefined : bytes);
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

function readBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BODY_BYTES) { tooLarge = true; chunks.length = 0; return; }
      if (!tooLarge) chunks.push(c);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
