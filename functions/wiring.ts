/**
 * Composition root: builds the ports for a given configuration. The local server and the
 * Lambdas differ only here, in which adapters they plug in.
 */

import { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import { InlineJobRunner } from '../lib/adapters/local/inline-job-runner.js';
import { createKeyStore } from '../lib/auth/key-store.js';
import type { Config } from '../lib/config.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { type Fetcher, fetcherFromConfig } from '../lib/fetch/safe-fetch.js';
import type { HandlerDeps } from '../lib/http/preview-handler.js';
import type { Log } from '../lib/log.js';
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
  blobs?: BlobStore;
  jobs?: JobRunner;
}

export const buildFetcher = (config: Config, resolver?: Resolver, log?: Log): Fetcher => fetcherFromConfig(config, resolver, log);

/** The embedded defaults: assets on the local disk, jobs in-process. */
export function buildLocalDeps(options: LocalDepsOptions): HandlerDeps & { blobs: BlobStore } {
  const { config, log } = options;
  const fetch = options.fetch ?? buildFetcher(config, options.resolver, log);
  const blobs = options.blobs ?? new FsBlobStore(config.dataDir, () => config.publicUrl || options.baseUrl());
  const jobs = options.jobs ?? new InlineJobRunner({ fetch, blobs, config }, config.jobConcurrency, { screenshot: config.screenshotConcurrency });
  return { config, log, fetch, blobs, jobs, keys: createKeyStore(config) };
}
