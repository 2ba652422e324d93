/**
 * ICO (and CUR) files, which sharp cannot read: parse the directory, order the entries largest
 * first, and decode an entry (a PNG, handed to sharp as is, or a DIB bitmap, decoded to RGBA).
 */
import { ExpectedFailure } from '../errors.js';
import { decodeDib, type RgbaImage } from './bmp.js';

export interface IcoEntry {
  width: number;
  height: number;
  bitCount: number;
  offset: number;
  length: number;
  isPng: boolean;
}

export type IcoImage = { kind: 'png'; bytes: Buffer; width: number; height: number } | ({ kind: 'rgba' } & RgbaImage);

class IcoError extends ExpectedFailure {}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The entries of an ICO file, largest (by real pixel size, then bit depth) first. */
export function icoEntries(file: Uint8Array): IcoEntry[] {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (buf.length < 6 || buf.readUInt16LE(0) !== 0 || ![1, 2].includes(buf.readUInt16LE(2))) throw new IcoError('not an ICO file');
  const count = buf.readUInt16LE(4);
  if (count === 0 || buf.length < 6 + count * 16) throw new IcoError('truncated ICO directory');
  const entries: IcoEntry[] = [];
  for (let i = 0; i < count; i++) {
    const d = 6 + i * 16;
    const length = buf.readUInt32LE(d + 8);
    const offset = buf.readUInt32LE(d + 12);
    if (length < 16 || offset < 6 + count * 16 || offset + length > buf.length) continue;
    const isPng = buf.subarray(offset, offset + 8).equals(PNG_SIGNATURE);
    let width = buf[d] || 256;
    let height = buf[d + 1] || 256;
    let bitCount = buf.readUInt16LE(d + 6);
    // The directory may lie; the entry's own header says the truth.
    if (isPng && length >= 24) {
      width = buf.readUInt32BE(offset + 16);
      height = buf.readUInt32BE(offset + 20);
    } else if (!isPng && length >= 16) {
      width = Math.abs(buf.readInt32LE(offset + 4)) || width;
      height = Math.floor(Math.abs(buf.readInt32LE(offset + 8)) / 2) || height;
      bitCount = buf.readUInt16LE(offset + 14) || bitCount;
    }
    entries.push({ width, height, bitCount, offset, length, isPng });
  }
  if (entries.length === 0) throw new IcoError('ICO file has no readable entry');
  return entries.sort((a, b) => b.width * b.height - a.width * a.height || b.bitCount - a.bitCount);
}

export function decodeIcoEntry(file: Uint8Array, entry: IcoEntry, maxPixels: number): IcoImage {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const bytes = buf.subarray(entry.offset, entry.offset + entry.length);
  if (entry.width * entry.height > maxPixels) throw new IcoError(`ICO entry of ${entry.width}x${entry.height} exceeds the pixel limit`);
  if (entry.isPng) return { kind: 'png', bytes, width: entry.width, height: entry.height };
  return { kind: 'rgba', ...decodeDib(bytes, { maxPixels, iconMask: true }) };
}
