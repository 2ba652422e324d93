/**
 * The `page-content` job: the main content of an HTML page as three hosted text versions
 * (sanitized HTML, Markdown, plain text) and its reading time.
 *
 * The DOM work (decode, linkedom, Readability or the body minus boilerplate, the sanitizer,
 * turndown, the plain text) is lib/page/page-content-dom.ts; it runs in the CPU pool's threads
 * (lib/jobs/cpu-pool.ts: off the event loop, cancelled at the job's deadline) or, with the pool
 * off, in-process. Here, between its two steps, the content's images are hosted (lib/page/page-images.ts)
 * so that each <img> is rewritten or removed before the HTML and Markdown are written: the hosted
 * HTML allows images from its own origin only. The versions do not wait for downloads: those go
 * on after the result (JobContext.defer), and once all are hosted the complete versions are
 * stored at the key the first ones' result names (`fullKey`, a `page.full.html`: lib/page/page-memo.ts),
 * where the next preview of the same content finds them, whether it reads the page memo (the same
 * bytes) or runs this job (its bytes changed). Versions complete at once are marked `complete`
 * and remembered by the preview, with the rest of its record. The versions are content-addressed, stored as UTF-8 with their charset
 * in the Content-Type, each put only when it is not stored yet (a page whose bytes changed but
 * whose content did not gives the same versions): `page.html`, stored last, names the other two,
 * so one HEAD finds all three.
 */

import { required } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import { runCpuTask } from '../jobs/cpu-pool.js';
import type { ContentImage, PageContentInput, PageContentResult } from '../jobs/kinds.js';
import { type BlobStore, IMMUTABLE_CACHE } from '../ports.js';
import { assetKeyOf } from '../storage-keys.js';
import type { ContentParts, PageContentRead, PageVersions } from './page-content-dom.js';
import { hostPageImages, pageImageTimes } from './page-images.js';
import { fullVersionsKey, readFullVersions, versionsMetadata } from './page-memo.js';
import { readingMinutes } from './reading-time.js';

/** A text asset: its UTF-8 bytes and its key, `assets/<sha256>/<name>`. */
function textAsset(name: string, text: string): { key: string; bytes: Buffer } {
  const bytes = Buffer.from(text, 'utf8');
  return { key: assetKeyOf(bytes, name), bytes };
}

export const PAGE_ASSET_TYPES = {
  html: 'text/html; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
} as const;

/**
 * The job handler: read the content, host its images (rewriting or removing each <img>), store
 * the three versions, count the reading time. The full JobContext (the job runners give it) is
 * needed for the images and the CPU pool; with only the blob store every image is removed and the
 * DOM work runs in-process.
 */
