/**
 * The image job: one source image (a URL or bytes already fetched) becomes four WebP renditions
 * (lib/media/image-sizes.ts), or those its input asks for (an icon: `original` only), stored under
 * content-addressed keys. Pure function of its input and the JobContext; the same code runs
 * in-process locally and in the worker Lambda on AWS. The pixels are the renderer's
 * (lib/media/render-image.ts); this file is the job around it:
 *
 *  - download through the SSRF-guarded fetcher, capped in bytes and time;
 *  - render (lib/media/render-image.ts) under the job's memory hold; a still size that would be
 *    the original again (`large` for a source within 1280 px) is neither encoded nor stored twice:
 *    its URL is the original's;
 *  - a source already rendered (its `original` carries a manifest with the sizes asked for) is
 *    not rendered again; one stored in fewer sizes (an icon) gets the missing ones. A URL that
 *    failed recently for a reason of its own is not downloaded again (URL_MEMO);
 *  - store the renditions, the `original` last with the manifest;
 *  - the placeholders (dominant colour, blurhash) come with the render and are kept in the
 *    manifest, so a reused source has them with no decode; a manifest stored before them gets
 *    them once (missingSizes).
 * Anything wrong with the image is a `{reason}` result, not a thrown error: a broken image is
 * left out of the record, and on AWS a deterministic failure must not be retried.
 */
import { createHash } from 'node:crypto';
import { ASSET_METADATA } from '../asset-metadata.js';
import { ExpectedFailure, isTransientStatus, required } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import type { HostedImage, ImageJobInput, ImageJobResult } from '../jobs/kinds.js';
import { FAILED_MEMO_TTL_MS, memoKey, readMemo, writeMemo } from '../jobs/memo.js';
import { imageRenderMb, MemoryWaitAborted, type RenderSize } from '../jobs/memory.js';
import { type BlobStore, IMMUTABLE_CACHE, type PutOptions } from '../ports.js';
import { ImageRejected } from './image-input.js';
import { IMAGE_SIZE_NAMES, type ImageSizeName, RENDITION_CONTENT_TYPE, renditionKey, renditionSizeMetadata } from './image-sizes.js';
import type { Placeholders } from './placeholders.js';
import { type PlannedRendition, type RenderedImage, type RenderOptions, type Rendition, renderImage, startRender } from './render-image.js';
import type { ImageFormat } from './sniff-image.js';

interface RenditionInfo {
  width: number;
  height: number;
  bytes: number;
  /**
   * Set when this size is stored as the `original`'s object (the same bytes: the renderer's
   * `sameAs`), not under its own key. Absent, as in every manifest stored before it existed: the
   * size's own key (renditionKey).
   */
  sameAs?: 'original';
}

/**
 * What is known of a rendered source; stored as the metadata of its `original` rendition's object
 * (MANIFEST_METADATA), which is put last: an `original` with a manifest means every size it names
 * is stored (the dedupe marker; one HEAD reads it, and no object of its own is put for it).
 */
interface ImageManifest {
  sha256: string;
  /** The source: its format (sniffed), size in bytes, oriented pixel size and alpha. */
  format: ImageFormat;
  size: number;
  width: number;
  height: number;
  hasAlphaChannel: boolean;
  animated: boolean;
  /** A background colour derived from the pixels (edge or contrast colour), for icons. */
  edgeColor: string;
  /**
   * The render's placeholders (RenderedImage.placeholders). Absent in a manifest stored before
   * them: its `original` counts as missing, so the next job renders it again (one decode) and
   * stores the manifest with them.
   */
  dominantColor?: string;
  blurhash?: string;
  /**
   * The sizes stored. All four, unless the source was rendered only in some (ImageJobInput.sizes:
   * an icon's `original`): a job that wants a size missing here renders it and stores the
   * `original` again with the new manifest (renderSource).
   */
  renditions: Partial<Record<ImageSizeName, RenditionInfo>>;
}

