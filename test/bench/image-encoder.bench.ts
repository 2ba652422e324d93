/**
 * `npm run bench -- image-encoder`: what each WebP setting costs and buys, size by size, on
 * card-like images (./card-images.ts: photo JPEGs, a graphic PNG and the same graphic as a JPEG).
 * Each size's pixels are made once (the source decoded, resized to fit the size's box as the
 * renderer does) and every setting encodes those same pixels: its bytes, its encode time (median of
 * ENCODER_RUNS, 5, one encode at a time) and the SSIM of its decoded pixels against them (the
 * lossless render at that size). The chosen settings (lib/media/render-image.ts webpEffortFor,
 * WEBP_QUALITY) and why: docs/benchmarks.md, "The image path at its floor".
 */
import sharp, { type WebpOptions } from 'sharp';
import { fitWithin, IMAGE_SIZES } from '../../lib/media/image-sizes.js';
import { median } from './bench.js';
import { graphicCardJpeg, graphicCardPng, photoCardJpeg, ssim } from './card-images.js';

/** The settings tried on every size: effort at quality 80, then quality at efforts 0, 2 and 4, then smartSubsample. */
const SETTINGS: [string, WebpOptions][] = [
  ['q80 e0', { quality: 80, effort: 0 }],
  ['q80 e1', { quality: 80, effort: 1 }],
  ['q80 e2', { quality: 80, effort: 2 }],
  ['q80 e3', { quality: 80, effort: 3 }],
  ['q80 e4', { quality: 80, effort: 4 }],
  ['q75 e0', { quality: 75, effort: 0 }],
  ['q85 e0', { quality: 85, effort: 0 }],
  ['q75 e2', { quality: 75, effort: 2 }],
  ['q85 e2', { quality: 85, effort: 2 }],
  ['q75 e4', { quality: 75, effort: 4 }],
  ['q85 e4', { quality: 85, effort: 4 }],
  ['q80 e0 smartSubsample', { quality: 80, effort: 0, smartSubsample: true }],
  ['q80 e2 smartSubsample', { quality: 80, effort: 2, smartSubsample: true }],
  ['q80 e4 smartSubsample', { quality: 80, effort: 4, smartSubsample: true }],
];

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

async function sizePixels(bytes: Buffer, box: number | undefined): Promise<Pixels> {
  const p = sharp(bytes);
  if (box !== undefined) p.resize({ width: box, height: box, fit: 'inside', withoutEnlargement: true });
  const { data, info } = await p.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

async function measure(px: Pixels, options: WebpOptions, runs: number): Promise<{ bytes: number; ms: number; ssim: number }> {
  const raw = { raw: { width: px.width, height: px.height, channels: px.channels } };
  const times: number[] = [];
  let out = Buffer.alloc(0);
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    out = await sharp(px.data, raw).webp(options).toBuffer();
    times.push(performance.now() - t0);
  }
  const back = await sharp(out).raw().toBuffer({ resolveWithObject: true });
  return {
    bytes: out.length,
    ms: median(times),
    ssim: ssim({ data: px.data, channels: px.channels }, { data: back.data, channels: back.info.channels }, px.width, px.height),
  };
}

export async function run(): Promise<void> {
  const runs = Number(process.env.ENCODER_RUNS ?? 5);
  const images: [string, Buffer][] = [
    ['photo 1200x630 JPEG', await photoCardJpeg(1200, 630)],
    ['photo 1600x1000 JPEG', await photoCardJpeg(1600, 1000, 3)],
    ['graphic 1200x630 PNG', await graphicCardPng(1200, 630)],
    ['graphic 1200x630 JPEG', await graphicCardJpeg(1200, 630, 5)],
  ];
  process.stdout.write(`sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}, libwebp ${sharp.versions.webp}; ms: median of ${runs} encodes\n`);
  process.stdout.write('| image | size | setting | bytes | vs q80 e0 | SSIM | encode ms |\n|---|---|---|---|---|---|---|\n');
  for (const [label, bytes] of images) {
    const meta = await sharp(bytes).metadata();
    for (const s of IMAGE_SIZES) {
      const fit = fitWithin(meta.width ?? 0, meta.height ?? 0, s.box);
      // `large` of a source within its box is the original's pixels (the renderer's `sameAs`): measured once.
      if (s.name === 'large' && fit.width === meta.width && fit.height === meta.height) continue;
      const px = await sizePixels(bytes, s.box);
      let base = 0;
      for (const [name, options] of SETTINGS) {
        const m = await measure(px, options, runs);
        base ||= m.bytes;
        const delta = `${m.bytes >= base ? '+' : ''}${(((m.bytes - base) / base) * 100).toFixed(1)}%`;
        process.stdout.write(
          `| ${label} | ${s.name} ${px.width}x${px.height} | ${name} | ${m.bytes} | ${delta} | ${m.ssim.toFixed(4)} | ${m.ms.toFixed(1)} |\n`,
        );
      }
    }
  }
}
