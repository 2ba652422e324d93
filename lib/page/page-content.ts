/**
 * The `page-content` job: the main content of an HTML page, its reading time and excerpt, and its
 * three hosted versions (sanitized HTML, Markdown, plain text).
 *
 * The DOM work (decode, linkedom, Readability or the body minus boilerplate, the sanitizer,
 * turndown, the plain text) is lib/page/page-content-dom.ts; it runs in the CPU pool's threads
 * (lib/jobs/cpu-pool.ts: off the event loop, cancelled at the job's deadline) or, with the pool
 * off, in-process.
 *
 * The result comes once the content is read: the reading time and the excerpt (the card's), and
 * the versions' addresses, fixed by the page's digest (lib/page/page-versions.ts), when the page
 * has versions to make. The job remembers it for these bytes (lib/page/page-memo.ts
 * `rememberContent`), since the record waits for it only until the rest of the card is ready;
 * it never waits for the versions: they are built after
 * the result (JobContext.defer; without it, before the result; the local server parks a build
 * with images until it is idle or the versions are asked for: lib/jobs/idle-work.ts): the content's images are hosted
 * (lib/page/page-images.ts), each <img> rewritten or removed (the hosted HTML allows images from
 * its own origin only), then the versions are written with them and stored at those addresses.
 * Whoever serves an address before that holds the request until they are stored. A build that
 * fails, or is cut by the job's deadline, stores stand-ins instead (`storeStandIns`). A page built
 * before (its bytes seen again after the page memo expired) is found by one HEAD, and nothing
 * is hosted or stored again.
 */

import type { JobContext } from '../jobs/context.js';
import { runCpuTask } from '../jobs/cpu-pool.js';
import type { PageContentInput, PageContentResult } from '../jobs/kinds.js';
import type { PageContentRead, PageVersions } from './page-content-dom.js';
import { hostPageImages, PAGE_IMAGE_LIMITS, pageImagesUntil } from './page-images.js';
import { pageDigest, rememberContent } from './page-memo.js';
import { builtVersions, storeStandIns, storeVersions, versionAddresses, versionKeysOf } from './page-versions.js';
import { readingMinutes } from './reading-time.js';

type Context = Pick<JobContext, 'blobs' | 'signal'> & Partial<JobContext>;

/**
 * The job handler: read the content, name its versions and build them (after the result, when the
 * runner takes deferred work). The full JobContext (the job runners give it) is needed for the
 * images and the CPU pool; with only the blob store every image is removed and the DOM work runs
 * in-process.
 */
export async function runPageContentJob(input: PageContentInput, ctx: Context): Promise<PageContentResult> {
  const started = Date.now();
  const read = await runCpuTask(ctx.config, 'readPageContent', { url: input.url, bytesBase64: input.bytesBase64, contentType: input.contentType }, ctx.signal);
  ctx.signal?.throwIfAborted();
  const digest = pageDigest({ url: input.url, contentType: input.contentType, bytes: Buffer.from(input.bytesBase64, 'base64') });
  const result: PageContentResult = { words: read.words, cjkChars: read.cjkChars, article: read.article };
  if (read.title) result.title = read.title;
  if (read.excerpt) result.excerpt = read.excerpt;
  // No versions, for a reason of the page's own. A record that named them before the read (its card
  // was ready first) finds stand-ins there; the memo tells the next preview to name none.
  const reason = read.refused ?? (!read.versions && !read.images ? 'no text' : undefined);
  if (reason) {
    const none = { ...result, reason };
    await Promise.all([storeStandIns(ctx.blobs, digest, { forget: false }), rememberContent(ctx.blobs, digest, { content: none })]).catch(() => undefined);
    return none;
  }
  result.estimatedReadingTimeInMinutes = readingMinutes(read);
  const named: PageContentResult = { ...result, ...versionAddresses(ctx.blobs, digest) };
  const deadline = input.deadline ?? started + PAGE_IMAGE_LIMITS.defaultMs + PAGE_IMAGE_LIMITS.reserveMs;
  // A build that starts later than now (parked until the process is idle or its versions are
  // asked for: JobContext.defer's key) has as much time from its start as it has from now.
  const allowance = deadline - Date.now();
  const build = () => {
    const late = Math.max(0, Date.now() + allowance - deadline);
    return buildVersions(read, { digest, deadline: deadline + late, started: started + late }, ctx);
  };
  // The result for the next preview of these bytes (the record may have gone out without it).
  const remember = () => rememberContent(ctx.blobs, digest, { content: named, until: deadline }).then(() => undefined);
  if (ctx.defer) {
    ctx.defer(remember);
    // Only a build with images to host may be parked: the others are three writes.
    ctx.defer(async () => void (await build()), read.images ? { key: digest } : undefined);
    return named;
  }
  const [built] = await Promise.all([build(), remember()]);
  return built?.images ? { ...named, images: built.images } : named;
}

/**
 * Builds and stores the versions, all by the job's `deadline` (its own timer: the runner's signal
 * may no longer be kept once the result has gone out); stand-ins when that fails. Never throws.
 * Returns what was built (undefined: stand-ins).
 */
async function buildVersions(
  read: PageContentRead,
  job: { digest: string; deadline: number; started: number },
  ctx: Context,
): Promise<{ images?: { found: number; hosted: number } } | undefined> {
  const keys = versionKeysOf(job.digest);
  const timer = AbortSignal.timeout(Math.max(0, job.deadline - Date.now()));
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timer]) : timer;
  try {
    const before = await builtVersions(ctx.blobs, keys);
    if (before) return before;
    signal.throwIfAborted();
    const { versions, images } = await hostAndWrite(read, { ...ctx, signal }, pageImagesUntil({ deadline: job.deadline, started: job.started }));
    signal.throwIfAborted();
    await storeVersions(ctx.blobs, keys, { ...versions, text: read.text, ...(images ? { images } : {}) });
    return images ? { images } : {};
  } catch {
    await storeStandIns(ctx.blobs, job.digest).catch(() => undefined); // else the server of the address stores them
    return undefined;
  }
}

/** The HTML and Markdown with the content's images hosted until `until` (each <img> rewritten or removed); as read when it has none. */
async function hostAndWrite(
  read: PageContentRead,
  ctx: Context & { signal: AbortSignal },
  until: number,
): Promise<{ versions: PageVersions; images?: { found: number; hosted: number } }> {
  if (!read.images) {
    if (!read.versions) throw new Error('no versions to write');
    return { versions: read.versions };
  }
  const { urls, content } = read.images;
  const hosted = await hostPageImages(urls, ctx, until);
  ctx.signal.throwIfAborted();
  const versions = await runCpuTask(ctx.config, 'writePageVersions', { content, hosted: Object.fromEntries(hosted) }, ctx.signal);
  return { versions, images: { found: urls.length, hosted: hosted.size } };
}
