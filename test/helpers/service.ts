/**
 * The service under test: the real handler with the local adapters, the SSRF guard opened for
 * loopback explicitly (allowPrivateNetworks), a silent logger and a temporary data dir.
 *
 * Every HTTP answer the helpers see (invoke, post, and every answer of a startTestServer
 * server) is checked against openapi.yaml (assertExchange): the operation, the status, the
 * content type, the headers and the body, and an accepted JSON request body. A direct
 * invocation's record or error body is validated against its schema.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type LocalServer, startLocalServer } from '../../functions/local-server';
import { buildLocalDeps } from '../../functions/wiring';
import { type Config, loadConfig } from '../../lib/config';
import type { Resolver } from '../../lib/fetch/address-guard';
import { createFetcher, type FetcherDeps } from '../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../lib/fetch/types';
import { createApiHandler } from '../../lib/http/api-handler';
import { decodeBodyText, parseContentType } from '../../lib/http/body';
import { describeRequest } from '../../lib/http/event';
import type { HandlerDeps, HttpResponse } from '../../lib/http/preview-handler';
import type { Log } from '../../lib/log';
import type { PlatformRegistry } from '../../lib/platforms/registry';
import { assertConforms, assertExchange, type Exchange, exchangeErrors, isAssetPath } from './conformance';

export const TEST_KEY = 'test-key-0123456789';

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that records every line, for tests that check what is (not) logged. */
export function recordingLog(): Log & { lines: { level: string; message: string; extra?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; extra?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, extra?: Record<string, unknown>) => {
    lines.push({ level, message, extra });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * The guard closed as in production, with one address trusted in code: the loopback fixture at
 * 127.0.0.1 plays a public host. `hosts` maps test names to addresses (anything else: ENOTFOUND);
 * `ports` are the fixtures' ports, allowed so that a refusal can only come from the address.
 * `extra`: more of the fetcher's deps (its proxy route, its log).
 */
export function closedGuardFetcher(
  ports: number[],
  hosts: Record<string, string> | ((host: string) => string | undefined) = { 'public.test': '127.0.0.1' },
  extra: Partial<FetcherDeps> = {},
): Fetcher {
  const addressOf = typeof hosts === 'function' ? hosts : (host: string) => hosts[host];
  return createFetcher({
    allowPrivateNetworks: false,
    allowedPorts: ports,
    trustedAddresses: ['127.0.0.1'],
    userAgent: 'linklens-test',
    maxRedirects: 5,
    resolver: async (host) => {
      const address = addressOf(host);
      if (address) return [{ address, family: address.includes(':') ? 6 : 4 }];
      throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
    ...extra,
  });
}

export function testConfig(overrides: Partial<Config> = {}): Config & { cleanup(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-test-'));
  const config = {
    ...loadConfig({}),
    apiKeys: [TEST_KEY],
    allowPrivateNetworks: true,
    dataDir,
    fetchTimeoutMs: 3000,
    jobWaitMs: 8000,
    // No headless browser in every test that previews a page; test/page turns screenshots and renders on.
    screenshots: 'off' as const,
    render: 'off' as const,
    ...overrides,
  };
  return { ...config, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

export interface TestHandler {
  deps: HandlerDeps;
  config: Config;
  invoke(event: unknown): Promise<unknown>;
  /** An HTTP API v2 event for POST / with the given body and headers. */
  post(body: string | Buffer, headers?: Record<string, string>): Promise<HttpResponse & { json: any }>;
  cleanup(): void;
}

/** `platforms`: a registry of the test's own (an extra platform), used instead of the service's. */
export function createTestHandler(
  options: { config?: Partial<Config>; resolver?: Resolver; log?: Log; fetch?: Fetcher; platforms?: PlatformRegistry } = {},
): TestHandler {
  const config = testConfig(options.config);
  const deps = {
    ...buildLocalDeps({ config, log: options.log ?? silentLog, baseUrl: () => 'http://assets.test', resolver: options.resolver, fetch: options.fetch }),
    ...(options.platforms ? { platforms: options.platforms } : {}),
  };
  const handler = createApiHandler(deps);
  return {
    deps,
    config,
    async invoke(event) {
      const out = await handler(event, { awsRequestId: 'lambda-req-1' });
      const info = describeRequest(event);
      if (info.kind === 'direct') {
        assertConforms(out); // the record or the error body itself
        return out;
      }
      const e = event as { body?: unknown; isBase64Encoded?: unknown; requestContext?: { stage?: unknown } };
      const raw = typeof e.body === 'string' ? (e.isBase64Encoded === true ? Buffer.from(e.body, 'base64') : Buffer.from(e.body)) : Buffer.alloc(0);
      const stage = typeof e.requestContext?.stage === 'string' && e.requestContext.stage !== '$default' ? e.requestContext.stage : undefined;
      assertExchange(lambdaExchange(info.method, info.path, stage, out as HttpResponse, info.headers['content-type'], raw));
      return out;
    },
    async post(body, headers = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
      const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...headers }, bytes);
      const out = (await handler(event, { awsRequestId: 'lambda-req-1' })) as HttpResponse;
      assertExchange(lambdaExchange('POST', '/', undefined, out, event.headers['content-type'], bytes));
      let json: unknown;
      try {
        json = JSON.parse(out.body);
      } catch {
        json = undefined;
      }
      return { ...out, json };
    },
    cleanup: () => config.cleanup(),
  };
}

export function httpApiEvent(headers: Record<string, string>, body: Buffer, method = 'POST', rawPath = '/') {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers,
    requestContext: {
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: 'apigw-req-1',
      stage: '$default',
      timeEpoch: Date.now(),
    },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}

/** An answer of the API handler as an Exchange; the request body is decoded as the handler decodes it. */
function lambdaExchange(method: string, path: string, stage: string | undefined, out: HttpResponse, contentType: string | undefined, body: Buffer): Exchange {
  let request: Exchange['request'];
  try {
    const ct = parseContentType(contentType);
    if (ct.kind === 'json') request = { contentType, body: decodeBodyText(body.toString('base64'), true, ct.charset) };
  } catch {
    /* a content type the service refuses: nothing was accepted */
  }
  return {
    method,
    path,
    stage,
    status: out.statusCode,
    headers: out.headers ?? {},
    body: out.isBase64Encoded ? Buffer.from(out.body, 'base64') : out.body,
    request,
  };
}

/**
 * Records every answer of a node:http server: the status, headers and body as written, checked
 * against openapi.yaml (exchangeErrors) when the answer is ended. Assets (`/assets/...`) are
 * blob URLs inside records, not operations of the API, and are left out.
 */
function observeAnswers(server: http.Server, violations: string[]): void {
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (isAssetPath(path)) return;
    let written: Record<string, string | number | string[] | undefined> = {};
    const writeHead = res.writeHead;
    res.writeHead = function (this: http.ServerResponse, ...args: unknown[]) {
      const headers = args.find((a) => a !== null && typeof a === 'object' && !Array.isArray(a));
      if (headers) written = { ...(headers as Record<string, string>) };
      return (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    const end = res.end;
    res.end = function (this: http.ServerResponse, ...args: unknown[]) {
      const chunk = typeof args[0] === 'function' ? undefined : (args[0] as string | Buffer | undefined);
      const headers: Exchange['headers'] = {};
      for (const [k, v] of Object.entries({ ...res.getHeaders(), ...written })) headers[k.toLowerCase()] = v as string;
      const errors = exchangeErrors({ method: req.method ?? 'GET', path, status: res.statusCode, headers, body: req.method === 'HEAD' ? undefined : chunk });
      violations.push(...errors);
      return (end as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    } as typeof res.end;
  });
}

/**
 * The real local server on a free loopback port, with the guard opened for loopback. Its
 * answers are checked against openapi.yaml; close() fails when one did not match.
 */
/** POST / of `link` to a local server (startTestServer's): 200, and the record, checked against the OpenAPI document. */
export async function previewOn(server: { url: string; apiKey: string }, link: string): Promise<any> {
  const res = await fetch(`${server.url}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  });
  expect(res.status).toBe(200);
  const record = await res.json();
  assertConforms(record);
  return record;
}

export async function startTestServer(config: Partial<Config> = {}, resolver?: Resolver): Promise<LocalServer & { cleanup(): void }> {
  const c = testConfig(config);
  const server = await startLocalServer({ host: '127.0.0.1', port: 0, env: {}, config: c, log: silentLog, resolver });
  const violations: string[] = [];
  observeAnswers(server.server, violations);
  return {
    ...server,
    close: async () => {
      await server.close();
      if (violations.length) throw new Error(`Answers of the local server do not match openapi.yaml:\n${violations.join('\n')}`);
    },
    cleanup: () => c.cleanup(),
  };
}
