/**
 * The tasks of the CPU pool (lib/jobs/cpu-pool.ts): each named export is one, a pure function of a
 * structured-cloneable input. A pool thread loads this module (built as cpu-worker.mjs beside the
 * bundle in dist/ and in the worker Lambda; from the sources through cpu-worker-tsx.cjs); with the
 * pool off, the job calls the same functions in-process. Nothing here stores, fetches or loads
 * sharp: that stays with the job on the main thread. A pool thread lowers its own priority as it
 * loads this module (lib/jobs/thread-priority.ts), so what it runs never competes with a card's
 * work for a core; loaded in-process (the pool off), the main thread keeps its own.
 */
import os from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { lowerThreadPriority } from './thread-priority.js';

export { readPageContent, writePageVersions } from '../page/page-content-dom.js';

const threadId = isMainThread ? undefined : lowerThreadPriority();

/** The nice value of the thread that runs it, as the kernel reports it (undefined where threads have none of their own). */
export function threadNice(_input?: unknown): number | undefined {
  return threadId === undefined ? undefined : os.getPriority(threadId);
}
