/**
 * A blurhash decoder (the algorithm of github.com/woltapp/blurhash, written out here so that the
 * client package keeps no dependency): a hash into RGBA pixels, which the card draws on a small
 * canvas behind the image while it loads. An invalid hash gives undefined.
 */
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';

function decode83(s: string): number {
  let value = 0;
  for (const c of s) {
    const digit = DIGITS.indexOf(c);
    if (digit < 0) return Number.NaN;
    value = value * 83 + digit;
  }
  return value;
}

const toLinear = (v: number) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const toSrgb = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return Math.trunc((c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055) * 255 + 0.5);
};
const signPow = (v: number, e: number) => Math.sign(v) * Math.abs(v) ** e;

/** The hash's pixels at width x height (RGBA, row by row), or undefined when the hash is malformed. */
export function decodeBlurhash(hash: string, width: number, height: number, punch = 1): Uint8ClampedArray | undefined {
  if (!hash || hash.length < 6) return undefined;
  const sizeFlag = decode83(hash[0]);
  const numY = Math.floor(sizeFlag / 9) + 1;
  const numX = (sizeFlag % 9) + 1;
  if (Number.isNaN(sizeFlag) || hash.length !== 4 + 2 * numX * numY) return undefined;
  const maximum = (decode83(hash[1]) + 1) / 166;
  const colors: number[][] = [];
  const dc = decode83(hash.slice(2, 6));
  if (Number.isNaN(dc) || Number.isNaN(maximum)) return undefined;
  colors.push([toLinear(dc >> 16), toLinear((dc >> 8) & 255), toLinear(dc & 255)]);
  for (let i = 1; i < numX * numY; i++) {
    const v = decode83(hash.slice(4 + i * 2, 6 + i * 2));
    if (Number.isNaN(v)) return undefined;
    const q = [Math.floor(v / 361), Math.floor(v / 19) % 19, v % 19];
    colors.push(q.map((c) => signPow((c - 9) / 9, 2) * maximum * punch));
  }
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let j = 0; j < numY; j++) {
        for (let i = 0; i < numX; i++) {
          const basis = Math.cos((Math.PI * x * i) / width) * Math.cos((Math.PI * y * j) / height);
          const c = colors[i + j * numX];
          r += c[0] * basis;
          g += c[1] * basis;
          b += c[2] * basis;
        }
      }
      const p = 4 * (x + y * width);
      pixels[p] = toSrgb(r);
      pixels[p + 1] = toSrgb(g);
      pixels[p + 2] = toSrgb(b);
      pixels[p + 3] = 255;
    }
  }
  return pixels;
}
