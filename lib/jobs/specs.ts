/**
 * The job kinds, one descriptor each, in one list (as the platforms are in lib/platforms/index.ts):
 * where a kind runs (the job worker, or the browser worker with Chromium), the Server-Timing phase
 * of its time, the memory it holds, and when its result is first looked for on AWS. The runners,
 * the worker's memory admission, Server-Timing and the AWS wiring read this list; the input and
 * result types are in lib/jobs/kinds.ts and the handlers in lib/jobs/registry.ts (kept apart so
 * the preview Lambda, which only sends jobs, loads no job code).
 *
 * A kind missing here is a type error, not a silent default.
 */

import { BROWSER_BASE_MB, BROWSER_MIN_RUN_MS } from '../browser/lanes.js';
import type { CoreConfig } from '../core-settings.js';
import type { JobPriority } from './concurrency-gate.js';
import type { JobKind } from './kinds.js';
import { imageRenderMb, PDF_RENDER_MAX_PIXELS, PDF_WORKER_HOLD_MB, videoDecodeMb } from './memory.js';

/** The worker that runs a kind: the job worker, or the browser worker (Chromium; its own queue and Lambda on AWS, its own lane locally). */
export type JobWorker = 'default' | 'browser';

export interface JobKindSpec {
  /** What the kind is for, as the docs say it. */
  description: string;
  worker: JobWorker;
  /**
   * `card`: what the record's card shows (its image and icon, the link's own media or document),
   * which the record waits for; `extra`: what comes after it (the page versions and their images,
   * screenshots). In both runners an extra never takes a slot the card's jobs need
   * (lib/jobs/concurrency-gate.ts `PriorityGate`).
   */
  priority: JobPriority;
  /** The Server-Timing phase its time is reported under (lib/timing.ts); none: only within `jobs`. */
  phase?: string;
  /** What a job holds from its start, before it learns the sizes it works on (MB; lib/jobs/memory.ts). */
  memoryMb(config: CoreConfig): number;
  /** The most it holds with this configuration: its start plus its largest hold (MB). Default: `memoryMb`. */
  worstCaseMb?(config: CoreConfig): number;
  /** On AWS, when its result is first looked for (ms after sending), for a kind that never finishes sooner. */
  firstPollMs?: number;
  /**
   * The least time before its deadline a job needs to be worth starting: one still waiting for its
   * turn when less is left gives up at once instead of running late (both runners). Default: 0.
   */
  minRunMs?: number;
}

const MB = 1024 * 1024;
const mb = (bytes: number) => bytes / MB;
/** A media job's prefix: the probe bytes, within the media cap. */
const probeMb = (config: CoreConfig) => mb(Math.min(config.mediaProbeBytes, config.maxMediaBytes));
/** The costliest render of `pixels`: with alpha (any image, album art), or a JPEG (video frames). */
const renderMb = (pixels: number, format = 'png') => imageRenderMb({ width: pixels, height: 1, format, hasAlpha: format !== 'jpeg' });

