/**
 * The sharp renderer: bytes in, WebP renditions out, no I/O (the image job, lib/media/images.ts,
 * downloads, reuses and stores). Exported for the job, the page images, the bench and tests.
 *
 *  - the bytes made ready for sharp (lib/media/image-input.ts: the real format, ICO and BMP
 *    decoded, SVG made safe);
 *  - decode with sharp under `limitInputPixels` (decompression bombs are refused), honour EXIF
 *    orientation, strip metadata, never upscale, keep alpha; the first frame of an animation is
 *    used for the stills and `original` stays animated;
 *  - a still size that would be the original's bytes again is not encoded twice (`sameAs`);
 *  - the placeholders (dominant colour, blurhash: lib/media/placeholders.ts) from the smallest
 *    pixels the render made (imagePlaceholders);
 *  - `startRender` answers once the sizes and the placeholders are known, the encodes still
 *    running (the image job on a store that holds reads: lib/media/images.ts).
 * Anything wrong with the image is an ImageRejected (an ExpectedFailure).
 */
import type { Sharp, SharpOptions } from 'sharp';
import { required } from '../errors.js';
import { ONE_DECODE_MAX_PIXELS, type RenderSize } from '../jobs/memory.js';
import { iconBackgroundColor } from './icon-background.js';
import { ImageRejected, type PreparedInput, prepareInput } from './image-input.js';
import { fitWithin, IMAGE_SIZES, type ImageSizeName } from './image-sizes.js';
import { PLACEHOLDER_BOX, type Placeholders, placeholdersOf } from './placeholders.js';
import type { ImageFormat } from './sniff-image.js';

export interface Rendition {
  name: ImageSizeName;
  width: number;
  height: number;
  data: Buffer;
  /** Set on a still size whose pixels and encoding are the original's (see planRenditions): the same bytes, stored once. */
  sameAs?: 'original';
}

export interface RenderedImage {
  source: { format: ImageFormat; size: number; width: number; height: number; hasAlphaChannel: boolean; animated: boolean };
  renditions: Rendition[];
  edgeColor: string;
  /** The dominant colour and blurhash of the first frame, flattened on white (none when RenderOptions.placeholders is false). */
  placeholders?: Placeholders;
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
  /** false: no placeholders (an icon's render: a record's icon has none). Default true. */
  placeholders?: boolean;
  /**
   * The caller goes on once the sizes are known (startRender's answer): the encodes start once the
   * resizes and the placeholders are made, rather than beside them, which makes that answer sooner
   * and the whole render a little later.
   */
  early?: boolean;
}

/**
 * WebP settings, chosen per size on card-like images (`npm run bench -- image-encoder`; table and
 * reasons: docs/benchmarks.md, "The image path at its floor"). Quality 80 (75 loses up to 0.017
 * SSIM on photos, 85 costs 12-45% more bytes). The two big sizes dominate the time: effort 1, the
 * SSIM of effort 0 in 16-32% fewer bytes for about a quarter more of their encode (2: 9-13% fewer
 * again, at half as much again). The small, most-viewed sizes: effort 4
 * for the thumbnail (3: the same; 2: 3-6% more bytes), 2 for medium (4: 3-7% fewer at 2-3x the
 * time); they cost little wall time, finishing while the big ones encode.
 */
const WEBP_QUALITY = 80;
function webpEffortFor(box: number | undefined): number {
  if (box !== undefined && box <= 320) return 4;
  if (box !== undefined && box <= 640) return 2;
  return 1;
}
/** sharp stops a pipeline that runs longer than this. */
const SHARP_TIMEOUT_SECONDS = 20;

/**
 * sharp (libvips: a noticeable time and memory to load) is loaded by the first render, not with
 * this module: a process that previews no image (the CLI on a text page, a PDF, a platform link)
 * never loads it. Every use below runs within renderImage, after the load.
 */
let sharp: typeof import('sharp').default;
async function loadSharp(): Promise<void> {
  sharp ??= (await import('sharp')).default;
}

type ImageSize = (typeof IMAGE_SIZES)[number];

export async function renderImage(bytes: Buffer, options: RenderOptions): Promise<RenderedImage> {
  return (await startRender(bytes, options)).done;
}

/** A size of a render under way: its name and pixel size (and `sameAs`), as the finished rendition will have them. */
export type PlannedRendition = Omit<Rendition, 'data'>;

