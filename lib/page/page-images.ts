/**
 * The images of a page's hosted versions. The hosted HTML is served with `img-src 'self'` (the
 * local server's /assets/, and on AWS the CloudFront domain that serves page.html too), so an
 * <img> left pointing at the page's own host would show broken. Here the images of the sanitized
 * content are hosted and their <img> rewritten; the ones that cannot be hosted are removed, with
 * the wrappers (<picture>, <figure>, a link) they leave empty. A version never shows a broken
 * image: it names only images already stored.
 *
 *  - the first PAGE_IMAGE_LIMITS.maxImages distinct addresses in document order (the sanitizer
 *    has already resolved them against the page's final URL and picked a lazy loader's data-src
 *    or the best srcset candidate), less those on a host a `metadata-only` host rule keeps from
 *    being copied (LINKPREVIEW_HOST_RULES): never downloaded, their <img> is removed as one that
 *    cannot be hosted (the versions allow images from their own origin only, so the original
 *    address would show broken, and a reader's browser would ask that host);
 *  - each in the one size the versions show, `medium` (640 px box, WebP), content-addressed like
 *    every rendition and stored with its dimensions as metadata: one PUT, none when the source
 *    was hosted before (its `medium.webp` is found by one HEAD once the bytes are downloaded, the
 *    record's image job's included). No manifest, no other sizes and no memo by address: the page
 *    memo (lib/page/page-memo.ts) keeps the versions for the same page bytes;
 *  - each is downloaded through the job's guarded fetcher under a byte cap, all under a total byte
 *    cap, a few at once, for at most LINKPREVIEW_PAGE_IMAGES_WAIT_MS (default 0: the versions do
 *    not wait for downloads, they hold the record). What is not hosted by then is removed from these versions;
 *  - the hosting goes on in the background (`rest`): the page-content job hands it to its runner
 *    (JobContext.defer), which finishes it after the result has gone out, as an extra. Once every
 *    image is hosted, the job stores the complete versions and remembers them for the page's
 *    bytes (lib/page/page-memo.ts), so the next preview of the page has them, images included;
 *  - hosting stops outright in time for the versions to be stored before the record's deadline
 *    (or when the job is aborted): what is under way then is stopped.
 */
import { createHash } from 'node:crypto';
import { ExpectedFailure } from '../errors.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { JobContext } from '../jobs/context.js';
import type { ContentImage } from '../jobs/kinds.js';
import { imageRenderMb, type RenderSize } from '../jobs/memory.js';
import { RENDITION_CONTENT_TYPE, readRenditionSize, renditionKey, renditionSizeMetadata } from '../media/image-sizes.js';
import { sourceBytes } from '../media/images.js';
import { renderImage } from '../media/render-image.js';
import { IMMUTABLE_CACHE } from '../ports.js';

export const PAGE_IMAGE_LIMITS = {
  /**
   * Distinct image addresses hosted at most; the images after them are removed. Each costs one
   * PUT; how many images captured articles have, and what share of them this covers, is in
   * docs/benchmarks.md.
   */
  maxImages: 4,
  /** Bytes of one image download at most (and never more than the service's LINKPREVIEW_MAX_IMAGE_BYTES). */
  maxImageBytes: 5 * 1024 * 1024,
  /** Bytes of all the page's image sources together: each download is capped at what is left of it. */
  maxTotalBytes: 20 * 1024 * 1024,
  /** Images fetched and rendered at once (renders also wait for the worker's memory admission). */
  concurrency: 3,
  /** Left before the record's deadline for storing the three versions and returning the result. */
  reserveMs: 1500,
  /** The time images may take when the input carries no deadline. */
  defaultMs: 10_000,
};

type ImageContext = Pick<JobContext, 'fetch' | 'blobs' | 'config' | 'signal' | 'memory'>;

export interface PageImageTimes {
  /** Epoch ms: no image is waited for after it (those under way go on in the background). */
  waitUntil: number;
  /** Epoch ms: everything still under way is stopped (the versions must be stored before the record's deadline). */
  until: number;
}

/**
 * The decision on the images' times: they stop outright PAGE_IMAGE_LIMITS.reserveMs before the
 * record's deadline (else defaultMs after the job started), and are waited for `waitMs`
 * (LINKPREVIEW_PAGE_IMAGES_WAIT_MS; default defaultMs) from `now`.
 */
