/**
 * The image job: one source image (a URL or bytes already fetched) becomes four WebP renditions
 * (lib/media/image-sizes.ts), or those its input asks for (an icon: `original` only), stored under
 * content-addressed keys. Pure function of its input and the JobContext; the same code runs
 * in-process locally and in the worker Lambda on AWS.
 *
 *  - download through the SSRF-guarded fetcher, capped in bytes and time;
 *  - sniff the real format from the bytes; ICO and BMP are decoded here (sharp cannot read them),
 *    SVG is made safe first (lib/media/svg-safety.ts);
 *  - decode with sharp under `limitInputPixels` (decompression bombs are refused), honour EXIF
 *    orientation, strip metadata, never upscale, keep alpha; the first frame of an animation is
 *    used for the stills and `original` stays animated; a still size that would be the original
 *    again (`large` for a source within 1280 px) is neither encoded nor stored twice: its URL is
 *    the original's;
 *  - a source already rendered (its `original` carries a manifest with the sizes asked for) is
 *    not rendered again; one stored in fewer sizes (an icon) gets the missing ones. A URL that
 *    failed recently for a reason of its own is not downloaded again (URL_MEMO);
 * Anything wrong with the image is a `{reason}` result, not a thrown error: a broken image is
 * left out of the record, and on AWS a deterministic failure must not be retried.
 */
import { createHash } from 'node:crypto';
import type { Sharp, SharpOptions } from 'sharp';
import { ASSET_METADATA } from '../asset-metadata.js';
import { ExpectedFailure, isTransientStatus, required } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import type { HostedImage, ImageJobInput, ImageJobResult } from '../jobs/kinds.js';
import { memoKey, readMemo, writeMemo } from '../jobs/memo.js';
import { imageRenderMb, MemoryWaitAborted, ONE_DECODE_MAX_PIXELS, type RenderSize } from '../jobs/memory.js';
import { IMMUTABLE_CACHE } from '../ports.js';
import { decodeBmp } from './bmp.js';
import { decodeIcoEntry, type IcoImage, icoEntries } from './ico.js';
import { iconBackgroundColor } from './icon-background.js';
import { fitWithin, IMAGE_SIZE_NAMES, IMAGE_SIZES, type ImageSizeName, RENDITION_CONTENT_TYPE, renditionKey, renditionSizeMetadata } from './image-sizes.js';
import { type ImageFormat, sniffImageFormat } from './sniff-image.js';
import { sanitizeSvg } from './svg-safety.js';

interface RenditionInfo {
  width: number;
  height: number;
  bytes: number;
  /**
   * Set when this size is stored as the `original`'s object (the same bytes: renderImage's
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
   * The sizes stored. All four, unless the source was rendered only in some (ImageJobInput.sizes:
   * an icon's `original`): a job that wants a size missing here renders it and stores the
   * `original` again with the new manifest (renderSource).
   */
  renditions: Partial<Record<ImageSizeName, RenditionInfo>>;
}

/** Raised for an image that cannot be hosted (the job turns it into a `{reason}` result). */
class ImageRejected extends ExpectedFailure {}

/**
 * An image URL that failed for a reason of its own (a 404, undecodable bytes, too large) is
 * remembered under `jobs/` (private; on AWS expired after a day with the job results) and not
 * tried again for URL_MEMO.failedMs: a broken og:image is otherwise fetched on every preview of
 * its page. A rendered URL is not remembered here: the preview remembers the record's hosted
 * images with its page (lib/page/page-memo.ts), and a source rendered before costs a download and
 * a HEAD (its content hash finds its manifest), not another put.
 */
