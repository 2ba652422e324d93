/**
 * The job kinds the JobRunner can run, with their input and result types: the contract between
 * the pipeline that asks for a job and the handler that runs it (lib/jobs/registry.ts). Each
 * kind's descriptor (its worker, phase, memory) is in lib/jobs/specs.ts. A handler
 * is a pure function of its input and a JobContext (lib/jobs/context.ts); the same code runs
 * in-process locally and in the worker Lambda on AWS. Inputs and results are JSON-safe (on AWS
 * they travel through SQS and S3).
 */
import type { Audio, DocumentInfo, ImageSet, MediaImage, Video } from '../contract/link.js';
import type { ImageSizeName } from '../media/image-sizes.js';

/**
 * Each kind's input and result types, and nothing else: what a kind does is its `description` in
 * JOB_SPECS (lib/jobs/specs.ts), and its handler is in lib/jobs/registry.ts.
 */
export interface JobKinds {
  echo: { input: { value: unknown; delayMs?: number; fail?: boolean }; result: { value: unknown } };
  image: { input: ImageJobInput; result: ImageJobResult };
  video: { input: MediaJobInput; result: VideoJobResult };
  audio: { input: MediaJobInput; result: AudioJobResult };
  document: { input: MediaJobInput; result: DocumentJobResult };
  'page-content': { input: PageContentInput; result: PageContentResult };
  screenshot: { input: ScreenshotJobInput; result: ScreenshotJobResult };
  render: { input: RenderJobInput; result: RenderJobResult };
}

export type JobKind = keyof JobKinds;
export type JobInput<K extends JobKind> = JobKinds[K]['input'];
export type JobResult<K extends JobKind> = JobKinds[K]['result'];

// ---------------------------------------------------------------------------------------------
// image

export interface ImageJobInput {
  /** A remote image, downloaded through the guarded fetcher. */
  url?: string;
  /** Bytes already fetched (an IMAGE link), base64 so the input stays JSON. */
  bytesBase64?: string;
  /**
   * Only these sizes (absent or empty: all four). An icon is shown only in `original`
   * (lib/media/host-images.ts): its other sizes would be PUTs nobody reads.
   */
  sizes?: ImageSizeName[];
  /**
   * Other remote images to try, in order, when `url` cannot be hosted: an icon's other candidates
   * (lib/media/host-images.ts). The first that can be hosted is the result; when none can, the
   * reason is the last one's. One job, so a failed candidate costs no queue round trip.
   */
  alternatives?: string[];
}

/** An image of a page's hosted versions: only the size they show (lib/page/page-images.ts). JSON-safe. */
export interface ContentImage {
  medium: { url: string; width: number; height: number };
}

/**
 * A hosted image: a MediaImage (URLs from the BlobStore) plus what the job learned. JSON-safe. It
 * has the sizes the job was asked for (ImageJobInput.sizes; all four by default), only those.
 */
export interface HostedImage extends Omit<MediaImage, ImageSizeName>, Partial<Pick<MediaImage, ImageSizeName>> {
  sha256: string;
  animated: boolean;
  edgeColor: string;
  /** True when the renditions existed already (nothing was rendered). */
  reused: boolean;
}

/**
 * The hosted image, or why there is none. `lasting`: the image's own fault (a 404, undecodable
 * bytes, too large), which another try within a few minutes would meet again; absent for what may
 * pass (a timeout, a 5xx, the deadline).
 */
export type ImageJobResult = { image: HostedImage; reason?: undefined; lasting?: undefined } | { image?: undefined; reason: string; lasting?: boolean };

// ---------------------------------------------------------------------------------------------
// video, audio, document

/** What a media job is given: the link (final URL) and, when the pipeline holds it whole, the bytes. */
export interface MediaJobInput {
  url: string;
  /** The complete body, base64, when the main fetch got all of it (no second download). */
  bytesBase64?: string;
  /** The total size the main fetch learned (Content-Length / Content-Range). */
  declaredSize?: number;
  contentType?: string;
  /** The Last-Modified header of the link. */
  lastModified?: string;
  /** When the link was fetched (ISO date-time). */
  fetchedAt: string;
  /** A file name for the link (Content-Disposition, else the last path segment). */
  name?: string;
}

export type VideoJobResult = { video: Video; reason?: undefined } | { video?: undefined; reason: string };

export type AudioJobResult = { audio: Audio; reason?: undefined } | { audio?: undefined; reason: string };

export type DocumentJobResult = { document: DocumentInfo; reason?: undefined } | { document?: undefined; reason: string };

// ---------------------------------------------------------------------------------------------
// page-content

export interface PageContentInput {
  /** The page's final URL (base for relative URLs). */
  url: string;
  /** The page bytes as fetched (decoded here with the same charset rules as extraction). */
  bytesBase64: string;
  contentType?: string;
  /**
   * The job's deadline (epoch ms): the versions are built by then (the page's images hosted until
   * PAGE_IMAGE_LIMITS.reserveMs before it), else stand-ins are stored. Absent: PAGE_IMAGE_LIMITS.defaultMs
   * plus reserveMs from the start.
   */
  deadline?: number;
}

export interface PageContentResult {
  /**
   * The versions' addresses, fixed by the page's digest (lib/page/page-versions.ts): named when the
   * page has versions to make, before they are built (the job builds them after its result).
   */
  htmlUrl?: string;
  markdownUrl?: string;
  rawTextUrl?: string;
  estimatedReadingTimeInMinutes?: number;
  words: number;
  cjkChars: number;
  /** True when Readability found an article; false when the body minus boilerplate was used. */
  article: boolean;
  title?: string;
  /** Readability's excerpt (first paragraph or its own description), for a missing description. */
  excerpt?: string;
  /** Why there are no assets (no text at all, unparseable). */
  reason?: string;
  /** The content's images: distinct addresses found, and of those hosted (the others were removed); only when the versions were built before the result. */
  images?: PageImagesOutcome;
}

interface PageImagesOutcome {
  /** Distinct image addresses in the content. */
  found: number;
  /** Of those, hosted (their <img> rewritten). */
  hosted: number;
}

// ---------------------------------------------------------------------------------------------
// screenshot

export interface ScreenshotJobInput {
  url: string;
}

export interface ScreenshotJobResult {
  screenshot?: ImageSet;
  /** Why there is no screenshot. */
  reason?: string;
  /** Sub-requests refused by the guard or the blocks (for logs). */
  refused?: number;
}

// ---------------------------------------------------------------------------------------------
// render

export interface RenderJobInput {
  url: string;
  /** The most characters of rendered HTML handed back (the page cap). */
  maxChars: number;
  /** Also capture the page's screenshot from the same page load (hosted and remembered as the screenshot job's). */
  screenshot?: boolean;
}

export interface RenderJobResult {
  /** The rendered DOM, serialized, at most `maxChars`. */
  html?: string;
  /** Why there is none (no browser, the page did not load, the cap). */
  reason?: string;
  /** The screenshot of the same page load, when asked for. */
  screenshot?: ImageSet;
  /** The page's requests, and those refused by the guard or the blocks. */
  requests?: number;
  refused?: number;
}
