/**
 * What a card shows while a hosted image loads: its dominant colour and its blurhash (the string
 * Mastodon sends with every preview card and its clients draw). Pure functions of a few opaque
 * RGBA pixels, no sharp: the renderer (lib/media/render-image.ts) makes those pixels from the
 * decode it already has, flattened on white (what a card shows under a transparent image).
 */
import { encode } from 'blurhash';

export interface Placeholders {
  /** `#rrggbb`, lowercase. */
  dominantColor: string;
  /** A blurhash of PLACEHOLDER_COMPONENTS components. */
  blurhash: string;
}

/** The longer side of the pixels the placeholders are computed from: the blurhash needs no more (its encoder is O(pixels x components)). */
export const PLACEHOLDER_BOX = 32;

/** The blurhash's components, across and down: 4 by 3, enough for a card's blur (a client decodes any count: the hash names it). */
export const PLACEHOLDER_COMPONENTS = { x: 4, y: 3 } as const;

/** Placeholders of `width` x `height` RGBA pixels (alpha ignored: flatten them first). */
export function placeholdersOf(rgba: Uint8Array, width: number, height: number): Placeholders {
  if (width < 1 || height < 1 || rgba.length !== width * height * 4) throw new RangeError(`placeholders: ${rgba.length} bytes for ${width}x${height} RGBA`);
  const pixels = new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.length);
  return { dominantColor: dominantColor(pixels), blurhash: encode(pixels, width, height, PLACEHOLDER_COMPONENTS.x, PLACEHOLDER_COMPONENTS.y) };
}

/**
 * sharp's `stats().dominant` rule: the most common of 16 x 16 x 16 colour bins (the first on a
 * tie). sharp answers that bin's centre (pure white would be #f8f8f8); this answers the mean of
 * the pixels in it, so a flat area keeps its colour (within a unit or two where the downscale
 * blends its edges into the bin).
 */
function dominantColor(rgba: Uint8ClampedArray): string {
  const counts = new Uint32Array(4096);
  const sums = new Float64Array(4096 * 3);
  for (let i = 0; i < rgba.length; i += 4) {
    const bin = ((rgba[i] >> 4) << 8) | ((rgba[i + 1] >> 4) << 4) | (rgba[i + 2] >> 4);
    counts[bin]++;
    sums[bin * 3] += rgba[i];
    sums[bin * 3 + 1] += rgba[i + 1];
    sums[bin * 3 + 2] += rgba[i + 2];
  }
  let best = 0;
  for (let bin = 1; bin < counts.length; bin++) if (counts[bin] > counts[best]) best = bin;
  const channel = (c: number) =>
    Math.round(sums[best * 3 + c] / counts[best])
      .toString(16)
      .padStart(2, '0');
  return `#${channel(0)}${channel(1)}${channel(2)}`;
}