export const URL_MEMO = { failedMs: 10 * 60_000 };
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
  const rendering = renderImage(bytes, { maxPixels: ctx.config.maxImagePixels, reserve, sizes: toRender }).catch((err: unknown) => {
    // sharp's errors are about the input (unsupported, truncated, over the pixel limit ...); our own bugs are not.
    if (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof MemoryWaitAborted) throw err;
    throw err instanceof ExpectedFailure ? err : new ImageRejected(`undecodable image: ${(err as Error).message}`);
  });
  const rendered = await timed('render', rendering);
  checkAborted(ctx.signal);
  const renditions: ImageManifest['renditions'] = { ...stored?.renditions };
  let original: Rendition | undefined;
  const others: Rendition[] = [];
  for (const r of rendered.renditions) {
    // A size that is the original's bytes is not put again: the manifest sends it to `original.webp`.
    renditions[r.name] = { width: r.width, height: r.height, bytes: r.data.length, ...(r.sameAs ? { sameAs: r.sameAs } : {}) };
    if (r.name === 'original') original = r;
    else if (!r.sameAs) others.push(r);
  }
  // The edge colour comes from the thumbnail, else the original (renderImage): a manifest of an
  // icon (`original` only) gets the thumbnail's once a later job renders it.
  const edgeColor = rendered.edgeColor || stored?.edgeColor || '';
  const manifest: ImageManifest = { sha256, ...rendered.source, edgeColor, renditions };
  // No HEAD before each put: the manifest was missing (or lacked these sizes), so the renditions
  // are (most likely) too, and a key names its content, so a put over a stored rendition writes
  // the same image again.
  const put = (r: Rendition, metadata: Record<string, string>) =>
    ctx.blobs.put(renditionKey(sha256, r.name), r.data, { contentType: RENDITION_CONTENT_TYPE, cacheControl: IMMUTABLE_CACHE, metadata });
  await timed(
    'store',
    (async () => {
      await Promise.all(others.map((r) => put(r, renditionSizeMetadata(r))));
      // The original goes last, with the manifest: its manifest means every size it names is stored.
      await put(required(original, 'the original rendition'), { [MANIFEST_METADATA]: JSON.stringify(manifest) });
    })(),
  );
  return toHostedImage(manifest, sizes, ctx, false);
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
 * only when the manifest has the original too.
 */
function missingSizes(m: ImageManifest, sizes: readonly ImageSizeName[]): ImageSizeName[] {
  const has = (name: ImageSizeName) => {
    const r = m.renditions[name];
    return (
      !!r && typeof r.width === 'number' && typeof r.height === 'number' && (r.sameAs === undefined || (r.sameAs === 'original' && !!m.renditions.original))
    );
  };
  return sizes.filter((name) => !has(name));
}

