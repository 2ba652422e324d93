/** Image fixtures made by the tests themselves with sharp (and by hand for ICO, BMP and bombs). */
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

/** A JPEG stored `width` x `height` with an EXIF Orientation tag (6 = rotate 90° clockwise to display). */
export async function jpegWithOrientation(width: number, height: number, orientation: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#cc3322' } })
    .jpeg()
    .withMetadata({ orientation })
    .toBuffer();
}

export async function jpeg(width: number, height: number, color = '#2255aa'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .jpeg()
    .toBuffer();
}

/** A PNG whose left half is transparent. */
export async function pngWithAlpha(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      raw[o] = 0;
      raw[o + 1] = 160;
      raw[o + 2] = 60;
      raw[o + 3] = x < width / 2 ? 0 : 255;
    }
  return sharp(raw, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
}

/** Frames of solid colours stacked vertically, as sharp's animated input wants them. */
function frames(width: number, height: number, colors: [number, number, number][]): Buffer {
  const raw = Buffer.alloc(width * height * 4 * colors.length);
  colors.forEach(([r, g, b], f) => {
    for (let i = 0; i < width * height; i++) {
      const o = (f * width * height + i) * 4;
      raw[o] = r;
      raw[o + 1] = g;
      raw[o + 2] = b;
      raw[o + 3] = 255;
    }
  });
  return raw;
}

const COLORS: [number, number, number][] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
];

export async function animatedGif(width: number, height: number): Promise<Buffer> {
  return sharp(frames(width, height, COLORS), { raw: { width, height: height * COLORS.length, channels: 4, pageHeight: height } })
    .gif({ loop: 0, delay: [100, 100, 100] })
    .toBuffer();
}

export async function animatedWebp(width: number, height: number): Promise<Buffer> {
  return sharp(frames(width, height, COLORS), { raw: { width, height: height * COLORS.length, channels: 4, pageHeight: height } })
    .webp({ loop: 0, delay: [100, 100, 100] })
    .toBuffer();
}

export async function webp(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#888800' } })
    .webp()
    .toBuffer();
}

export async function png(width: number, height: number, color = '#ff8800'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: color } })
    .png()
    .toBuffer();
}

/** An opaque PNG of smooth gradients and stripes (not a flat colour, so its encodings differ by size and settings). */
export async function gradientPng(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      raw[o] = Math.round((x / width) * 255);
      raw[o + 1] = Math.round((y / height) * 255);
      raw[o + 2] = (x + y) % 40 < 20 ? 40 : 210;
    }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** A 32-bit BGRA DIB as stored in an ICO entry: height doubled, bottom-up, then a 1-bit AND mask. */
export function icoBitmap(width: number, height: number, bgra: [number, number, number, number]): Buffer {
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(width, 4);
  header.writeInt32LE(height * 2, 8);
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  const pixels = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) pixels.set(bgra, i * 4);
  const mask = Buffer.alloc(Math.ceil(width / 32) * 4 * height);
  return Buffer.concat([header, pixels, mask]);
}

/** An ICO file from its entries (PNG bytes or DIBs). */
export function ico(entries: { width: number; height: number; bytes: Buffer; bitCount?: number }[]): Buffer {
  const dir = Buffer.alloc(6 + entries.length * 16);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2);
  dir.writeUInt16LE(entries.length, 4);
  let offset = dir.length;
  entries.forEach((e, i) => {
    const d = 6 + i * 16;
    dir[d] = e.width >= 256 ? 0 : e.width;
    dir[d + 1] = e.height >= 256 ? 0 : e.height;
    dir.writeUInt16LE(1, d + 4);
    dir.writeUInt16LE(e.bitCount ?? 32, d + 6);
    dir.writeUInt32LE(e.bytes.length, d + 8);
    dir.writeUInt32LE(offset, d + 12);
    offset += e.bytes.length;
  });
  return Buffer.concat([dir, ...entries.map((e) => e.bytes)]);
}

/** One PNG chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}

/** A pixel bomb: a PNG of a few hundred bytes whose header claims `width` x `height` pixels. */
export function pngBomb(width = 100_000, height = 100_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const idat = deflateSync(Buffer.alloc(width + 1)); // one row of zeros; the rest is missing
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export function svg(body: string, width = 100, height = 50): Buffer {
  return Buffer.from(
    `<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}">${body}</svg>`,
  );
}