/** A render whose sizes are known and whose encodes may still run (startRender). */
export interface StartedRender {
  source: RenderedImage['source'];
  /** The sizes asked for, in IMAGE_SIZES order, as `done` gives them (no bytes). */
  sizes: PlannedRendition[];
  /** RenderedImage.placeholders, already made. */
  placeholders?: Placeholders;
  /** The whole render; the memory `reserve` took is released when it settles. */
  done: Promise<RenderedImage>;
}

/**
 * A render, answered once what a record says of it is known: the source's facts, each size's
 * pixel size and the placeholders. For a still raster image (one decode) that is once the decode,
 * the resizes and the placeholders are done, while the WebP encodes still run (they then only
 * take pixels in memory); for the rest (a vector, a very large or an animated image) once `done`
 * is. A source that does not decode fails here, not in `done`.
 */
export async function startRender(bytes: Buffer, options: RenderOptions): Promise<StartedRender> {
  await loadSharp();
  const prepared = await prepareInput(sharp, bytes, options.maxPixels);
  const source = await readSource(prepared, options.maxPixels);
  const plan = planRenditions(source, options);
  const release = await options.reserve?.({
    width: source.width,
    height: source.height,
    format: prepared.format,
    hasAlpha: prepared.hasAlpha ?? !!source.hasAlpha,
    pages: source.animated ? source.pages : 1,
  });
  const facts = {
    format: prepared.format,
    size: bytes.length,
    width: source.width,
    height: source.height,
    hasAlphaChannel: prepared.hasAlpha ?? source.hasAlpha,
    animated: source.animated,
  };
  let encoding: EncodedSizes;
  try {
    encoding = await encodeSizes(prepared, source, plan);
  } catch (err) {
    release?.();
    throw err;
  }
  const done = (async (): Promise<RenderedImage> => {
    try {
      const renditions = plan.name(await encoding.renditions);
      return { source: facts, renditions, edgeColor: await encoding.edgeColor, placeholders: await encoding.placeholders };
    } finally {
      release?.();
    }
  })();
  done.catch(() => undefined); // the caller's to await; marked handled now, as it can fail before
  return { source: facts, sizes: plan.name(encoding.sizes), placeholders: await encoding.placeholders, done };
}

/** What sharp's metadata says of the source: its oriented size (of the first frame), frames and alpha. */
interface SourceFacts {
  width: number;
  height: number;
  animated: boolean;
  pages: number | undefined;
  hasAlpha: boolean;
}

/** The source's facts, once its size is known to be within the pixel limit (else ImageRejected). */
async function readSource(prepared: PreparedInput, maxPixels: number): Promise<SourceFacts> {
  const meta = await sharp(prepared.input, prepared.options).metadata();
  const width = meta.autoOrient?.width ?? meta.width;
  // Read without `animated`, the metadata describes the first frame; `pages` counts the frames.
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new ImageRejected('image has no size');
  if (width * height > maxPixels) throw new ImageRejected(`image of ${width}x${height} exceeds the pixel limit of ${maxPixels}`);
  const animated = (meta.pages ?? 1) > 1 && (prepared.format === 'gif' || prepared.format === 'webp');
  return { width, height, animated, pages: meta.pages, hasAlpha: meta.hasAlpha };
}

/** Which sizes are encoded, with what settings, and which take the original's encode. */
interface RenditionPlan {
  quality: number;
  /** Whether the placeholders are computed (RenderOptions.placeholders). */
  placeholders: boolean;
  /** RenderOptions.early. */
  early: boolean;
  effortFor: (box: number | undefined) => number;
  /** The sizes encoded, in IMAGE_SIZES order. */
  encoded: ImageSize[];
  /** The renditions asked for, in IMAGE_SIZES order, from those encoded (or their planned sizes). */
  name: <R extends PlannedRendition>(done: R[]) => R[];
}

/**
 * A still size whose box leaves the source as it is (a 1200x630 og:image in `large`'s 1280 box:
 * no resize, as `resized` returns the same pixels and sharp's `inside` fit never enlarges),
 * encoded with the `original`'s effort, would be the original's pixels encoded the same way: the
 * same bytes (test/media/images.test.ts checks it). It is not encoded again: it gets the
 * original's rendition under its own name, marked `sameAs: 'original'`. Not for an animation,
 * whose `original` is the animated render. Nor is it stored again: the job puts only the
 * original's object and the manifest sends the size to it (RenditionInfo.sameAs), so `large`'s
 * URL is `original.webp`: a put costs more than a distinct URL is worth. The ImageSet still has
 * four entries, each with its own width and height, and a manifest stored before (every size under
 * its own key) reads as it did. Asked for without `original` (a job adding sizes to a source stored
 * as an icon, whose `original` is stored already), such a size is encoded itself, and still marked
 * `sameAs`.
 */
