/**
 * The service under test: the real handler with the local adapters, the SSRF guard opened for
 * loopback explicitly (allowPrivateNetworks), a silent logger and a temporary data dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../lib/config';
import type { HandlerDeps, HttpResponse } from '../../lib/http/preview-handler';
import { createApiHandler } from '../../lib/http/api-handler';
import type { Log } from '../../lib/log';
import type { Resolver } from '../../lib/fetch/address-guard';
import type { Fetcher } from '../../lib/fetch/safe-fetch';
import { buildLocalDeps } from '../../functions/wiring';
import { startLocalServer, type LocalServer } from '../../functions/local-server';
import { assertConforms } from './conformance';

export const TEST_KEY = 'test-key-0123456789';

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that records every line, for tests that check what is (not) logged. */
export function recordingLog(): Log & { lines: { level: string; message: string; extra?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; extra?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, extra?: Record<string, unknown>) => { lines.push({ level, message, extra }); };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function testConfig(overrides: Partial<Config> = {}): Config & { cleanup(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-test-'));
  const config = {
    ...loadConfig({}),
    apiKeys: [TEST_KEY],
    allowPrivateNetworks: true,
    dataDir,
    fetchTimeoutMs: 3000,
    recordDeadlineMs: 8000,
    // No headless browser in every test that previews a page; test/page turns screenshots on.
    screenshots: 'off' as const,
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

export function createTestHandler(options: { config?: Partial<Config>; resolver?: Resolver; log?: Log; fetch?: Fetcher } = {}): TestHandler {
  const config = testConfig(options.config);
  const deps = buildLocalDeps({ config, log: options.log ?? silentLog, baseUrl: () => 'http://assets.test', resolver: options.resolver, fetch: options.fetch });
  const handler = createApiHandler(deps);
  return {
    deps,
    config,
    async invoke(event) {
      const out = await handler(event, { awsRequestId: 'lambda-req-1' });
      const r = out as Partial<HttpResponse>;
      const path = (event as { rawPath?: string; path?: string })?.rawPath ?? (event as { path?: string })?.path ?? '/';
      if (path !== '/') return out; // /status and /openapi.json have their own schemas
      if (typeof r?.statusCode === 'number') {
        if (r.headers?.['content-type']?.startsWith('application/json')) assertConforms(JSON.parse(r.body!));
      } else {
        assertConforms(out);
      }
      return out;
    },
    async post(body, headers = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
      const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...headers }, bytes);
      const out = (await handler(event, { awsRequestId: 'lambda-req-1' })) as HttpResponse;
      let json: unknown;
      try { json = JSON.parse(out.body); } catch { json = undefined; }
      if (json !== undefined) assertConforms(json);
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
    requestContext: { http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' }, requestId: 'apigw-req-1', stage: '$default', timeEpoch: Date.now() },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}

/** The real local server on a free loopback port, with the guard opened for loopback. */
export async function startTestServer(config: Partial<Config> = {}, resolver?: Resolver): Promise<LocalServer & { cleanup(): void }> {
  const c = testConfig(config);
  const server = await startLocalServer({ host: '127.0.0.1', port: 0, env: {}, config: c, log: silentLog, resolver });
  return { ...server, cleanup: () => c.cleanup() };
}