/**
 * An image URL that failed for a reason of its own (a 404, undecodable bytes, too large) is
 * remembered under `jobs/` (private; on AWS expired after a day with the job results) and not
 * tried again for URL_MEMO.failedMs: a broken og:image is otherwise fetched on every preview of
 * its page. A rendered URL is not remembered here: the preview remembers the record's hosted
 * images with its page (lib/page/page-memo.ts), and a source rendered before costs a download and
 * a HEAD (its content hash finds its manifest), not another put.
 */
export const URL_MEMO = { failedMs: FAILED_MEMO_TTL_MS };
interface UrlMemo {
  at: number;
  reason?: string;
}

const urlMemoKey = (url: string) => memoKey('image-url', url);

/** The failure remembered for `url`, or undefined (none, too old or unreadable: download as usual). */
async function recalledFailure(ctx: JobContext, url: string): Promise<string | undefined> {
  const m = (await readMemo(ctx.blobs, urlMemoKey(url))) as UrlMemo | undefined;
  if (!m || typeof m.at !== 'number' || typeof m.reason !== 'string') return undefined;
  const age = Date.now() - m.at;
  return age >= 0 && age < URL_MEMO.failedMs ? m.reason : undefined;
}

/** The sizes a job renders, in IMAGE_SIZES order: those of its input (unknown names ignored), or all four. */
function wantedSizes(input: ImageJobInput): ImageSizeName[] {
  const asked = Array.isArray(input.sizes) ? IMAGE_SIZE_NAMES.filter((n) => input.sizes?.includes(n)) : [];
  return asked.length > 0 ? asked : [...IMAGE_SIZE_NAMES];
}

/** At most this many sources in one job (`url` and its `alternatives`). */
export const MAX_IMAGE_ALTERNATIVES = 4;

export async function runImageJob(input: ImageJobInput, ctx: JobContext): Promise<ImageJobResult> {
  const alternatives = input.bytesBase64 === undefined && Array.isArray(input.alternatives) ? input.alternatives : [];
  let result = await runOneImage(input, ctx);
  let lasting = result.lasting === true;
  // The next candidate while this one could not be hosted (and the job is not aborted).
  for (const url of alternatives.slice(0, MAX_IMAGE_ALTERNATIVES - 1)) {
    if (result.image || ctx.signal?.aborted) break;
    if (typeof url !== 'string') continue;
    result = await runOneImage({ url, ...(input.sizes ? { sizes: input.sizes } : {}) }, ctx);
    lasting &&= result.lasting === true;
  }
  // Lasting only when every candidate's failure is.
  return result.image ? result : { reason: result.reason, ...(lasting ? { lasting } : {}) };
}

async function runOneImage(input: ImageJobInput, ctx: JobContext): Promise<ImageJobResult> {
  const url = input.bytesBase64 === undefined ? input.url : undefined;
  const sizes = wantedSizes(input);
  if (url) {
    const failed = await recalledFailure(ctx, url);
    if (failed) return { reason: `${failed} (remembered)`, lasting: true };
  }
  try {
    return { image: await renderSource(input, sizes, ctx) };
  } catch (err) {
    // Anything wrong with the image (or its download) is a reason; anything else is a bug.
    if (!(err instanceof ExpectedFailure)) throw err;
    // A failure is remembered only when it is the image's own (a 404, undecodable bytes, too large),
    // not a timeout, a 5xx or the record's deadline, which may pass; nor when the job was aborted.
    const lasting = !err.transient && !ctx.signal?.aborted;
    if (url && lasting) await writeMemo(ctx.blobs, urlMemoKey(url), { at: Date.now(), reason: err.message } satisfies UrlMemo);
    return { reason: err.message, ...(lasting ? { lasting } : {}) };
  }
}