function planRenditions(source: SourceFacts, options: RenderOptions): RenditionPlan {
  const effortFor = (box: number | undefined) => options.effort ?? webpEffortFor(box);
  const wanted = new Set<ImageSizeName>(options.sizes ?? IMAGE_SIZES.map((s) => s.name));
  const isOriginal = (s: ImageSize) => {
    if (s.box === undefined || source.animated || effortFor(s.box) !== effortFor(undefined)) return false;
    const fit = fitWithin(source.width, source.height, s.box);
    return fit.width === source.width && fit.height === source.height;
  };
  /** Given the original's encode rather than encoded itself. */
  const sharesEncode = (s: ImageSize) => wanted.has('original') && isOriginal(s);
  const name = <R extends PlannedRendition>(done: R[]): R[] => {
    const byName = (n: ImageSizeName): R =>
      required(
        done.find((r) => r.name === n),
        `the ${n} rendition`,
      );
    return IMAGE_SIZES.filter((s) => wanted.has(s.name)).map((s) => {
      if (sharesEncode(s)) return { ...byName('original'), name: s.name, sameAs: 'original' };
      return isOriginal(s) ? { ...byName(s.name), sameAs: 'original' } : byName(s.name);
    });
  };
  return {
    quality: options.quality ?? WEBP_QUALITY,
    placeholders: options.placeholders !== false,
    early: options.early === true,
    effortFor,
    encoded: IMAGE_SIZES.filter((s) => wanted.has(s.name) && !sharesEncode(s)),
    name,
  };
}

/** The sizes encoded (their pixel sizes known, their bytes maybe still on the way), the placeholders and the edge colour. */
interface EncodedSizes {
  sizes: PlannedRendition[];
  renditions: Promise<Rendition[]>;
  placeholders: Promise<Placeholders | undefined>;
  edgeColor: Promise<string>;
}

/** Encodes the planned sizes (an animation's `original` is the animated render when there is one), and the placeholders. */
async function encodeSizes(prepared: PreparedInput, source: SourceFacts, plan: RenditionPlan): Promise<EncodedSizes> {
  const animatedOriginal = source.animated ? renderAnimatedOriginal(prepared, source, plan) : undefined;
  // The edge colour from the thumbnail's encode, else the original's, as soon as it is done (edgeColorOf).
  const edgeSize = plan.encoded.find((s) => s.name === 'thumbnail') ?? plan.encoded.find((s) => s.name === 'original');
  let edgeColor = Promise.resolve('');
  const render = (s: ImageSize, p: () => Sharp): Promise<Rendition> => {
    const still = () => encode(s, p(), plan);
    const r = s.name === 'original' && animatedOriginal ? animatedOriginal.then((a) => a ?? still()) : still();
    r.catch(() => undefined); // awaited with the others below; marked handled now, as it can fail before
    if (s === edgeSize) {
      edgeColor = r.then(edgeColorOf);
      edgeColor.catch(() => undefined); // the same
    }
    return r;
  };
  if (prepared.format === 'svg' || source.width * source.height > ONE_DECODE_MAX_PIXELS) {
    // Each size rendered from the source: a vector image at its own scale; a very large image
    // with a decode per size (a JPEG shrinks on load), not its whole raw pixels in memory.
    const renditions = await Promise.all(
      plan.encoded.map((s) => render(s, () => (s.box === undefined ? pipeline(prepared) : pipeline(prepared).resize(insideBox(s.box))))),
    );
    // The placeholders from the smallest rendition's WebP (the thumbnail's, 320 px at most; the
    // first frame of an animated `original`): a small decode, where the source again would be a
    // large one (or an SVG rasterized once more).
    const smallest = renditions.reduce((a, b) => (b.width * b.height < a.width * a.height ? b : a));
    const placeholders = plan.placeholders ? imagePlaceholders(sharp(smallest.data).timeout({ seconds: SHARP_TIMEOUT_SECONDS })) : Promise.resolve(undefined);
    return { sizes: renditions.map(planned), renditions: Promise.resolve(renditions), placeholders, edgeColor };
  }
  // One decode (the first frame, oriented), then each size resized from the next larger one's
  // pixels (less work than a decode per size: `npm run bench -- images`) and encoded while the
  // next smaller one is resized. Each keeps the size it has when resized from the source (sharp's
  // `inside` fit: fitWithin).
  const full = await decoded(prepared);
  let image = full;
  const renders: Promise<Rendition>[] = [];
  const sizes: PlannedRendition[] = [];
  const encodes: (() => Promise<Rendition>)[] = [];
  for (const s of [...plan.encoded].reverse()) {
    image = await resized(image, s.box, fitWithin(full.width, full.height, s.box));
    const pixels = image;
    const start = () => render(s, () => pipeline(pixels));
    if (plan.early) encodes.unshift(start);
    else renders.unshift(start());
    sizes.unshift({ name: s.name, width: pixels.width, height: pixels.height });
  }
  // The placeholders from the smallest raw pixels of that chain (the thumbnail's, 320 px at most;
  // the decode itself for an icon, rendered in `original` only): a 32 px resize of pixels in
  // memory, computed while the sizes encode (RenderOptions.early: before). No decode at all:
  // sharp's stats() would read the source (decode it again), and a rendition's WebP would be
  // decoded again too.
  const placeholders = plan.placeholders ? imagePlaceholders(pipeline(image)) : Promise.resolve(undefined);
  if (plan.early) {
    await placeholders.catch(() => undefined);
    renders.push(...encodes.map((start) => start()));
  }
  const renditions = Promise.all(renders);
  // An animated `original` has its size once rendered (its frames'): the sizes wait for it.
  if (animatedOriginal) {
    const all = await renditions;
    return { sizes: all.map(planned), renditions: Promise.resolve(all), placeholders, edgeColor };
  }
  renditions.catch(() => undefined); // awaited by startRender's `done`; marked handled now, as it can fail before
  return { sizes, renditions, placeholders, edgeColor };
}

