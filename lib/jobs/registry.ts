import type { Config } from '../config.js';
import type { Fetcher } from '../fetch/safe-fetch.js';
import type { BlobStore } from '../ports.js';
import { runImageJob } from '../media/images.js';
import { runAudioJob } from '../media/audio-job.js';
import { runDocumentJob } from '../media/pdf.js';
import { runVideoJob } from '../media/video.js';
import { runPageContentJob } from '../page/page-content.js';
import { runScreenshotJob } from '../browser/screenshot.js';
import type { JobInput, JobKind, JobResult } from './kinds.js';
import type { MemoryLease } from './memory.js';

/** What a job handler may use: the guarded fetcher, the blob store and the configuration. */
export interface JobContext {
  fetch: Fetcher;
  blobs: BlobStore;
  config: Config;
  signal?: AbortSignal;
  /**
   * The job's share of the worker's memory (lib/jobs/memory.ts): a part whose cost depends on a
   * size learnt on the way (a render, a decode) holds its estimate first. Absent: no admission.
   */
  memory?: MemoryLease;
}

export type JobHandler<K extends JobKind> = (input: JobInput<K>, ctx: JobContext) => Promise<JobResult<K>>;

const handlers: { [K in JobKind]: JobHandler<K> } = {
  echo: async (input, ctx) => {
    if (input.delayMs) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, input.delayMs);
        ctx.signal?.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); }, { once: true });
      });
    }
    if (input.fail) throw new Error('echo job asked to fail');
    return { value: input.value };
  },
  image: (input, ctx) => runImageJob(input, ctx),
  video: (input, ctx) => runVideoJob(input, ctx),
  audio: (input, ctx) => runAudioJob(input, ctx),
  document: (input, ctx) => runDocumentJob(input, ctx),
  'page-content': (input, ctx) => runPageContentJob(input, ctx),
  screenshot: (input, ctx) => runScreenshotJob(input, ctx),
};

export function jobHandler<K extends JobKind>(kind: K): JobHandler<K> {
  const h = handlers[kind];
  if (!h) throw new Error(`Unknown job kind: ${String(kind)}`);
  return h as JobHandler<K>;
}

export function isJobKind(kind: string): kind is JobKind {
  return Object.prototype.hasOwnProperty.call(handlers, kind);
}