export async function runPageContentJob(input: PageContentInput, ctx: Pick<JobContext, 'blobs' | 'signal'> & Partial<JobContext>): Promise<PageContentResult> {
  const started = Date.now();
  const read = await runCpuTask(ctx.config, 'readPageContent', { url: input.url, bytesBase64: input.bytesBase64, contentType: input.contentType }, ctx.signal);
  ctx.signal?.throwIfAborted();
  const result: PageContentResult = { words: read.words, cjkChars: read.cjkChars, article: read.article };
  if (read.title) result.title = read.title;
  if (read.excerpt) result.excerpt = read.excerpt;
  // No versions, for a reason of the page's own: as complete as the page gets (the preview remembers it).
  if (read.refused) return { ...result, reason: read.refused, complete: true };
  if (!read.versions && !read.images) return { ...result, reason: 'no text', complete: true };
  result.estimatedReadingTimeInMinutes = readingMinutes(read);
  // Stopped when the complete versions turn out to be stored already (below).
  const imagesStop = new AbortController();
  const imagesSignal = ctx.signal ? AbortSignal.any([ctx.signal, imagesStop.signal]) : imagesStop.signal;
  const hosting = await hostAndWrite(read, { input, ctx: { ...ctx, signal: imagesSignal }, jobSignal: ctx.signal, started });
  if (hosting.images) result.images = hosting.images;
  // What the images left under way came to while the versions were written and stored (nothing
  // waits for them): `pending` while they still run.
  const late = settledLater(hosting.rest);
  const written = required(hosting.versions, 'the page versions');
  const first = await storeVersions(ctx.blobs, result, { ...written, text: read.text });
  const content = read.images?.content;
  let { complete, rest } = hosting;
  // The ones under way all failed for reasons of their own by now (a 404 answers at once): these
  // versions are the complete ones, and the preview remembers them with the record.
  const settled = late();
  if (rest && settled !== 'pending' && settled !== undefined && settled.size === hosting.hostedInTime) {
    complete = true;
    rest = undefined;
  }
  if (complete || !rest || !content) {
    imagesStop.abort(); // nothing is left under way (or nothing more is wanted)
    return complete ? { ...first.result, complete } : first.result;
  }
  // Not complete: the complete versions will be at `page.full.html` (fullKey). An earlier preview
  // of the same content (its bytes changed, say) may have stored them: then they are the result,
  // and the images under way are stopped.
  const pending: PageContentResult = { ...first.result, fullKey: fullVersionsKey(first.htmlKey, read.images?.urls ?? []) };
  const stored = await readFullVersions(ctx.blobs, pending).catch(() => undefined);
  if (stored) {
    imagesStop.abort();
    return stored;
  }
  const remaining = rest;
  const later = () =>
    storeWhenHosted({
      rest: remaining,
      ctx,
      key: required(pending.fullKey, 'the complete versions key'),
      content,
      first: { versions: { ...written, text: read.text }, textKey: first.textKey, images: result.images },
      found: read.images?.urls.length ?? 0,
      hostedInTime: hosting.hostedInTime,
    });
  if (ctx.defer) ctx.defer(later);
  else void later().catch(() => undefined); // the next preview runs the job again
  return pending;
}

/** The content's versions, after its images are hosted when it has any (each <img> rewritten or removed). */
interface HostedVersions {
  versions?: PageVersions;
  /** Every image hosted in time, or failed for a reason of its own (no images: true). */
  complete: boolean;
  /** The images left under way (PageImagesHosted.rest). */
  rest?: Promise<Map<string, ContentImage> | undefined>;
  hostedInTime: number;
  images?: { found: number; hosted: number };
}

/** Hosts the content's images until their times (pageImageTimes), then writes the versions with them. */
async function hostAndWrite(
  read: PageContentRead,
  job: { input: PageContentInput; ctx: Pick<JobContext, 'blobs' | 'signal'> & Partial<JobContext>; jobSignal: AbortSignal | undefined; started: number },
): Promise<HostedVersions> {
  if (!read.images) return { versions: read.versions, complete: true, hostedInTime: 0 };
  const { ctx } = job;
  const times = pageImageTimes({ deadline: job.input.deadline, started: job.started, now: Date.now(), waitMs: ctx.config?.pageImagesWaitMs });
  const hosted = await hostPageImages(read.images.urls, ctx, times);
  const images = read.images.urls.length ? { found: read.images.urls.length, hosted: hosted.hosted.size } : undefined;
  job.jobSignal?.throwIfAborted();
  const versions = await runCpuTask(
    ctx.config,
    'writePageVersions',
    { content: read.images.content, hosted: Object.fromEntries(hosted.hosted) },
    job.jobSignal,
  );
  return { versions, complete: hosted.complete, rest: hosted.rest, hostedInTime: hosted.hosted.size, ...(images ? { images } : {}) };
}

/** What `rest` has come to so far: `pending` while it runs, then its map, or undefined (some failed or were stopped). */
function settledLater(rest: Promise<Map<string, ContentImage> | undefined> | undefined): () => Map<string, ContentImage> | undefined | 'pending' {
  let settled: Map<string, ContentImage> | undefined | 'pending' = 'pending';
  rest?.then(
    (all) => {
      settled = all;
    },
    () => {
      settled = undefined;
    },
  );
  return () => settled;
}

