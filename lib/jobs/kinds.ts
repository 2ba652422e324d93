/**
 * The job kinds the JobRunner can run, with their input and result types. A handler is a pure
 * function of its input and a JobContext (lib/jobs/registry.ts); the same code runs in-process
 * locally and in the worker Lambda on AWS.
 */
import type { ImageJobInput, ImageJobResult } from '../media/images.js';
import type { AudioJobResult } from '../media/audio-job.js';
import type { MediaJobInput } from '../media/media-fetch.js';
import type { DocumentJobResult } from '../media/pdf.js';
import type { VideoJobResult } from '../media/video.js';
import type { PageContentInput, PageContentResult } from '../page/page-content.js';
import type { ScreenshotJobInput, ScreenshotJobResult } from '../browser/screenshot.js';

export interface JobKinds {
  /** Smoke-test job: echoes its input after an optional delay (used by runner tests). */
  echo: { input: { value: unknown; delayMs?: number; fail?: boolean }; result: { value: unknown } };
  /** Render the four WebP sizes of one image (lib/media/images.ts); a broken image is `{reason}`. */
  image: { input: ImageJobInput; result: ImageJobResult };
  /** Probe a VIDEO link, grab the poster and snapshots, make the preview clip (lib/media/video.ts). */
  video: { input: MediaJobInput; result: VideoJobResult };
  /** Probe an AUDIO link, read its tags and artwork, compute the waveform (lib/media/audio-job.ts). */
  audio: { input: MediaJobInput; result: AudioJobResult };
  /** Read a PDF: info, text, language, page renders (lib/media/pdf.ts). */
  document: { input: MediaJobInput; result: DocumentJobResult };
  /** A PAGE's main content as hosted HTML, Markdown and text, and its reading time (lib/page/page-content.ts). */
  'page-content': { input: PageContentInput; result: PageContentResult };
  /** A PAGE rendered in headless Chromium, hosted as an ImageSet (lib/browser/screenshot.ts). */
  screenshot: { input: ScreenshotJobInput; result: ScreenshotJobResult };
}

export type JobKind = keyof JobKinds;
export type JobInput<K extends JobKind> = JobKinds[K]['input'];
export type JobResult<K extends JobKind> = JobKinds[K]['result'];