/**
 * Downloads (or takes) the source and renders it in `sizes` (at most once: a stored manifest with
 * them is reused). A stored manifest without some of them (the source was hosted as an icon, in
 * `original` only) is kept: the missing sizes are rendered and stored, then the `original` again
 * with the manifest of every size.
 */
async function renderSource(input: ImageJobInput, sizes: readonly ImageSizeName[], ctx: JobContext): Promise<HostedImage> {
  // The job's parts for Server-Timing (`images-download`, `images-render`, `images-store`).
  const timed = async <T>(part: string, p: Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await p;
    } finally {
      ctx.mark?.(part, performance.now() - t0);
    }
  };
  const bytes = await timed('download', sourceBytes(input, ctx));
  checkAborted(ctx.signal);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const stored = await timed('store', readManifest(ctx, sha256));
  const missing = stored ? missingSizes(stored, sizes) : sizes;
  if (stored && missing.length === 0) return toHostedImage(stored, sizes, ctx, true);
  // The `original` carries the manifest, so it is put (last) whenever the manifest changes.
  const toRender = IMAGE_SIZE_NAMES.filter((n) => n === 'original' || missing.includes(n));

  const memory = ctx.memory;
  const reserve = memory && ((size: RenderSize) => memory.hold(imageRenderMb(size, ctx.config.maxImagePixels), ctx.signal));
  const placeholders = wantsPlaceholders(sizes);
  // A store that holds reads (the local server's): the result goes out once the sizes are known,
  // their encodes still running (not an icon's: its record's background is its encode's edge colour).
  const later = placeholders ? ctx.blobs.putLater?.bind(ctx.blobs) : undefined;
  const options: RenderOptions = { maxPixels: ctx.config.maxImagePixels, reserve, sizes: toRender, placeholders, early: !!later };
  const started = await timed('render', startRender(bytes, options).catch(asImageFailure));
  checkAborted(ctx.signal);
  if (later) {
    // Encodes of pixels in memory do not fail but for want of memory or time: once more, from the
    // bytes, with no deadline (the addresses are out), before the sizes would be missing.
    const again = () =>
      renderImage(bytes, { ...options, early: false, reserve: memory && ((size) => memory.hold(imageRenderMb(size, ctx.config.maxImagePixels))) });
    const finished = started.done.catch(again).then((rendered) => ({ rendered, manifest: manifestOf(sha256, rendered, stored) }));
    void storeSizes(later, sha256, started.sizes, finished).catch(() => undefined); // a failure is the store's to log
    const planned = { source: started.source, renditions: started.sizes, edgeColor: '', placeholders: started.placeholders };
    return toHostedImage(manifestOf(sha256, planned, stored), sizes, ctx, false);
  }
  const rendered = await timed('render', started.done.catch(asImageFailure));
  checkAborted(ctx.signal);
  const manifest = manifestOf(sha256, rendered, stored);
  await timed('store', storeRendered(ctx.blobs, sha256, rendered, manifest));
  return toHostedImage(manifest, sizes, ctx, false);
}

/** sharp's errors are about the input (unsupported, truncated, over the pixel limit ...): an ImageRejected; our own bugs are not. */
function asImageFailure(err: unknown): never {
  if (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof MemoryWaitAborted) throw err;
  throw err instanceof ExpectedFailure ? err : new ImageRejected(`undecodable image: ${(err as Error).message}`);
}

