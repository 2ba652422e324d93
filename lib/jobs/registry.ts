import { runScreenshotJob } from '../browser/screenshot.js';
import { runAudioJob } from '../media/audio-job.js';
import { runImageJob } from '../media/images.js';
import { runDocumentJob } from '../media/pdf.js';
import { runVideoJob } from '../media/video.js';
import { runPageContentJob } from '../page/page-content.js';
import type { JobContext } from './context.js';
import type { JobInput, JobKind, JobResult } from './kinds.js';

export type JobHandler<K extends JobKind> = (input: JobInput<K>, ctx: JobContext) => Promise<JobResult<K>>;

const handlers: { [K in JobKind]: JobHandler<K> } = {
  echo: async (input, ctx) => {
    if (input.delayMs) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, input.delayMs);
        ctx.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          },
          { once: true },
        );
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
  return Object.hasOwn(handlers, kind);
}
