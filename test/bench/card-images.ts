/**
 * Card-like test images for the image benches (`images`, `image-encoder`), made here with sharp so
 * no binary lands in the repository, and a small SSIM to judge what an encoder setting costs in
 * quality. A card's image is mostly one of two kinds: a photo (smooth areas, texture, some grain:
 * JPEG) or a graphic (flat colours, gradients, text and logo shapes with hard edges: PNG, often the
 * 1200x630 og:image a site makes for every page). Both are drawn from a seed, so every run of a
 * bench sees the same pixels.
 */
import sharp from 'sharp';

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/**
 * Photo-like RGB pixels: a sky-to-ground gradient, soft blobs (out-of-focus shapes), a textured
 * band (foliage-like high frequency), and mild grain; softened by a small blur, as a camera's
 * optics and a JPEG's source are.
 */
async function photoPixels(width: number, height: number, seed: number): Promise<Buffer> {
  const rand = seeded(seed);
  const blobs = Array.from({ length: 12 }, () => ({
    x: rand() * width,
    y: rand() * height,
    r: (0.05 + rand() * 0.2) * Math.min(width, height),
    c: [rand() * 255, rand() * 255, rand() * 255],
  }));
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const t = y / height;
    for (let x = 0; x < width; x++) {
      let rgb = [90 + 120 * (1 - t), 140 + 80 * (1 - t), 200 - 120 * t];
      for (const b of blobs) {
        const d2 = ((x - b.x) ** 2 + (y - b.y) ** 2) / (b.r * b.r);
        if (d2 < 4) {
          const w = Math.exp(-d2 * 1.5);
          rgb = rgb.map((v, i) => v * (1 - w) + b.c[i] * w);
        }
      }
      // A textured band in the lower third: leaves, gravel, fabric.
      const texture = t > 0.62 ? 35 * Math.sin(x * 0.9 + Math.sin(y * 0.7) * 3) * Math.cos(y * 1.3 + x * 0.05) : 0;
      const grain = (rand() - 0.5) * 12;
      const o = (y * width + x) * 3;
      for (let i = 0; i < 3; i++) raw[o + i] = Math.max(0, Math.min(255, rgb[i] + texture + grain));
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .blur(0.8)
    .raw()
    .toBuffer();
}

/** A photo-like JPEG (quality 85, as sites serve them). */
export async function photoCardJpeg(width: number, height: number, seed = 7): Promise<Buffer> {
  return sharp(await photoPixels(width, height, seed), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
}

/**
 * A graphic-like card as an SVG: a brand gradient, a flat panel, a logo disc, a headline and body
 * lines as text-like bars (glyph-sized rectangles with gaps: the hard edges text gives an encoder,
 * without depending on the machine's fonts), and a thin rule.
 */
function graphicSvg(width: number, height: number, seed: number): string {
  const rand = seeded(seed);
  const bars: string[] = [];
  const line = (y: number, h: number, maxX: number, fill: string) => {
    let x = 80;
    while (x < maxX) {
      const w = h * (0.35 + rand() * 0.5);
      bars.push(`<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${h}" fill="${fill}"/>`);
      x += w + h * (rand() < 0.18 ? 0.6 : 0.12);
    }
  };
  for (let i = 0; i < 2; i++) line(150 + i * 70, 48, width * 0.7, '#ffffff');
  for (let i = 0; i < 4; i++) line(330 + i * 34, 18, width * (0.55 + rand() * 0.1), '#e8ecf5');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
  <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#1d2b64"/><stop offset="1" stop-color="#7a3fb0"/></linearGradient></defs>
  <rect width="${width}" height="${height}" fill="url(#g)"/>
  <rect x="${width - 360}" y="60" width="300" height="${height - 120}" rx="24" fill="#f4f1ea"/>
  <circle cx="${width - 210}" cy="${height / 2 - 40}" r="90" fill="#e94e3c"/>
  <path d="M${width - 260} ${height / 2 - 40} l40 -50 l40 50 l20 -25 l40 50 h-160 z" fill="#ffffff"/>
  <rect x="80" y="${height - 90}" width="${width - 520}" height="3" fill="#c9b8ff"/>
  <rect x="80" y="60" width="40" height="40" rx="8" fill="#ffd34e"/>
  ${bars.join('\n  ')}
</svg>`;
}

/** A graphic-like PNG (the og:image a site renders for each page), RGB: opaque, as most are. */
export async function graphicCardPng(width: number, height: number, seed = 11): Promise<Buffer> {
  return sharp(Buffer.from(graphicSvg(width, height, seed)))
    .removeAlpha()
    .png()
    .toBuffer();
}

/** The same graphic as a JPEG (a CMS re-encoding its og:image). */
export async function graphicCardJpeg(width: number, height: number, seed = 11): Promise<Buffer> {
  return sharp(Buffer.from(graphicSvg(width, height, seed)))
    .jpeg({ quality: 85 })
    .toBuffer();
}

/** BT.601 luma of RGB(A) pixels. */
function luma(data: Buffer, channels: number): Float64Array {
  const n = data.length / channels;
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * channels;
    y[i] = channels >= 3 ? 0.299 * data[o] + 0.587 * data[o + 1] + 0.114 * data[o + 2] : data[o];
  }
  return y;
}

/**
 * Mean SSIM (Wang et al. 2004) of the luma of two images of one size, over 8x8 windows with a
 * stride of 4 (uniform weights, the constants for 8-bit: C1 = (0.01·255)², C2 = (0.03·255)²).
 * 1 is identical; WebP at quality 80 scores about 0.97-0.99 on a photo. A difference under
 * about 0.002 is not visible.
 */
export function ssim(a: { data: Buffer; channels: number }, b: { data: Buffer; channels: number }, width: number, height: number): number {
  const x = luma(a.data, a.channels);
  const y = luma(b.data, b.channels);
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  const win = 8;
  let sum = 0;
  let count = 0;
  for (let wy = 0; wy + win <= height; wy += 4) {
    for (let wx = 0; wx + win <= width; wx += 4) {
      let mx = 0;
      let my = 0;
      for (let j = 0; j < win; j++)
        for (let i = 0; i < win; i++) {
          const k = (wy + j) * width + wx + i;
          mx += x[k];
          my += y[k];
        }
      const n = win * win;
      mx /= n;
      my /= n;
      let vx = 0;
      let vy = 0;
      let cov = 0;
      for (let j = 0; j < win; j++)
        for (let i = 0; i < win; i++) {
          const k = (wy + j) * width + wx + i;
          vx += (x[k] - mx) ** 2;
          vy += (y[k] - my) ** 2;
          cov += (x[k] - mx) * (y[k] - my);
        }
      vx /= n - 1;
      vy /= n - 1;
      cov /= n - 1;
      sum += ((2 * mx * my + C1) * (2 * cov + C2)) / ((mx * mx + my * my + C1) * (vx + vy + C2));
      count++;
    }
  }
  return count ? sum / count : 1;
}