/** A render's manifest (its sizes' bytes unknown, 0, while they encode: startRender), over what `stored` had. */
function manifestOf(
  sha256: string,
  rendered: Pick<RenderedImage, 'source' | 'edgeColor' | 'placeholders'> & { renditions: (PlannedRendition & { data?: Buffer })[] },
  stored: ImageManifest | undefined,
): ImageManifest {
  const renditions: ImageManifest['renditions'] = { ...stored?.renditions };
  for (const r of rendered.renditions) {
    // A size that is the original's bytes is not put again: the manifest sends it to `original.webp`.
    renditions[r.name] = { width: r.width, height: r.height, bytes: r.data?.length ?? 0, ...(r.sameAs ? { sameAs: r.sameAs } : {}) };
  }
  // The edge colour comes from the thumbnail, else the original (renderImage): a manifest of an
  // icon (`original` only) gets the thumbnail's once a later job renders it, and keeps it when
  // only its `original` is rendered again (for the placeholders: missingSizes).
  const thumbnail = rendered.renditions.some((r) => r.name === 'thumbnail');
  const edgeColor = (thumbnail ? rendered.edgeColor : stored?.edgeColor) || rendered.edgeColor || '';
  // A render without them (an icon's) keeps those a manifest stored before had.
  const kept = rendered.placeholders ?? (stored ? manifestPlaceholders(stored) : {});
  return { sha256, ...rendered.source, edgeColor, ...kept, renditions };
}

const putOptions = (metadata: Record<string, string>): PutOptions => ({ contentType: RENDITION_CONTENT_TYPE, cacheControl: IMMUTABLE_CACHE, metadata });

/**
 * Stores a render's sizes now, the `original` last with the manifest: its manifest means every
 * size it names is stored. No HEAD before each put: the manifest was missing (or lacked these
 * sizes), so the renditions are (most likely) too, and a key names its content, so a put over a
 * stored rendition writes the same image again.
 */
function storeRendered(blobs: BlobStore, sha256: string, rendered: RenderedImage, manifest: ImageManifest): Promise<void> {
  const now: NonNullable<BlobStore['putLater']> = async (key, made, after) => {
    const [{ body, options }] = await Promise.all([made, after]);
    await blobs.put(key, body, options);
  };
  return storeSizes(now, sha256, rendered.renditions, Promise.resolve({ rendered, manifest }));
}

/**
 * Puts each size of a render through `put` (BlobStore.putLater: every key held at once, the bytes
 * once `finished`), the `original` with the manifest after the others are written. Resolves once
 * the `original` is.
 */
function storeSizes(
  put: NonNullable<BlobStore['putLater']>,
  sha256: string,
  sizes: readonly PlannedRendition[],
  finished: Promise<{ rendered: RenderedImage; manifest: ImageManifest }>,
): Promise<void> {
  const made = (name: ImageSizeName, metadata: (r: Rendition, manifest: ImageManifest) => Record<string, string>) =>
    finished.then(({ rendered, manifest }) => {
      const r = required(
        rendered.renditions.find((x) => x.name === name),
        `the ${name} rendition`,
      );
      return { body: r.data, options: putOptions(metadata(r, manifest)) };
    });
  const others = sizes.filter((s) => s.name !== 'original' && !s.sameAs);
  const written = others.map((s) => put(renditionKey(sha256, s.name), made(s.name, renditionSizeMetadata)));
  return put(
    renditionKey(sha256, 'original'),
    made('original', (_r, manifest) => ({ [MANIFEST_METADATA]: JSON.stringify(manifest) })),
    Promise.all(written),
  );
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('aborted');
}

/** The source's bytes: given, or downloaded through the guarded fetcher under the image cap (an ExpectedFailure when they cannot be had). */
export async function sourceBytes(input: ImageJobInput, ctx: Pick<JobContext, 'fetch' | 'config' | 'signal'>): Promise<Buffer> {
  const max = ctx.config.maxImageBytes;
  if (input.bytesBase64 !== undefined) {
    const bytes = Buffer.from(input.bytesBase64, 'base64');
    if (bytes.length > max) throw new ImageRejected(`image larger than ${max} bytes`);
    if (bytes.length === 0) throw new ImageRejected('empty image');
    return bytes;
  }
  if (!input.url) throw new ImageRejected('no image source');
  const res = await ctx.fetch(input.url, {
    maxBytes: max,
    onTooLarge: 'fail',
    timeoutMs: ctx.config.fetchTimeoutMs,
    signal: ctx.signal,
    headers: { accept: 'image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5' },
  });
  if (res.status < 200 || res.status >= 300) throw new ImageRejected(`image answered HTTP ${res.status}`, { transient: isTransientStatus(res.status) });
  if (res.truncated) throw new ImageRejected('image download broke off');
  if (res.body.length === 0) throw new ImageRejected('empty image');
  return res.body;
}

