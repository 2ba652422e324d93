/**
 * A small decoder for Windows DIB bitmaps, the BMP entries of ICO files and plain .bmp files,
 * which sharp (libvips) cannot read. Uncompressed 1/4/8/24/32-bit and BI_BITFIELDS 16/32-bit
 * are supported; RLE and JPEG/PNG-in-BMP are refused. Output is RGBA pixels for sharp's raw input.
 */
import { ExpectedFailure } from '../errors.js';

export interface RgbaImage {
  width: number;
  height: number;
  /** width * height * 4 bytes, top row first. */
  data: Buffer;
  /** Whether any pixel is not fully opaque. */
  hasAlpha: boolean;
}

class BitmapError extends ExpectedFailure {}

const BI_RGB = 0;
const BI_BITFIELDS = 3;
const BI_ALPHABITFIELDS = 6;

/** A .bmp file: a 14-byte file header ("BM", size, offset of the pixels) then a DIB. */
export function decodeBmp(file: Uint8Array, maxPixels: number): RgbaImage {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (buf.length < 26 || buf.toString('latin1', 0, 2) !== 'BM') throw new BitmapError('not a BMP file');
  const pixelOffset = buf.readUInt32LE(10);
  return decodeDib(buf.subarray(14), { maxPixels, pixelOffset: pixelOffset - 14, iconMask: false });
}

export interface DibOptions {
  maxPixels: number;
  /** Offset of the pixel array from the DIB header start; default: right after the header, masks and palette. */
  pixelOffset?: number;
  /** ICO entries store height * 2 and a 1-bit AND (transparency) mask after the colour pixels. */
  iconMask: boolean;
}

export function decodeDib(dib: Buffer, options: DibOptions): RgbaImage {
  const layout = readDibLayout(dib, options);
  const { width, height } = layout;
  const { out, anyAlpha } = readPixels(dib, layout);
  // A 32-bit bitmap whose alpha bytes are all zero carries no alpha (old icons): use the mask or opaque.
  const plain32 = layout.bitCount === 32 && !layout.masks;
  if (plain32 && !anyAlpha) for (let i = 3; i < out.length; i += 4) out[i] = 255;
  if (layout.hasMask && !(plain32 && anyAlpha)) applyIconMask(dib, layout, out);
  let hasAlpha = false;
  for (let i = 3; i < out.length; i += 4)
    if (out[i] !== 255) {
      hasAlpha = true;
      break;
    }
  return { width, height, data: out, hasAlpha };
}

/** Where a DIB's pixels are and how to read them, from its header. */
interface DibLayout {
  width: number;
  height: number;
  topDown: boolean;
  bitCount: number;
  /** The R, G, B, A masks of a 16-bit or bitfields bitmap. */
  masks?: [number, number, number, number];
  palette?: Buffer;
  pixelStart: number;
  stride: number;
  /** Where an icon's AND mask starts, its row length, and whether it is there. */
  maskStart: number;
  maskStride: number;
  hasMask: boolean;
}

/** The header, masks and palette of a DIB (a BitmapError for one this decoder does not read, or a truncated one). */
function readDibLayout(dib: Buffer, options: DibOptions): DibLayout {
  if (dib.length < 16) throw new BitmapError('truncated bitmap header');
  const headerSize = dib.readUInt32LE(0);
  if (headerSize < 40 || headerSize > dib.length) throw new BitmapError(`unsupported bitmap header (${headerSize} bytes)`);
  const width = dib.readInt32LE(4);
  const rawHeight = dib.readInt32LE(8);
  const bitCount = dib.readUInt16LE(14);
  const compression = dib.readUInt32LE(16);
  const colorsUsed = dib.readUInt32LE(32);
  const topDown = rawHeight < 0;
  let height = Math.abs(rawHeight);
  if (options.iconMask) height = Math.floor(height / 2);
  if (width <= 0 || height <= 0) throw new BitmapError('bitmap has no pixels');
  if (width * height > options.maxPixels) throw new BitmapError(`bitmap of ${width}x${height} exceeds the pixel limit`);
  if (![1, 4, 8, 16, 24, 32].includes(bitCount)) throw new BitmapError(`unsupported bit depth ${bitCount}`);
  if (compression !== BI_RGB && compression !== BI_BITFIELDS && compression !== BI_ALPHABITFIELDS) {
    throw new BitmapError(`unsupported bitmap compression ${compression}`);
  }

  const { masks, cursor: afterMasks } = readMasks(dib, { headerSize, bitCount, compression });
  let cursor = afterMasks;
  let palette: Buffer | undefined;
  if (bitCount <= 8) {
    const entries = colorsUsed > 0 && colorsUsed <= 1 << bitCount ? colorsUsed : 1 << bitCount;
    if (dib.length < cursor + entries * 4) throw new BitmapError('truncated bitmap palette');
    palette = dib.subarray(cursor, cursor + entries * 4);
    cursor += entries * 4;
  }

  const pixelStart = options.pixelOffset !== undefined && options.pixelOffset >= cursor ? options.pixelOffset : cursor;
  const stride = Math.ceil((width * bitCount) / 32) * 4;
  const maskStride = Math.ceil(width / 32) * 4;
  const needed = pixelStart + stride * height;
  if (dib.length < needed) throw new BitmapError('truncated bitmap pixels');
  const maskStart = needed;
  const hasMask = options.iconMask && dib.length >= maskStart + maskStride * height;
  return { width, height, topDown, bitCount, masks, palette, pixelStart, stride, maskStart, maskStride, hasMask };
}

