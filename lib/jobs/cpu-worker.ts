/**
 * The tasks of the CPU pool (lib/jobs/cpu-pool.ts): each named export is one, a pure function of a
 * structured-cloneable input. A pool thread loads this module (built as cpu-worker.mjs beside the
 * bundle in dist/ and in the worker Lambda; from the sources through cpu-worker-tsx.cjs); with the
 * pool off, the job calls the same functions in-process. Nothing here stores, fetches or loads
 * sharp: that stays with the job on the main thread.
 */
export { readPageContent, writePageVersions } from '../page/page-content-dom.js';
