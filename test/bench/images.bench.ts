/**
 * `npm run bench -- images`: median time to render the four WebP sizes (lib/media/images.ts
 * renderImage: decode, orient, resize, encode; no storage) of a 1600x1000 and a 4000x3000 JPEG,
 * both timed in the same run, with the production settings (per-size WebP effort), then with one
 * effort for every size for comparison (4 is sharp's default). BENCH_RUNS sets the runs (9).
 */
import { loadavg } from 'node:os';
import sharp from 'sharp';
import { renderImage } from '../../lib/media/images.js';
import { median, timeRuns } from './bench.js';

/** A photo-like JPEG: smooth gradients plus noise, so it is not trivially compressible. */
export async function photoJpeg(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      const n = (rand() - 0.5) * 40;
      raw[o] = Math.max(0, Math.min(255, (x / width) * 255 + n));
      raw[o + 1] = Math.max(0, Math.min(255, (y / height) * 255 + n));
      raw[o + 2] = Math.max(0, Math.min(255, 128 + 100 * Math.sin((x + y) / 50) + n));
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
}

const MAX_PIXELS = 50_000_000;

export async function run(): Promise<void> {
  const small = await photoJpeg(1600, 1000);
  const big = await photoJpeg(4000, 3000);
  const runs = Number(process.env.BENCH_RUNS ?? 9);
  process.stdout.write(`sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}, sharp.concurrency() = ${sharp.concurrency()}, runs = ${runs}, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);
  const row = async (label: string, bytes: Buffer, effort?: number) => {
    const render = () => renderImage(bytes, { maxPixels: MAX_PIXELS, effort });
    const times = await timeRuns(runs, render);
    const r = await render();
    const kib = r.renditions.map((x) => `${x.name} ${x.width}x${x.height} ${(x.data.length / 1024).toFixed(0)} KiB`).join(', ');
    process.stdout.write(`${label.padEnd(44)} median ${median(times).toFixed(1).padStart(7)} ms (min ${Math.min(...times).toFixed(1)})  ${kib}\n`);
  };
  await row('1600x1000 JPEG -> 4 WebP sizes', small);
  await row('4000x3000 JPEG -> 4 WebP sizes', big);
  if (process.env.BENCH_EFFORTS !== '0') {
    for (const effort of [0, 2, 4]) await row(`1600x1000 JPEG, effort ${effort} for every size`, small, effort);
  }
}
