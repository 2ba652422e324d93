/**
 * The local composition root: the ports of the local server (`npm start`) and the CLI, with the
 * embedded defaults (assets on the local disk, jobs in-process), and the fetcher the
 * configuration describes. The Lambdas' ports are built in functions/aws-deps.ts, the AWS
 * composition root; both plug adapters into the same ports (lib/ports.ts), and that is all the
 * local server and the Lambdas differ in.
 */

import { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import { InlineJobRunner } from '../lib/adapters/local/inline-job-runner.js';
import { createKeyStore } from '../lib/auth/key-store.js';
import type { BatchBlobs } from '../lib/batch/store.js';
import { browserLanes } from '../lib/browser/lanes.js';
import { setPageDemand } from '../lib/browser/page-lanes.js';
import type { Config } from '../lib/config.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { proxyPolicyFrom } from '../lib/fetch/proxy-route.js';
import type { ProxyEndpoint } from '../lib/fetch/proxy-url.js';
import { fetcherFromConfig } from '../lib/fetch/safe-fetch.js';
import type { Fetcher } from '../lib/fetch/types.js';
import { blobWallMemo } from '../lib/fetch/wall-memo.js';
import type { HandlerDeps } from '../lib/http/preview-handler.js';
import type { IdleWork } from '../lib/jobs/idle-work.js';
import { errorFields, type Log } from '../lib/log.js';
import type { BlobStore, JobRunner } from '../lib/ports.js';

export interface LocalDepsOptions {
  config: Config;
  log: Log;
  /** The base URL assets are served under (the local server's own address unless LINKPREVIEW_PUBLIC_URL is set). */
  baseUrl: () => string;
  /** Tests can map names to addresses without touching DNS. */
  resolver?: Resolver;
  /** Replaces the fetcher built from config (tests: a closed guard with one trusted fixture address). */
  fetch?: Fetcher;
  blobs?: BatchBlobs;
  jobs?: JobRunner;
  /** The local server's: the page versions' builds wait here until it is idle (lib/jobs/idle-work.ts). */
  idle?: IdleWork;
  /** The local server's: the disk store writes behind its puts (FsBlobStoreOptions.writeBehind). */
  writeBehind?: boolean;
}

/**
 * The fetcher the configuration describes. With `blobs`, its proxy route (LINKPREVIEW_PROXY_*)
 * remembers walled hosts there; `proxyEndpoint` is where the proxy URL comes from when not from
 * LINKPREVIEW_PROXY_URL (the AWS adapters: a secret or a parameter).
 */
export function buildFetcher(
  config: Config,
  options: { resolver?: Resolver; log?: Log; blobs?: BlobStore; proxyEndpoint?: () => Promise<ProxyEndpoint | undefined> } = {},
): Fetcher {
  const { resolver, log, blobs, proxyEndpoint } = options;
  const memo = blobs ? blobWallMemo(blobs, config.proxyMemoTtlMs) : undefined;
  return fetcherFromConfig(config, resolver, log, proxyPolicyFrom(config, { memo, endpoint: proxyEndpoint }));
}

/** The embedded defaults: assets on the local disk, jobs in-process. */
export function buildLocalDeps(options: LocalDepsOptions): HandlerDeps & { blobs: BatchBlobs } {
  const { config, log } = options;
  const blobs =
    options.blobs ??
    new FsBlobStore(config.dataDir, () => config.publicUrl || options.baseUrl(), {
      writeBehind: options.writeBehind,
      onWriteError: (key, err) => log.error('asset write failed', { key, ...errorFields(err) }),
    });
  const fetch = options.fetch ?? buildFetcher(config, { resolver: options.resolver, log, blobs });
  let jobs = options.jobs;
  if (!jobs) {
    const runner = new InlineJobRunner({ fetch, blobs, config, idle: options.idle }, config.jobConcurrency, { browser: browserLanes(config) });
    // The process's one browser: a page that has had its share of the CPU gives its lane to a browser job waiting for one.
    setPageDemand(() => runner.waiting('browser'));
    jobs = runner;
  }
  return { config, log, fetch, blobs, jobs, keys: createKeyStore(config) };
}