export const JOB_SPECS: { readonly [K in JobKind]: JobKindSpec } = {
  echo: {
    description: 'Returns its input (after an optional delay, or failing on request): `GET /status` with a key runs one end to end as its deep check.',
    worker: 'default',
    priority: 'card',
    memoryMb: () => 1,
  },
  image: {
    description: "The four WebP sizes of one image, or those of its input's `sizes`.",
    worker: 'default',
    priority: 'card',
    phase: 'images',
    // The download, its base64 copy in the input, sharp's metadata read (bench `image-*`).
    memoryMb: (c) => Math.ceil(24 + 3 * mb(c.maxImageBytes)),
    worstCaseMb: (c) => JOB_SPECS.image.memoryMb(c) + renderMb(c.maxImagePixels),
  },
  video: {
    description: "A VIDEO link's probe, poster, snapshots and clip.",
    worker: 'default',
    priority: 'card',
    // The prefix, its temporary file, ffprobe (about 100 MB on an 8K file) (bench `video-*`).
    memoryMb: (c) => Math.ceil(110 + 2 * probeMb(c)),
    worstCaseMb: (c) => JOB_SPECS.video.memoryMb(c) + Math.max(videoDecodeMb(c.maxImagePixels), renderMb(c.maxImagePixels, 'jpeg')),
  },
  audio: {
    description: "An AUDIO link's probe, tags, artwork and waveform.",
    worker: 'default',
    priority: 'card',
    // The prefix, music-metadata's parse, ffprobe, the waveform decode (bench `audio-cover`).
    memoryMb: (c) => Math.ceil(110 + 3 * probeMb(c)),
    worstCaseMb: (c) => JOB_SPECS.audio.memoryMb(c) + renderMb(c.maxImagePixels),
  },
  document: {
    description: "A PDF's facts, text, language and page renders.",
    worker: 'default',
    priority: 'card',
    // The whole file (the download's chunks and their concatenation), the text; the pdf.js thread
    // and the Flate check hold PDF_WORKER_HOLD_MB while they run.
    memoryMb: (c) => Math.ceil(40 + 2 * mb(c.maxMediaBytes)),
    worstCaseMb: (c) => JOB_SPECS.document.memoryMb(c) + Math.max(PDF_WORKER_HOLD_MB, renderMb(PDF_RENDER_MAX_PIXELS)),
  },
  'page-content': {
    description: "A PAGE's main content as hosted HTML, Markdown and text, and its reading time.",
    worker: 'default',
    priority: 'extra',
    phase: 'content',
    // The page bytes and their decoded text; the DOM is capped at 512K characters (bench `page-content`).
    memoryMb: (c) => Math.ceil(60 + 10 * mb(c.maxPageBytes)),
  },
  screenshot: {
    description: 'A PAGE rendered in headless Chromium, hosted as an image set.',
    worker: 'browser',
    priority: 'extra',
    phase: 'screenshot',
    // Chromium's own memory and one page at its cap (lib/browser/lanes.ts).
    memoryMb: (c) => BROWSER_BASE_MB + c.browserPageMb,
    // A warm capture is a page load plus the capture: well over 300 ms.
    firstPollMs: 300,
    minRunMs: BROWSER_MIN_RUN_MS,
  },
  render: {
    description: "An app shell's page rendered in headless Chromium, its DOM handed to the extraction.",
    worker: 'browser',
    priority: 'card',
    phase: 'render',
    // The same browser and page as a screenshot, and the serialized DOM (at most the page cap, as UTF-16).
    memoryMb: (c) => Math.ceil(BROWSER_BASE_MB + c.browserPageMb + 2 * mb(c.maxPageBytes)),
    firstPollMs: 300,
    minRunMs: BROWSER_MIN_RUN_MS,
  },
};

/** The descriptor of a kind, or undefined for a name that is none. */
export function jobSpec(kind: string): JobKindSpec | undefined {
  return Object.hasOwn(JOB_SPECS, kind) ? JOB_SPECS[kind as JobKind] : undefined;
}

/** Looks a kind's descriptor up: the service's list, or a test's with an extra kind. */
export type JobSpecs = (kind: string) => JobKindSpec | undefined;

/** What a job of `kind` holds from its start (0 for a name that is no kind: it is refused before it runs). */
export function jobMemoryMb(kind: string, config: CoreConfig, specs: JobSpecs = jobSpec): number {
  return specs(kind)?.memoryMb(config) ?? 0;
}

/** The largest a job of `kind` gets with this configuration: what it declares plus its largest hold. */
export function worstCaseMb(kind: string, config: CoreConfig, specs: JobSpecs = jobSpec): number {
  const spec = specs(kind);
  if (!spec) return 0;
  return spec.worstCaseMb?.(config) ?? spec.memoryMb(config);
}
