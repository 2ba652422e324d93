/**
 * The images of a page's hosted versions. The hosted HTML is served with `img-src 'self'` (the
 * local server's /assets/, and on AWS the CloudFront domain that serves page.html too), so an
 * <img> left pointing at the page's own host would show broken. Here the images of the sanitized
 * content are hosted like every other image and their <img> rewritten; the ones that cannot be
 * hosted are removed, with the wrappers (<picture>, <figure>, a link) they leave empty:
 *
 *  - the first PAGE_IMAGE_LIMITS.maxImages distinct addresses in document order (the sanitizer
 *    has already resolved them against the page's final URL and picked a lazy loader's data-src
 *    or the best srcset candidate), each through the job's guarded fetcher under a byte cap, all
 *    under a total byte cap, a few at once;
 *  - each is the image job's own function (lib/media/images.ts `runImageJob`, no nested job):
 *    four WebP renditions without metadata, content-addressed, so an image already hosted (by any
 *    page or record) is neither rendered nor, within URL_MEMO, downloaded again;
 *  - the <img> gets the `medium` rendition (640 px box) as src and `large` (1280 px) as its 2x in
 *    srcset (lib/page/page-content-dom.ts rewrites and removes them, on the content's DOM);
 *  - the versions wait for the images at most LINKPREVIEW_PAGE_IMAGES_WAIT_MS once the content is
 *    read (the images are extras of the versions: they must not hold the record): what has not
 *    arrived by then is removed, never left broken; an image already under way goes on in the
 *    background (under the same caps and the job's abort) and is remembered like any image job's,
 *    so the next version of the page has it at no cost. No new image starts after the wait;
 *  - hosting stops outright in time for the versions to be stored before the record's deadline
 *    (or when the job is aborted): what is under way then is stopped.
 */
import type { JobContext } from '../jobs/context.js';
import type { HostedImage } from '../jobs/kinds.js';
import { runImageJob } from '../media/images.js';
import type { BlobStore } from '../ports.js';

export const PAGE_IMAGE_LIMITS = {
  /** Distinct image addresses hosted at most; the images after them are removed. */
  maxImages: 12,
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

export interface PageImagesHosted {
  /** The images hosted in time, by address. */
  hosted: Map<string, HostedImage>;
  /** Every image started was hosted and none was cut by the wait or the deadline: a run on the same page would give the same. */
  complete: boolean;
}

/**
 * Hosts the content's images (`urls`: its distinct addresses in document order, the first
 * PAGE_IMAGE_LIMITS.maxImages of them), a few at once, under the byte caps, until `times.waitUntil`
 * or the job's abort. Without a fetcher or a configuration (a caller that only stores text) none
 * is.
 */
export async function hostPageImages(
  all: string[],
  given: Pick<JobContext, 'blobs' | 'signal'> & Partial<ImageContext>,
  times: PageImageTimes,
): Promise<PageImagesHosted> {
  const done = new Map<string, HostedImage>();
  if (all.length === 0) return { hosted: done, complete: true };
  if (!given.fetch || !given.config) return { hosted: done, complete: false };
  const { until } = times;
  const waitUntil = Math.min(times.waitUntil, until);
  const ctx = given as ImageContext;
  const urls = all.slice(0, PAGE_IMAGE_LIMITS.maxImages);
  const perImage = Math.min(PAGE_IMAGE_LIMITS.maxImageBytes, ctx.config.maxImageBytes);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal?.aborted) stop.abort();
  const timer = setTimeout(onAbort, Math.max(0, until - Date.now()));
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  // The end of the wait: nothing new starts, and the map returned has what was hosted by then.
  let waitTimer: NodeJS.Timeout | undefined;
  let waitOver = false;
  const waited = new Promise<void>((resolve) => {
    waitTimer = setTimeout(
      () => {
        waitOver = true;
        resolve();
      },
      Math.max(0, waitUntil - Date.now()),
    );
  });

  let used = 0;
  let reserved = 0;
  let failed = 0;
  let scheduled = false;
  const running = new Set<Promise<void>>();
  const hostOne = (url: string, cap: number): Promise<void> => {
    reserved += cap;
    const blobs = cap < ctx.config.maxImageBytes ? withoutFailureMemo(ctx.blobs) : ctx.blobs;
    const sub: JobContext = { ...ctx, blobs, signal: stop.signal, config: { ...ctx.config, maxImageBytes: cap } };
    const p: Promise<void> = runImageJob({ url }, sub)
      .then(
        (r) => {
          if (r.image && !stop.signal.aborted) {
            done.set(url, r.image);
            used += r.image.size;
          } else failed++;
        },
        () => {
          failed++; // aborted, or out of memory turns: the image is left out
        },
      )
      .finally(() => {
        reserved -= cap;
        running.delete(p);
      });
    running.add(p);
    return p;
  };
  const schedule = async (): Promise<void> => {
    for (const url of urls) {
      // Wait for a free slot with a whole per-image cap left under the total (or nothing running).
      for (;;) {
        if (stop.signal.aborted || waitOver) return;
        const left = PAGE_IMAGE_LIMITS.maxTotalBytes - used - reserved;
        if (running.size === 0 || (running.size < PAGE_IMAGE_LIMITS.concurrency && left >= perImage)) break;
        await Promise.race(running);
      }
      const cap = Math.min(perImage, PAGE_IMAGE_LIMITS.maxTotalBytes - used - reserved);
      if (cap < 1024) break; // the total is spent: the rest is removed
      void hostOne(url, cap);
    }
    await Promise.all(running);
    scheduled = true;
  };
  const finish = () => {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onAbort);
    stop.abort(); // what is still downloading stops; a render still running is not waited for
  };
  try {
    await Promise.race([schedule(), stopped, waited]);
  } catch (err) {
    finish();
    throw err;
  } finally {
    clearTimeout(waitTimer);
  }
  const complete = scheduled && failed === 0 && !stop.signal.aborted;
  if (!waitOver || stop.signal.aborted || running.size === 0) {
    finish();
    return { hosted: done, complete };
  }
  // The wait is over with images under way: they finish in the background (the hard stop and the
  // job's abort still apply) and are remembered by their image jobs; this version goes without them.
  const inTime = new Map(done);
  void Promise.all(running).finally(finish);
  return { hosted: inTime, complete: false };
}

/**
 * The image job remembers a failed URL for a while (URL_MEMO), and the record's own image jobs
 * read the same memo: an image refused here only for the page's smaller byte cap must not be
 * remembered as failed for them. Rendered images are remembered as usual.
 */
function withoutFailureMemo(blobs: BlobStore): BlobStore {
  return {
    put: (key, body, options) => {
      if (key.startsWith('jobs/image-url/') && /"reason"/.test(body.toString())) return Promise.resolve();
      return blobs.put(key, body, options);
    },
    has: (key) => blobs.has(key),
    get: (key) => blobs.get(key),
    publicUrl: (key) => blobs.publicUrl(key),
  };
}