/**
 * The placeholders of an image's pixels (the first frame), downscaled to fit PLACEHOLDER_BOX and
 * flattened on white: what a card shows under a transparent image. sRGB with alpha, whatever the
 * source's channels (grey, grey and alpha, RGB): the RGBA the blurhash encoder takes. Exported
 * for the bench (`npm run bench -- images`: what they cost).
 */
export function imagePlaceholders(p: Sharp): Promise<Placeholders> {
  const pixels = p
    .resize({ width: PLACEHOLDER_BOX, height: PLACEHOLDER_BOX, fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const placeholders = pixels.then(({ data, info }) => placeholdersOf(data, info.width, info.height));
  placeholders.catch(() => undefined); // awaited by renderImage once the renders are done: marked handled now, as it can fail before
  return placeholders;
}

const planned = ({ name, width, height }: Rendition): PlannedRendition => ({ name, width, height });

async function encode(s: ImageSize, p: Sharp, plan: RenditionPlan): Promise<Rendition> {
  const { data, info } = await p.webp({ quality: plan.quality, effort: plan.effortFor(s.box) }).toBuffer({ resolveWithObject: true });
  return { name: s.name, width: info.width, height: info.height, data };
}

/** The animated `original`, or undefined when sharp cannot render it so (the first frame is then used, as a still). */
async function renderAnimatedOriginal(prepared: PreparedInput, source: SourceFacts, plan: RenditionPlan): Promise<Rendition | undefined> {
  try {
    const { data, info } = await sharp(prepared.input, { ...prepared.options, animated: true })
      .timeout({ seconds: SHARP_TIMEOUT_SECONDS })
      .webp({ quality: plan.quality, effort: plan.effortFor(undefined) })
      .toBuffer({ resolveWithObject: true });
    return { name: 'original', width: info.width, height: info.pageHeight ?? source.height, data };
  } catch {
    return undefined;
  }
}

/**
 * The edge colour of a rendition's WebP: the thumbnail's (the smallest decode), else the
 * original's (an icon's only size; an animation's first frame), which is the same colour but for
 * WebP's small losses. Computed while the other sizes encode (encodeSizes).
 */
async function edgeColorOf(edge: Rendition): Promise<string> {
  const tiny = await sharp(edge.data).resize(32, 32, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
  return iconBackgroundColor(tiny, 32, 32);
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
