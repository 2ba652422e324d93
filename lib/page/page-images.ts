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
 *    cap, a few at once. Nothing waits for them but the versions themselves (the record names the
 *    versions at their fixed addresses before they exist: lib/page/page-versions.ts), so every
 *    image is waited for, until the hard stop: PAGE_IMAGE_LIMITS.reserveMs before the job's
 *    deadline (or when the job is aborted), so the versions are stored in time. What is under way
 *    then is stopped, and removed from the versions.
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
  /** Left before the job's deadline for writing and storing the three versions. */
  reserveMs: 1500,
  /** The time images may take when the input carries no deadline. */
  defaultMs: 10_000,
};

type ImageContext = Pick<JobContext, 'fetch' | 'blobs' | 'config' | 'signal' | 'memory'>;

/**
 * When the images are stopped outright (epoch ms): PAGE_IMAGE_LIMITS.reserveMs before the job's
 * deadline (else defaultMs after the job started), so the versions are stored before it.
 */
export function pageImagesUntil(job: { deadline: number | undefined; started: number }): number {
  return job.deadline !== undefined ? job.deadline - PAGE_IMAGE_LIMITS.reserveMs : job.started + PAGE_IMAGE_LIMITS.defaultMs;
}

/**
 * Hosts the content's images (`all`: its distinct addresses in document order, the first
 * PAGE_IMAGE_LIMITS.maxImages of them not on a metadata-only host) a few at once under the byte
 * caps until `until` or the job's abort: the images hosted by then, by address. Without a
 * fetcher or a configuration (a caller that only stores text) none is.
 */
export async function hostPageImages(
  all: string[],
  given: Pick<JobContext, 'blobs' | 'signal'> & Partial<ImageContext>,
  until: number,
): Promise<Map<string, ContentImage>> {
  if (all.length === 0 || !given.fetch || !given.config) return new Map();
  const ctx = given as ImageContext;
  const rules = hostRulesOf(ctx.config);
  const storable = all.filter((url) => !rules.has(url, 'metadata-only'));
  if (storable.length === 0) return new Map();
  const stop = hardStop(ctx.signal, until);
  const hosting = new ImageHosting(ctx, stop.signal);
  try {
    await Promise.race([hosting.hostAll(storable.slice(0, PAGE_IMAGE_LIMITS.maxImages)), stop.stopped]);
  } finally {
    stop.end();
  }
  return new Map(hosting.hosted);
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
      if (cap < 1024) break; // the total is spent: the rest is removed
      void this.hostOne(url, cap);
    }
    await Promise.all(this.running);
  }

  private hostOne(url: string, cap: number): Promise<void> {
    this.reserved += cap;
    const p: Promise<void> = hostContentImage(url, this.ctx, cap)
      .then(
        (r) => {
          if (r.image && !this.stop.aborted) {
            this.hosted.set(url, r.image);
            this.used += r.bytes;
          }
        },
        () => undefined, // aborted, or out of memory: the image is left out
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