/** The metadata name the manifest is stored under on the `original`'s object. */
const MANIFEST_METADATA = ASSET_METADATA.manifest;

/** The manifest of a source rendered before (on its `original`'s object), or undefined: none, or unreadable (rendered again). */
async function readManifest(ctx: JobContext, sha256: string): Promise<ImageManifest | undefined> {
  const raw = (await ctx.blobs.head(renditionKey(sha256, 'original')))?.metadata[MANIFEST_METADATA];
  if (!raw) return undefined;
  try {
    const m = JSON.parse(raw) as ImageManifest;
    return m.renditions && typeof m.renditions === 'object' && m.sha256 === sha256 ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The sizes of `sizes` a manifest does not have. A size that shares the original's object counts
 * only when the manifest has the original too. A manifest without the placeholders (stored before
 * them) lacks its `original` too: that one size is rendered again, from one decode of the source,
 * and the manifest stored with them on it (its other sizes are kept). Once per source, where
 * leaving them out would leave its records without them for good.
 */
function missingSizes(m: ImageManifest, sizes: readonly ImageSizeName[]): ImageSizeName[] {
  const has = (name: ImageSizeName) => {
    const r = m.renditions[name];
    return (
      !!r && typeof r.width === 'number' && typeof r.height === 'number' && (r.sameAs === undefined || (r.sameAs === 'original' && !!m.renditions.original))
    );
  };
  const missing = sizes.filter((name) => !has(name));
  return hasPlaceholders(m) || missing.includes('original') || !wantsPlaceholders(sizes) ? missing : [...missing, 'original'];
}

/**
 * Whether a job for `sizes` makes the placeholders: not an icon's (`original` alone: a record's
 * icon carries none, and they cost a resize and a blurhash on the card's path); a later job that
 * hosts the same source as an image renders its `original` again once for them (missingSizes).
 */
function wantsPlaceholders(sizes: readonly ImageSizeName[]): boolean {
  return sizes.some((name) => name !== 'original');
}

const hasPlaceholders = (m: ImageManifest): m is ImageManifest & Placeholders => typeof m.dominantColor === 'string' && typeof m.blurhash === 'string';

/** The key of the object a manifest's size is stored as: its own, or the original's when it shares that (`sameAs`). */
function storedKey(m: ImageManifest, name: ImageSizeName): string {
  return renditionKey(m.sha256, m.renditions[name]?.sameAs === 'original' ? 'original' : name);
}

/** A manifest's placeholders, as a hosted image carries them (none in a manifest stored before them). */
function manifestPlaceholders(m: ImageManifest): Partial<Placeholders> {
  return hasPlaceholders(m) ? { dominantColor: m.dominantColor, blurhash: m.blurhash } : {};
}

/** The hosted image in `sizes` (the manifest has them all: missingSizes). */
function toHostedImage(m: ImageManifest, sizes: readonly ImageSizeName[], ctx: JobContext, reused: boolean): HostedImage {
  const assets: Partial<Pick<HostedImage, ImageSizeName>> = {};
  for (const name of sizes) {
    const r = required(m.renditions[name], `the manifest's ${name}`);
    assets[name] = { width: r.width, height: r.height, url: ctx.blobs.publicUrl(storedKey(m, name)) };
  }
  return {
    width: m.width,
    height: m.height,
    size: m.size,
    format: m.format,
    hasAlphaChannel: m.hasAlphaChannel,
    ...assets,
    sha256: m.sha256,
    animated: m.animated,
    edgeColor: m.edgeColor,
    ...manifestPlaceholders(m),
    reused,
  };
}