/** The channel masks (bitfields, or 16-bit's default 5-5-5) and where the data after them starts. */
function readMasks(
  dib: Buffer,
  header: { headerSize: number; bitCount: number; compression: number },
): { masks?: [number, number, number, number]; cursor: number } {
  const { headerSize, bitCount, compression } = header;
  const cursor = headerSize;
  if (compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS) {
    if (bitCount !== 16 && bitCount !== 32) throw new BitmapError('bitfields need 16 or 32 bits');
    if (headerSize >= 56) return { masks: [dib.readUInt32LE(40), dib.readUInt32LE(44), dib.readUInt32LE(48), dib.readUInt32LE(52)], cursor };
    const n = compression === BI_ALPHABITFIELDS ? 4 : 3;
    if (dib.length < cursor + n * 4) throw new BitmapError('truncated bitmap masks');
    const masks: [number, number, number, number] = [
      dib.readUInt32LE(cursor),
      dib.readUInt32LE(cursor + 4),
      dib.readUInt32LE(cursor + 8),
      n === 4 ? dib.readUInt32LE(cursor + 12) : 0,
    ];
    return { masks, cursor: cursor + n * 4 };
  }
  if (bitCount === 16) return { masks: [0x7c00, 0x03e0, 0x001f, 0], cursor };
  return { cursor };
}

/** The colour pixels as RGBA, top row first, and whether a 32-bit bitmap's alpha bytes were used. */
function readPixels(dib: Buffer, layout: DibLayout): { out: Buffer; anyAlpha: boolean } {
  const { width, height, topDown, bitCount, masks, palette, pixelStart, stride } = layout;
  const out = Buffer.alloc(width * height * 4);
  const field = masks ? masks.map(maskInfo) : undefined;
  let anyAlpha = false;
  for (let y = 0; y < height; y++) {
    const srcRow = topDown ? y : height - 1 - y;
    const row = pixelStart + srcRow * stride;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      let r = 0,
        g = 0,
        b = 0,
        a = 255;
      if (palette) {
        const bitPos = x * bitCount;
        const byte = dib[row + (bitPos >> 3)];
        const index = bitCount === 8 ? byte : (byte >> (8 - bitCount - (bitPos & 7))) & ((1 << bitCount) - 1);
        const p = Math.min(index, palette.length / 4 - 1) * 4;
        b = palette[p];
        g = palette[p + 1];
        r = palette[p + 2];
      } else if (bitCount === 24) {
        const p = row + x * 3;
        b = dib[p];
        g = dib[p + 1];
        r = dib[p + 2];
      } else if (bitCount === 32 && !field) {
        const p = row + x * 4;
        b = dib[p];
        g = dib[p + 1];
        r = dib[p + 2];
        a = dib[p + 3];
        if (a !== 0) anyAlpha = true;
      } else if (masks && field) {
        const v = bitCount === 16 ? dib.readUInt16LE(row + x * 2) : dib.readUInt32LE(row + x * 4);
        [r, g, b] = [field[0](v), field[1](v), field[2](v)];
        if (masks[3]) {
          a = field[3](v);
          anyAlpha = true;
        }
      }
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = b;
      out[o + 3] = a;
    }
  }
  return { out, anyAlpha };
}

/** An icon's AND mask: each set bit makes its pixel transparent. */
function applyIconMask(dib: Buffer, layout: DibLayout, out: Buffer): void {
  const { width, height, topDown, maskStart, maskStride } = layout;
  for (let y = 0; y < height; y++) {
    const srcRow = topDown ? y : height - 1 - y;
    const row = maskStart + srcRow * maskStride;
    for (let x = 0; x < width; x++) {
      if ((dib[row + (x >> 3)] >> (7 - (x & 7))) & 1) out[(y * width + x) * 4 + 3] = 0;
    }
  }
}

/** An extractor for one channel of a bitfield mask, scaled to 0..255. */
function maskInfo(mask: number): (v: number) => number {
  if (!mask) return () => 255;
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  const max = mask >>> shift;
  return (v) => Math.round((((v & mask) >>> shift) * 255) / max);
}
