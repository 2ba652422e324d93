/**
 * A background colour for an icon that the page gave none for, from its pixels (RGBA, small):
 *  - when the icon's edge is mostly opaque, its most common edge colour (the icon's own tile);
 *  - otherwise (a transparent icon), white or black, whichever contrasts with the icon's
 *    dominant opaque colour, so the icon stays visible on it.
 */
import { rgbToHex } from './css-color.js';

export function iconBackgroundColor(rgba: Uint8Array, width: number, height: number): string {
  const edge: number[] = [];
  for (let x = 0; x < width; x++) edge.push(x, (height - 1) * width + x);
  for (let y = 1; y < height - 1; y++) edge.push(y * width, y * width + width - 1);
  const opaqueEdge = edge.filter((i) => rgba[i * 4 + 3] >= 200);
  if (opaqueEdge.length >= edge.length * 0.6) {
    const c = dominant(rgba, opaqueEdge);
    return rgbToHex(c[0], c[1], c[2]);
  }
  const all: number[] = [];
  for (let i = 0; i < width * height; i++) if (rgba[i * 4 + 3] >= 128) all.push(i);
  if (all.length === 0) return '#ffffff';
  const [r, g, b] = dominant(rgba, all);
  const luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  return luminance > 0.75 ? '#000000' : '#ffffff';
}

/** The mean colour of the most common bucket (4 bits per channel) among the given pixels. */
function dominant(rgba: Uint8Array, pixels: number[]): [number, number, number] {
  const buckets = new Map<number, { n: number; r: number; g: number; b: number }>();
  for (const i of pixels) {
    const r = rgba[i * 4],
      g = rgba[i * 4 + 1],
      b = rgba[i * 4 + 2];
    const key = ((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4);
    const e = buckets.get(key) ?? { n: 0, r: 0, g: 0, b: 0 };
    e.n++;
    e.r += r;
    e.g += g;
    e.b += b;
    buckets.set(key, e);
  }
  let best = { n: 0, r: 0, g: 0, b: 0 };
  for (const e of buckets.values()) if (e.n > best.n) best = e;
  return [best.r / best.n, best.g / best.n, best.b / best.n];
}
