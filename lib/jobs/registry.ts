/**
 * The job kinds that can run here: each kind's descriptor (lib/jobs/specs.ts) and its handler, a
 * pure function of its input and a JobContext. The in-process runner and the worker Lambdas run
 * jobs through a registry: the service's (`JOB_REGISTRY`), or a test's with a kind of its own
 * (`withJobKind`), the way a test registers an extra platform.
 */
import { runRenderJob } from '../browser/render.js';
import { runScreenshotJob } from '../browser/screenshot.js';
import { runAudioJob } from '../media/audio-job.js';
import { runImageJob } from '../media/images.js';
import { runDocumentJob } from '../media/pdf.js';
import { runVideoJob } from '../media/video.js';
import { runPageContentJob } from '../page/page-content.js';
import type { JobContext } from './context.js';
import type { JobInput, JobKind, JobResult } from './kinds.js';
import { type JobKindSpec, jobSpec } from './specs.js';

export type JobHandler<K extends JobKind> = (input: JobInput<K>, ctx: JobContext) => Promise<JobResult<K>>;

/** A handler as a registry holds it: any kind, checked by its kind's types where it is written. */
export type AnyJobHandler = (input: never, ctx: JobContext) => Promise<unknown>;

/** Waits `ms` unless the signal aborts first. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const HANDLERS: { readonly [K in JobKind]: JobHandler<K> } = {
  echo: async (input, ctx) => {
    if (input.delayMs) await delay(input.delayMs, ctx.signal);
    if (input.fail) throw new Error('echo job asked to fail');
    return { value: input.value };
  },
  image: (input, ctx) => runImageJob(input, ctx),
  video: (input, ctx) => runVideoJob(input, ctx),
  audio: (input, ctx) => runAudioJob(input, ctx),
  document: (input, ctx) => runDocumentJob(input, ctx),
  'page-content': (input, ctx) => runPageContentJob(input, ctx),
  screenshot: (input, ctx) => runScreenshotJob(input, ctx),
  render: (input, ctx) => runRenderJob(input, ctx),
};

/** The kinds a runner can run: each one's descriptor and handler. */
export interface JobRegistry {
  spec(kind: string): JobKindSpec | undefined;
  handler(kind: string): AnyJobHandler | undefined;
}

/** The service's job kinds. */
export const JOB_REGISTRY: JobRegistry = {
  spec: jobSpec,
  handler: (kind) => (Object.hasOwn(HANDLERS, kind) ? (HANDLERS[kind as JobKind] as AnyJobHandler) : undefined),
};

/** A registry with one more kind (tests: a kind defined in the test, run through both runners). */
export function withJobKind(base: JobRegistry, kind: string, spec: JobKindSpec, handler: AnyJobHandler): JobRegistry {
  return {
    spec: (k) => (k === kind ? spec : base.spec(k)),
    handler: (k) => (k === kind ? handler : base.handler(k)),
  };
}

export function jobHandler<K extends JobKind>(kind: K): JobHandler<K> {
  const h = JOB_REGISTRY.handler(kind);
  if (!h) throw new Error(`Unknown job kind: ${String(kind)}`);
  return h as unknown as JobHandler<K>;
}
