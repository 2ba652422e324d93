/**
 * A source image's bytes made ready for sharp (lib/media/render-image.ts): the real format sniffed
 * from the bytes; ICO and BMP decoded here (sharp cannot read them); SVG made safe first
 * (lib/media/svg-safety.ts) and given a density that rasterizes a small vector at a useful size.
 * Every input is read under `limitInputPixels` (decompression bombs are refused), oriented by its
 * EXIF, and refused on a truncated file.
 */
import type { SharpOptions } from 'sharp';
import { ExpectedFailure } from '../errors.js';
import { decodeBmp } from './bmp.js';
import { decodeIcoEntry, type IcoImage, icoEntries } from './ico.js';
import { type ImageFormat, sniffImageFormat } from './sniff-image.js';
import { sanitizeSvg } from './svg-safety.js';

/** Raised for an image that cannot be hosted (the job turns it into a `{reason}` result). */
export class ImageRejected extends ExpectedFailure {}

/** sharp's module (render-image.ts loads it with the first render). */
type SharpModule = typeof import('sharp').default;

/** A vector image has no pixel size of its own: it is rasterized so its longer side is at least this. */
const SVG_MIN_RASTER = 512;

export interface PreparedInput {
  input: Buffer;
  options: SharpOptions;
  format: ImageFormat;
  /** Known alpha for inputs decoded here (ICO/BMP); sharp's metadata says for the rest. */
  hasAlpha?: boolean;
}

interface Limits {
  maxPixels: number;
  base: SharpOptions;
}

export async function prepareInput(sharp: SharpModule, bytes: Buffer, maxPixels: number): Promise<PreparedInput> {
  const format = sniffImageFormat(bytes);
  if (!format) throw new ImageRejected('not an image format we can read');
  const base: SharpOptions = { limitInputPixels: maxPixels, failOn: 'truncated', autoOrient: true, sequentialRead: true };
  try {
    switch (format) {
      case 'ico':
        return await prepareIco(sharp, bytes, { maxPixels, base });
      case 'bmp': {
        const img = decodeBmp(bytes, maxPixels);
        return { input: img.data, options: { ...base, raw: { width: img.width, height: img.height, channels: 4 } }, format, hasAlpha: img.hasAlpha };
      }
      case 'svg':
        return await prepareSvg(sharp, bytes, { maxPixels, base });
      default:
        return { input: bytes, options: base, format };
    }
  } catch (err) {
    // A decoder's refusal (bitmap, ICO, unsafe SVG) is the image's: rejected, with its format said.
    if (err instanceof ExpectedFailure && !(err instanceof ImageRejected)) throw new ImageRejected(`${format}: ${err.message}`);
    throw err;
  }
}

async function prepareIco(sharp: SharpModule, bytes: Buffer, { maxPixels, base }: Limits): Promise<PreparedInput> {
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

async function prepareSvg(sharp: SharpModule, bytes: Buffer, { maxPixels, base }: Limits): Promise<PreparedInput> {
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
