/** What a job handler (lib/jobs/registry.ts) is given besides its input. */
import type { CoreConfig } from '../core-settings.js';
import type { Fetcher } from '../fetch/types.js';
import type { BlobStore, JobParts } from '../ports.js';
import type { MemoryLease } from './memory.js';

/** How deferred work may wait (JobContext.defer). */
export interface DeferOptions {
  /** The key its result is asked for by (lib/jobs/idle-work.ts `want`). */
  key?: string;
}

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
   * Work that finishes after the job's result has gone out (the page versions' build, with their images):
   * the runner runs it under the job's signal and deadline, in an extra's slot, and on AWS before
   * the worker's invocation ends (a frozen Lambda runs nothing). Absent: the work runs on its own.
   * With a `key` (the page's digest), a runner that parks such work (the local server's:
   * lib/jobs/idle-work.ts) runs it when the process is idle or when its result is asked for by that
   * key; the others run it at once.
   */
  defer?: (work: () => Promise<void>, options?: DeferOptions) => void;
  /**
   * Adds `ms` to the job's part `part` (a download, a render, a store): the runner returns the
   * parts with the job's outcome (ports.ts JobParts) and Server-Timing reports them. Absent: not kept.
   */
  mark?: (part: string, ms: number) => void;
}

/** A JobContext.mark that keeps the parts in `parts` (the runners'), each rounded to 0.1 ms when read. */
export function partsRecorder(): { mark: (part: string, ms: number) => void; parts: () => JobParts | undefined } {
  const kept = new Map<string, number>();
  return {
    mark: (part, ms) => void kept.set(part, (kept.get(part) ?? 0) + Math.max(0, ms)),
    parts: () => (kept.size ? Object.fromEntries([...kept].map(([k, v]) => [k, Math.round(v * 10) / 10])) : undefined),
  };
}

/**
 * Job parts (JobParts) as far as they are sound: short lowercase names, finite durations, at most
 * eight; undefined when none is. The one rule for a worker's reply (the SQS runner) and for
 * Server-Timing (lib/timing.ts).
 */
export function validParts(parts: unknown): JobParts | undefined {
  if (!parts || typeof parts !== 'object') return undefined;
  const sound = Object.entries(parts as Record<string, unknown>)
    .filter((e): e is [string, number] => /^[a-z][a-z0-9]{0,31}$/.test(e[0]) && typeof e[1] === 'number' && Number.isFinite(e[1]) && e[1] >= 0)
    .slice(0, 8);
  return sound.length ? Object.fromEntries(sound) : undefined;
}
