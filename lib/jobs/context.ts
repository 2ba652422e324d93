/** What a job handler (lib/jobs/registry.ts) is given besides its input. */
import type { CoreConfig } from '../core-settings.js';
import type { Fetcher } from '../fetch/safe-fetch.js';
import type { BlobStore } from '../ports.js';
import type { MemoryLease } from './memory.js';

/** The guarded fetcher, the blob store and the configuration; the signal and memory lease of this run. */
export interface JobContext {
  fetch: Fetcher;
  blobs: BlobStore;
  config: CoreConfig;
  signal?: AbortSignal;
  /**
   * The job's share of the worker's memory (lib/jobs/memory.ts): a part whose cost depends on a
   * size learnt on the way (a render, a decode) holds its estimate first. Absent: no admission.
   */
  memory?: MemoryLease;
  /**
   * Work that finishes after the job's result has gone out (the page versions' remaining images):
   * the runner runs it under the job's signal and deadline, in an extra's slot, and on AWS before
   * the worker's invocation ends (a frozen Lambda runs nothing). Absent: the work runs on its own.
   */
  defer?: (work: () => Promise<void>) => void;
}
