/**
 * The local server: a thin node:http adapter. It turns each HTTP request into the API Gateway
 * HTTP API (v2) event the Lambda gets and calls the same handler (functions/local-http.ts), and it
 * serves stored assets under /assets/ (functions/local-assets.ts). Start it with `npm start`
 * (functions/start-local.ts).
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import { browserAvailable } from '../lib/browser/availability.js';
import { closeBrowser } from '../lib/browser/browser.js';
import { type Config, loadConfig } from '../lib/config.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { createApiHandler } from '../lib/http/api-handler.js';
import { PreviewGate } from '../lib/http/overload.js';
import type { HandlerDeps } from '../lib/http/preview-handler.js';
import { IdleWork } from '../lib/jobs/idle-work.js';
import { createConsoleLogger, type Log } from '../lib/log.js';
import { type LocalBatches, localBatches } from './local-batches.js';
import { createLocalHttpServer } from './local-http.js';
import { buildLocalDeps } from './wiring.js';

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
  /** POST /previews: the batches' deps and queues (functions/local-batches.ts). */
  batches: LocalBatches;
  server: http.Server;
  close(): Promise<void>;
}

/** Pages whose content waits for the server to be idle, at most (LINKPREVIEW_CONTENT_IDLE_MS's doc says so). */
const MAX_PARKED = 256;
/** What they hold at most: a sixteenth of the memory the process may use, 256 MB at most (the same doc). */
function maxParkedBytes(): number {
  const memory = process.constrainedMemory?.() || os.totalmem();
  return Math.min(256 * 1024 * 1024, Math.floor(memory / 16));
}
/** How long a stopping server makes the content still waiting (the same doc). */
const STOP_BUILDS_MS = 5000;

export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  const { config, keyGenerated } = localConfig(options);
  const log = options.log ?? createConsoleLogger(config.logLevel);
  let url = '';
  // The page's content waits until the server is idle (LINKPREVIEW_CONTENT_IDLE_MS), and the disk store writes behind.
  const idle = config.contentIdleMs > 0 ? new IdleWork({ idleMs: config.contentIdleMs, maxParked: MAX_PARKED, maxBytes: maxParkedBytes() }) : undefined;
  const deps = buildLocalDeps({ config, log, baseUrl: () => url, resolver: options.resolver, idle, writeBehind: true });
  const gate = new PreviewGate(config.maxConcurrentPreviews, config.maxQueuedPreviews);
  // A batch item starts while no POST / is in flight (functions/local-batches.ts `afterCallers`).
  const batches = await localBatches({
    config,
    log,
    blobs: deps.blobs,
    fetch: deps.fetch,
    resolver: options.resolver,
    busy: () => gate.inFlight > 0,
    inFlight: idle && (() => idle.busy()),
  });
  const handler = createApiHandler({ ...deps, status: localStatusDeps(config), gate, batches: batches.deps });
  noteMissingBrowser(config, log);
  const store = deps.blobs instanceof FsBlobStore ? deps.blobs : undefined;
  const server = createLocalHttpServer({ handler, keys: deps.keys, assets: store, idle, log });
  url = await listen(server, options.host ?? config.host, options.port ?? config.port);
  // Once the server's address is known (the records' asset URLs): with what a previous run left queued.
  await batches.start(handler);
  return {
    url,
    apiKey: config.apiKeys[0] ?? '',
    keyGenerated,
    deps,
    batches,
    server,
    // Stopping: the batches' queues stop handing out (what is left stays in the data dir for the next start),
    // the builds still waiting get STOP_BUILDS_MS, then every write still behind is finished.
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })
        .then(() => batches.close())
        .then(() => idle?.drain(STOP_BUILDS_MS))
        .then(() => store?.flush())
        .then(() => closeBrowser()),
  };
}

/** The configuration from env and the overrides; with no key configured at all, one generated for this run. */
function localConfig(options: Pick<LocalServerOptions, 'env' | 'config'>): { config: Config; keyGenerated: boolean } {
  const base = loadConfig(options.env ?? process.env);
  let apiKeys = options.config?.apiKeys ?? base.apiKeys;
  const keyGenerated = apiKeys.length === 0 && base.apiKeyHashes.length === 0;
  if (keyGenerated) apiKeys = [randomBytes(24).toString('base64url')];
  return { config: { ...base, ...options.config, apiKeys }, keyGenerated };
}

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

/** Screenshots: one line at start-up when they cannot be taken. */
function noteMissingBrowser(config: Config, log: Log): void {
  if (config.screenshots === 'off' || browserAvailable(config)) return;
  const line = `no browser at ${config.browserPath}: records have no page screenshot (install chromium or set LINKPREVIEW_BROWSER_PATH; LINKPREVIEW_SCREENSHOTS=off silences this)`;
  if (config.screenshots === 'on') log.warn(line);
  else log.info(line);
}

/** Listens on host:port; the server's URL (a wildcard host is reached on 127.0.0.1). */
async function listen(server: http.Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${urlHost}:${addr.port}`;
}