export function pageImageTimes(job: { deadline: number | undefined; started: number; now: number; waitMs: number | undefined }): PageImageTimes {
  const until = job.deadline !== undefined ? job.deadline - PAGE_IMAGE_LIMITS.reserveMs : job.started + PAGE_IMAGE_LIMITS.defaultMs;
  return { waitUntil: job.now + (job.waitMs ?? PAGE_IMAGE_LIMITS.defaultMs), until };
}

export interface PageImagesHosted {
  /** The images hosted in time, by address. */
  hosted: Map<string, ContentImage>;
  /** Every image was hosted (or is known to fail) and none was cut by the wait or the deadline: a run on the same page would give the same. */
  complete: boolean;
  /**
   * When the wait left images under way: every image hosted once they are done, or undefined when
   * some failed or were stopped (the versions then stay as they are).
   */
  rest?: Promise<Map<string, ContentImage> | undefined>;
}

/**
 * Hosts the content's images (`all`: its distinct addresses in document order, the first
 * PAGE_IMAGE_LIMITS.maxImages of them not on a metadata-only host) a few at once under the byte caps until
 * `times.waitUntil` (then in the background: `rest`) or the job's abort.
 * Without a fetcher or a configuration (a caller that only stores text) none is.
 */
export async function hostPageImages(
  all: string[],
  given: Pick<JobContext, 'blobs' | 'signal'> & Partial<ImageContext>,
  times: PageImageTimes,
): Promise<PageImagesHosted> {
  if (all.length === 0) return { hosted: new Map(), complete: true };
  if (!given.fetch || !given.config) return { hosted: new Map(), complete: false };
  const ctx = given as ImageContext;
  const rules = hostRulesOf(ctx.config);
  const storable = all.filter((url) => !rules.has(url, 'metadata-only'));
  if (storable.length === 0) return { hosted: new Map(), complete: true };
  // Each until the wait is over (then in the background) or the hard stop.
  const stop = hardStop(ctx.signal, times.until);
  // The end of the wait: the map returned has what was hosted by then.
  let waitTimer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    waitTimer = setTimeout(resolve, Math.max(0, Math.min(times.waitUntil, times.until) - Date.now()));
  });
  const hosting = new ImageHosting(ctx, stop.signal);
  const scheduled = hosting.hostAll(storable.slice(0, PAGE_IMAGE_LIMITS.maxImages)).then(
    () => ({ ok: true as const }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  const first = await Promise.race([scheduled, stop.stopped.then(() => undefined), waited.then(() => undefined)]);
  clearTimeout(waitTimer);
  if (first) {
    // Everything settled within the wait.
    const complete = first.ok && hosting.whole();
    stop.end();
    if (!first.ok) throw first.err;
    return { hosted: hosting.hosted, complete };
  }
  // The wait is over (or the hard stop came) with images under way: these versions go with what
  // is hosted now; the rest goes on in the background (the hard stop and the job's abort still apply).
  const inTime = new Map(hosting.hosted);
  if (stop.signal.aborted) {
    stop.end();
    return { hosted: inTime, complete: false };
  }
  const rest = scheduled.then((r) => {
    const whole = r.ok && hosting.whole();
    stop.end();
    return whole ? hosting.hosted : undefined;
  });
  return { hosted: inTime, complete: false, rest };
}

/**
 * The hosting's hard stop: at `until`, or at the job's abort, whichever comes first. `end` clears
 * its timer and listener and stops what is still under way.
 */
function hardStop(jobSignal: AbortSignal | undefined, until: number): { signal: AbortSignal; stopped: Promise<void>; end: () => void } {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  jobSignal?.addEventListener('abort', onAbort, { once: true });
  if (jobSignal?.aborted) stop.abort();
  const timer = setTimeout(onAbort, Math.max(0, until - Date.now()));
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  const end = () => {
    clearTimeout(timer);
    jobSignal?.removeEventListener('abort', onAbort);
    stop.abort(); // what is still downloading stops; a render still running is not waited for
  };
  return { signal: stop.signal, stopped, end };
}

/**
 * The page's images under way, a few at once under the byte caps (their context's signal is the
 * hard stop), and the ones hosted, by address.
 */
class ImageHosting {
  readonly hosted = new Map<string, ContentImage>();
  private used = 0;
  private reserved = 0;
  private lost = 0;
  private cut = false;
  private readonly running = new Set<Promise<void>>();
  private readonly perImage: number;
  /** The job's context, its signal the hard stop's. */
  private readonly ctx: ImageContext;

  constructor(
    ctx: ImageContext,
    private readonly stop: AbortSignal,
  ) {
    this.ctx = { ...ctx, signal: stop };
    this.perImage = Math.min(PAGE_IMAGE_LIMITS.maxImageBytes, ctx.config.maxImageBytes);
  }

  /** Hosts `urls` in order, each when a slot and a whole per-image cap are free; settles when the last one does. */
  async hostAll(urls: string[]): Promise<void> {
    for (const url of urls) {
      // Wait for a free slot with a whole per-image cap left under the total (or nothing running).
      for (;;) {
        if (this.stop.aborted) return;
        const left = PAGE_IMAGE_LIMITS.maxTotalBytes - this.used - this.reserved;
        if (this.running.size === 0 || (this.running.size < PAGE_IMAGE_LIMITS.concurrency && left >= this.perImage)) break;
        await Promise.race(this.running);
      }
      const cap = Math.min(this.perImage, PAGE_IMAGE_LIMITS.maxTotalBytes - this.used - this.reserved);
      if (cap < 1024) {
        this.cut = true; // the total is spent: the rest is removed
        break;
      }
      void this.hostOne(url, cap);
    }
    await Promise.all(this.running);
  }

  /** Every image hosted (or failed for a reason of its own), none cut by the total byte cap or the stop: a run on the same page would give the same. */
  whole(): boolean {
    return !this.cut && this.lost === 0 && !this.stop.aborted;
  }

  private hostOne(url: string, cap: number): Promise<void> {
    this.reserved += cap;
    const p: Promise<void> = hostContentImage(url, this.ctx, cap)
      .then(
        (r) => {
          if (r.image && !this.stop.aborted) {
            this.hosted.set(url, r.image);
            this.used += r.bytes;
          } else if (!r.reason) this.lost++; // a failure of the image's own leaves the versions complete
        },
        () => {
          this.lost++; // aborted, or out of memory turns: the image is left out
        },
      )
      .finally(() => {
        this.reserved -= cap;
        this.running.delete(p);
      });
    this.running.add(p);
    return p;
  }
}

// ---------------------------------------------------------------------------------------------
// One content image: its `medium` rendition.

/**
 * Downloads `url` (at most `cap` bytes) and hosts its `medium` size: found by one HEAD when the
 * source was hosted before (content-addressed, its dimensions in the metadata), else rendered and
 * stored. A failure of the image's own (a 404, undecodable, too large for the cap) is a `{reason}`.
 */
async function hostContentImage(url: string, ctx: ImageContext, cap: number): Promise<{ image?: ContentImage; bytes: number; reason?: string }> {
  let bytes: Buffer;
  try {
    bytes = await sourceBytes({ url }, { ...ctx, config: { ...ctx.config, maxImageBytes: cap } });
  } catch (err) {
    if (!(err instanceof ExpectedFailure)) throw err;
    return { bytes: 0, reason: err.message };
  }
  ctx.signal?.throwIfAborted();
  const key = renditionKey(createHash('sha256').update(bytes).digest('hex'), 'medium');
  const hosted = (size: { width: number; height: number }) => ({ image: { medium: { url: ctx.blobs.publicUrl(key), ...size } }, bytes: bytes.length });
  const stored = readRenditionSize((await ctx.blobs.head(key))?.metadata);
  if (stored) return hosted(stored);
  const memory = ctx.memory;
  const reserve = memory && ((size: RenderSize) => memory.hold(imageRenderMb(size, ctx.config.maxImagePixels), ctx.signal));
  let medium: { width: number; height: number; data: Buffer };
  try {
    const rendered = await renderImage(bytes, { maxPixels: ctx.config.maxImagePixels, reserve, sizes: ['medium'] });
    medium = rendered.renditions[0];
  } catch (err) {
    if (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError) throw err;
    return { bytes: bytes.length, reason: `undecodable image: ${(err as Error).message}` };
  }
  ctx.signal?.throwIfAborted();
  await ctx.blobs.put(key, medium.data, { contentType: RENDITION_CONTENT_TYPE, cacheControl: IMMUTABLE_CACHE, metadata: renditionSizeMetadata(medium) });
  return hosted({ width: medium.width, height: medium.height });
}