/** The key of the object a manifest's size is stored as: its own, or the original's when it shares that (`sameAs`). */
function storedKey(m: ImageManifest, name: ImageSizeName): string {
  return renditionKey(m.sha256, m.renditions[name]?.sameAs === 'original' ? 'original' : name);
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
    reused,
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering (no I/O): bytes in, WebP renditions out. Exported for the bench and for tests.

export interface Rendition {
  name: ImageSizeName;
  width: number;
  height: number;
  data: Buffer;
  /** Set on a still size whose pixels and encoding are the original's (see renderImage): the same bytes, stored once. */
  sameAs?: 'original';
}

export interface RenderedImage {
  source: { format: ImageFormat; size: number; width: number; height: number; hasAlphaChannel: boolean; animated: boolean };
  renditions: Rendition[];
  edgeColor: string;
}

export interface RenderOptions {
  maxPixels: number;
  /** WebP encoder effort 0-6 for every size (default: webpEffortFor each size). */
  effort?: number;
  quality?: number;
  /**
   * Called with the decoded size before the renders start; what it returns is called when they
   * end. The job takes its memory hold here (lib/jobs/memory.ts `imageRenderMb`).
   */
  reserve?: (size: RenderSize) => Promise<() => void>;
  /**
   * Only these sizes (default: all four). The edge colour is the thumbnail's, else the original's
   * (an icon is rendered in `original` only); without either there is none ('').
   */
  sizes?: readonly ImageSizeName[];
}

/**
 * WebP settings. Encoding the two big sizes dominates the time (about 80% of it for a 1600x1000
 * JPEG), so they use the fastest method (effort 0, about 3x faster than the default 4 for a few
 * percent more bytes); the small, most-viewed sizes use a higher effort, which costs nothing in
 * wall time because they finish while the big ones encode (see `npm run bench -- images`).
 */
const WEBP_QUALITY = 80;
function webpEffortFor(box: number | undefined): number {
  if (box !== undefined && box <= 320) return 4;
  if (box !== undefined && box <= 640) return 2;
  return 0;
}
/** A vector image has no pixel size of its own: it is rasterized so its longer side is at least this. */
const SVG_MIN_RASTER = 512;
/** sharp stops a pipeline that runs longer than this. */
const SHARP_TIMEOUT_SECONDS = 20;

/**
 * sharp (libvips, about 30 ms and 20 MB to load) is loaded by the first render, not with this
 * module: a process that previews no image (the CLI on a text page, a PDF, a platform link)
 * never loads it. Every use below runs within renderImage, after the load.
 */
let sharp: typeof import('sharp').default;
async function loadSharp(): Promise<void> {
  sharp ??= (await import('sharp')).default;
}

interface PreparedInput {
  input: Buffer;
  options: SharpOptions;
  format: ImageFormat;
  /** Known alpha for inputs decoded here (ICO/BMP); sharp's metadata says for the rest. */
  hasAlpha?: boolean;
}

export async function renderImage(bytes: Buffer, options: RenderOptions): Promise<RenderedImage> {
  await loadSharp();
  const prepared = await prepareInput(bytes, options.maxPixels);
  const meta = await sharp(prepared.input, prepared.options).metadata();
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new ImageRejected('image has no size');
  // Read without `animated`, the metadata describes the first frame; `pages` counts the frames.
  const stillHeight = height;
  if (width * stillHeight > options.maxPixels) throw new ImageRejected(`image of ${width}x${stillHeight} exceeds the pixel limit of ${options.maxPixels}`);
  const animated = (meta.pages ?? 1) > 1 && (prepared.format === 'gif' || prepared.format === 'webp');
  const quality = options.quality ?? WEBP_QUALITY;
  const effortFor = (box: number | undefined) => options.effort ?? webpEffortFor(box);
  /**
   * A still size whose box leaves the source as it is (a 1200x630 og:image in `large`'s 1280 box:
   * no resize, as `resized` returns the same pixels and sharp's `inside` fit never enlarges),
   * encoded with the `original`'s effort, would be the original's pixels encoded the same way:
   * the same bytes (test/media/images.test.ts checks it). It is not encoded again: it gets the
   * original's rendition under its own name, marked `sameAs: 'original'`. Not for an animation,
   * whose `original` is the animated render. Nor is it stored again: renderSource puts only the
   * original's object and the manifest sends the size to it (RenditionInfo.sameAs), so `large`'s
   * URL is `original.webp`. A put costs more than a distinct URL is worth (issue 29: 12 GETs for
   * the price of one put); the ImageSet still has four entries, each with its own width and
   * height, and a manifest stored before (every size under its own key) reads as it did.
   * Asked for without `original` (a job adding sizes to a source stored as an icon, whose
   * `original` is stored already), such a size is encoded itself, and still marked `sameAs`.
   */
  const wanted = new Set<ImageSizeName>(options.sizes ?? IMAGE_SIZES.map((s) => s.name));
  const isOriginal = (s: (typeof IMAGE_SIZES)[number]) => {
    if (s.box === undefined || animated || effortFor(s.box) !== effortFor(undefined)) return false;
    const fit = fitWithin(width, stillHeight, s.box);
    return fit.width === width && fit.height === stillHeight;
  };
  /** Given the original's encode rather than encoded itself. */
  const sharesEncode = (s: (typeof IMAGE_SIZES)[number]) => wanted.has('original') && isOriginal(s);
  const encoded = IMAGE_SIZES.filter((s) => wanted.has(s.name) && !sharesEncode(s));

  const encode = async (name: ImageSizeName, box: number | undefined, p: Sharp): Promise<Rendition> => {
    const { data, info } = await p.webp({ quality, effort: effortFor(box) }).toBuffer({ resolveWithObject: true });
    return { name, width: info.width, height: info.height, data };
  };
  const renderAnimatedOriginal = async (): Promise<Rendition | undefined> => {
    try {
      const { data, info } = await sharp(prepared.input, { ...prepared.options, animated: true })
        .timeout({ seconds: SHARP_TIMEOUT_SECONDS })
        .webp({ quality, effort: options.effort ?? 0 })
        .toBuffer({ resolveWithObject: true });
      return { name: 'original', width: info.width, height: info.pageHeight ?? stillHeight, data };
    } catch {
      return undefined; // the first frame, as a still
    }
  };

  const release = await options.reserve?.({
    width,
    height: stillHeight,
    format: prepared.format,
    hasAlpha: prepared.hasAlpha ?? !!meta.hasAlpha,
    pages: animated ? meta.pages : 1,
  });
  try {
    const animatedOriginal = animated ? renderAnimatedOriginal() : undefined;
    /** The rendition of a size; an animation's `original` is the animated render when there is one. */
    const render = (s: (typeof IMAGE_SIZES)[number], p: () => Sharp): Promise<Rendition> => {
      const still = () => encode(s.name, s.box, p());
      const r = s.name === 'original' && animatedOriginal ? animatedOriginal.then((a) => a ?? still()) : still();
      r.catch(() => undefined); // awaited with the others below; marked handled now, as it can fail before
      return r;
    };
    let renders: Promise<Rendition>[];
    if (prepared.format === 'svg' || width * stillHeight > ONE_DECODE_MAX_PIXELS) {
      // Each size rendered from the source: a vector image at its own scale; a very large image
      // with a decode per size (a JPEG shrinks on load), not its whole raw pixels in memory.
      renders = encoded.map((s) => render(s, () => (s.box === undefined ? pipeline(prepared) : pipeline(prepared).resize(insideBox(s.box)))));
    } else {
      // One decode (the first frame, oriented), then each size resized from the next larger
      // one's pixels (less work than a decode per size: `npm run bench -- images`) and encoded
      // while the next smaller one is resized. Each keeps the size it has when resized from the
      // source (sharp's `inside` fit: fitWithin).
      const full = await decoded(prepared);
      let image = full;
      renders = [];
      for (const s of [...encoded].reverse()) {
        image = await resized(image, s.box, fitWithin(full.width, full.height, s.box));
        const pixels = image;
        renders.unshift(render(s, () => pipeline(pixels)));
      }
    }
    const done = await Promise.all(renders);
    const byName = (name: ImageSizeName) =>
      required(
        done.find((r) => r.name === name),
        `the ${name} rendition`,
      );
    const renditions: Rendition[] = IMAGE_SIZES.filter((s) => wanted.has(s.name)).map((s) => {
      if (sharesEncode(s)) return { ...byName('original'), name: s.name, sameAs: 'original' };
      return isOriginal(s) ? { ...byName(s.name), sameAs: 'original' } : byName(s.name);
    });
    // The edge colour from the thumbnail (the smallest decode), else from the original (an icon's
    // only size; an animation's first frame): the same colour but for WebP's small losses.
    const edge = renditions.find((r) => r.name === 'thumbnail') ?? renditions.find((r) => r.name === 'original');
    const tiny = edge && (await sharp(edge.data).resize(32, 32, { fit: 'fill' }).ensureAlpha().raw().toBuffer());
    return {
      source: { format: prepared.format, size: bytes.length, width, height: stillHeight, hasAlphaChannel: prepared.hasAlpha ?? meta.hasAlpha, animated },
      renditions,
      edgeColor: tiny ? iconBackgroundColor(tiny, 32, 32) : '',
    };
  } finally {
    release?.();
  }
}

/** Raw pixels in memory, as a pipeline's input. */
interface DecodedImage {
  input: Buffer;
  options: SharpOptions;
  width: number;
  height: number;
}

function pipeline(image: { input: Buffer; options: SharpOptions }): Sharp {
  return sharp(image.input, image.options).timeout({ seconds: SHARP_TIMEOUT_SECONDS });
}

/** The image's raw pixels (oriented, the first frame of an animation): one decode of the source. */
async function decoded(image: { input: Buffer; options: SharpOptions }, resize?: (p: Sharp) => Sharp): Promise<DecodedImage> {
  const p = pipeline(image);
  const { data, info } = await (resize ? resize(p) : p).raw().toBuffer({ resolveWithObject: true });
  return { input: data, options: { raw: { width: info.width, height: info.height, channels: info.channels } }, width: info.width, height: info.height };
}

const insideBox = (box: number) => ({ width: box, height: box, fit: 'inside' as const, withoutEnlargement: true });

/**
 * The image fitted in a `box` square, at `size` (the same image when it has that size already):
 * the `inside` fit where it gives that size, else resized to it exactly (a fit of a fit can round
 * a side one pixel off).
 */
async function resized(image: DecodedImage, box: number | undefined, size: { width: number; height: number }): Promise<DecodedImage> {
  if (image.width === size.width && image.height === size.height) return image;
  const inside = fitWithin(image.width, image.height, box);
  const exact = inside.width === size.width && inside.height === size.height;
  return decoded(image, (p) => p.resize(exact && box !== undefined ? insideBox(box) : { ...size, fit: 'fill' }));
}

async function prepareInput(bytes: Buffer, maxPixels: number): Promise<PreparedInput> {
  const format = sniffImageFormat(bytes);
  if (!format) throw new ImageRejected('not an image format we can read');
  const base: SharpOptions = { limitInputPixels: maxPixels, failOn: 'truncated', autoOrient: true, sequentialRead: true };
  try {
    switch (format) {
      case 'ico':
        return await prepareIco(bytes, maxPixels, base);
      case 'bmp': {
        const img = decodeBmp(bytes, maxPixels);
        return { input: img.data, options: { ...base, raw: { width: img.width, height: img.height, channels: 4 } }, format, hasAlpha: img.hasAlpha };
      }
      case 'svg':
        return await prepareSvg(bytes, maxPixels, base);
      default:
        return { input: bytes, options: base, format };
    }
  } catch (err) {
    // A decoder's refusal (bitmap, ICO, unsafe SVG) is the image's: rejected, with its format said.
    if (err instanceof ExpectedFailure && !(err instanceof ImageRejected)) throw new ImageRejected(`${format}: ${err.message}`);
    throw err;
  }
}

async function prepareIco(bytes: Buffer, maxPixels: number, base: SharpOptions): Promise<PreparedInput> {
  let lastError: unknown;
  // Largest entry first; an entry that does not decode gives way to the next.
  for (const entry of icoEntries(bytes)) {
    let img: IcoImage;
    try {
      img = decodeIcoEntry(bytes, entry, maxPixels);
      if (img.kind === 'png') {
        await sharp(img.bytes, base).metadata();
        return { input: img.bytes, options: base, format: 'ico' };
      }
      return { input: img.data, options: { ...base, raw: { width: img.width, height: img.height, channels: 4 } }, format: 'ico', hasAlpha: img.hasAlpha };
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? new ImageRejected(`ico: ${lastError.message}`) : new ImageRejected('ico: no entry decodes');
}

async function prepareSvg(bytes: Buffer, maxPixels: number, base: SharpOptions): Promise<PreparedInput> {
  const safe = sanitizeSvg(bytes);
  const meta = await sharp(safe, base).metadata();
  const longest = Math.max(meta.width ?? 0, meta.height ?? 0);
  let density = 72;
  if (longest > 0 && longest < SVG_MIN_RASTER) {
    density = Math.min(72 * (SVG_MIN_RASTER / longest), 72 * 64);
    // Stay under the pixel limit at the raised density.
    const scale = density / 72;
    if ((meta.width ?? 0) * (meta.height ?? 0) * scale * scale > maxPixels) density = 72;
  }
  return { input: safe, options: { ...base, density }, format: 'svg' };
}