/**
 * Once the remaining images are hosted: the complete versions, at `key` (the first versions'
 * `fullKey`). When none of them could be hosted after all (each failed for a reason of its own),
 * the first versions are the complete ones: `page.full.html` is their page.html again.
 */
async function storeWhenHosted(later: {
  rest: Promise<Map<string, ContentImage> | undefined>;
  ctx: Pick<JobContext, 'blobs' | 'signal'> & Partial<JobContext>;
  key: string;
  content: ContentParts;
  /** The first versions, the key of their text, and their images' count. */
  first: { versions: { html: string; markdown: string; text: string }; textKey: string; images: { found: number; hosted: number } | undefined };
  found: number;
  hostedInTime: number;
}): Promise<void> {
  const { ctx, key, first } = later;
  const all = await later.rest;
  if (!all || ctx.signal?.aborted) return;
  if (all.size > later.hostedInTime) {
    const html = await runCpuTask(ctx.config, 'writePageVersions', { content: later.content, hosted: Object.fromEntries(all) }, ctx.signal);
    const images = { found: later.found, hosted: all.size };
    await storeFullVersions(ctx.blobs, { key, versions: { ...html, text: first.versions.text }, textKey: first.textKey, images });
  } else {
    await storeFullVersions(ctx.blobs, { key, ...first });
  }
}

/**
 * Stores the three versions (content-addressed, UTF-8, their charset in the Content-Type); the
 * result with their public URLs. `page.html` goes last and names the other two in its metadata,
 * so one HEAD tells whether all three are stored (a page whose bytes changed but whose content
 * did not gives the same versions): none is put then.
 */
async function storeVersions(
  blobs: BlobStore,
  result: PageContentResult,
  versions: { html: string; markdown: string; text: string },
): Promise<{ result: PageContentResult; htmlKey: string; textKey: string }> {
  const html = textAsset('page.html', versions.html);
  const markdown = textAsset('page.md', versions.markdown);
  const text = textAsset('page.txt', versions.text);
  const siblings = versionsMetadata({ markdown: markdown.key, text: text.key });
  const stored = (await blobs.head(html.key))?.metadata;
  if (Object.entries(siblings).some(([name, value]) => stored?.[name] !== value)) {
    await Promise.all([put(blobs, markdown, PAGE_ASSET_TYPES.markdown), put(blobs, text, PAGE_ASSET_TYPES.text)]);
    await put(blobs, html, PAGE_ASSET_TYPES.html, siblings);
  }
  return {
    result: { ...result, htmlUrl: blobs.publicUrl(html.key), markdownUrl: blobs.publicUrl(markdown.key), rawTextUrl: blobs.publicUrl(text.key) },
    htmlKey: html.key,
    textKey: text.key,
  };
}

/**
 * Stores the complete versions at `key` (`page.full.html`, last, naming its page.md and the first
 * versions' page.txt, `textKey`: the text has no images), its page.md content-addressed.
 */
async function storeFullVersions(
  blobs: BlobStore,
  full: { key: string; versions: { html: string; markdown: string; text: string }; textKey: string; images: { found: number; hosted: number } | undefined },
): Promise<void> {
  const { key, versions, textKey, images } = full;
  const markdown = textAsset('page.md', versions.markdown);
  if (!(await blobs.head(markdown.key))) await put(blobs, markdown, PAGE_ASSET_TYPES.markdown);
  const html = { key, bytes: Buffer.from(versions.html, 'utf8') };
  await put(blobs, html, PAGE_ASSET_TYPES.html, versionsMetadata({ markdown: markdown.key, text: textKey }, images));
}

function put(blobs: BlobStore, a: { key: string; bytes: Buffer }, contentType: string, metadata?: Record<string, string>): Promise<void> {
  return blobs.put(a.key, a.bytes, { contentType, cacheControl: IMMUTABLE_CACHE, ...(metadata ? { metadata } : {}) });
}
