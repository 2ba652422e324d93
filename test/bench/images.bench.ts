/**
 * `npm run bench -- images`: first sharp's floor for a card image (1200x630 PNG and JPEG, 1600x1000
 * JPEG: ./card-images.ts): the peer's recipe (a clone per size, four at once) at sharp's default
 * effort and at 0, one decode then four encodes at effort 0 and at renderImage's efforts (4/2/1/1,
 * `large` of a source within 1280 px encoded once), renderImage, and startRender's answer (what the
 * local record waits for: the sizes and the placeholders, the encodes after it untimed), interleaved in one
 * process (BENCH_FLOOR_RUNS each, 30; BENCH_FLOOR=0 leaves them out, BENCH_FLOOR_ONLY=1 runs only
 * them), and the job's puts into the local blob store (storeRows). Then the median time to render
 * the four WebP sizes (lib/media/images.ts renderImage: one decode, each size resized from the
 * next larger one, encode; no storage) of a 1600x1000 and a 4000x3000 JPEG, and of three
 * 1600x1000 JPEGs at once (a page's images), with libvips at one thread per pipeline
 * (sharp.concurrency(1), what sharp picks on glibc and what the service keeps) and at two;
 * BENCH_POOL=1 keeps a CPU pool thread parsing a 300 KB page meanwhile (a page-content job beside
 * the renders). Then one effort for every size for comparison (4 is sharp's default). BENCH_RUNS
 * sets the runs (9). Each row: median (p50), p90 and min; a render's figures include its
 * placeholders (dominant colour, blurhash: lib/media/placeholders.ts), and a last row times them
 * alone, from a thumbnail's raw pixels as a render has them (200 runs).
 */

import { randomBytes } from 'node:crypto';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store.js';
import { CpuPool } from '../../lib/jobs/cpu-pool.js';
import { imagePlaceholders, renderImage, startRender } from '../../lib/media/render-image.js';
import { median, timeRuns } from './bench.js';
import { graphicCardPng, photoCardJpeg } from './card-images.js';
import { largeArticle } from './content.bench.js';
import { quantile } from './corpus.js';

/** A photo-like JPEG: smooth gradients plus noise, so it is not trivially compressible. */
export async function photoJpeg(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 42;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      const n = (rand() - 0.5) * 40;
      raw[o] = Math.max(0, Math.min(255, (x / width) * 255 + n));
      raw[o + 1] = Math.max(0, Math.min(255, (y / height) * 255 + n));
      raw[o + 2] = Math.max(0, Math.min(255, 128 + 100 * Math.sin((x + y) / 50) + n));
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
}

const MAX_PIXELS = 50_000_000;

/** A row's figures: median (p50), p90 and min of its runs. */
const figures = (times: number[]) =>
  `median ${median(times).toFixed(1).padStart(7)} ms (p90 ${quantile(times, 0.9).toFixed(1)}, min ${Math.min(...times).toFixed(1)})`;

/** The four boxes of lib/media/image-sizes.ts (`original`: none). */
const BOXES = [320, 640, 1280, undefined] as const;

/**
 * The peer's recipe (unfurl+sharp): one sharp instance, a clone per size (each clone decodes the
 * input again: libvips pipelines do not share pixels), resized to fit its box, WebP at sharp's
 * defaults (quality 80, effort 4) or at `effort`, all four at once.
 */
function peerRender(bytes: Buffer, effort?: number): Promise<Buffer[]> {
  const source = sharp(bytes, { failOn: 'none' });
  return Promise.all(
    BOXES.map((box) => {
      const p = source.clone();
      if (box !== undefined) p.resize(box, box, { fit: 'inside', withoutEnlargement: true });
      return p.webp(effort === undefined ? {} : { effort }).toBuffer();
    }),
  );
}

/**
 * The simplest fast render from one decode: the source's raw pixels once, then each size resized
 * from them and encoded at effort 0 in its own pipeline, all four at once.
 */
async function oneDecodeRender(bytes: Buffer, effortFor: (box: number | undefined) => number = () => 0): Promise<Buffer[]> {
  const { data, info } = await sharp(bytes, { failOn: 'none' }).raw().toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  // With renderImage's efforts, a size the source fits in (`large` of a 1200x630) is the original's encode.
  const boxes = BOXES.filter((box) => box === undefined || effortFor(box) !== effortFor(undefined) || Math.max(info.width, info.height) > box);
  return Promise.all(
    boxes.map((box) => {
      const p = sharp(data, raw);
      if (box !== undefined) p.resize(box, box, { fit: 'inside', withoutEnlargement: true });
      return p.webp({ effort: effortFor(box) }).toBuffer();
    }),
  );
}

/** renderImage's efforts (lib/media/render-image.ts webpEffortFor). */
const renderEfforts = (box: number | undefined) => (box === undefined ? 1 : box <= 320 ? 4 : box <= 640 ? 2 : 1);

/**
 * Sharp's floor for a card image: each contender on each input in turn (A, B, C, A, B, C ... with
 * the order rotated every run, so none always runs first or after the same one), FLOOR_RUNS runs
 * each (30), two warm-ups. The machine is shared: only figures taken interleaved are compared.
 */
async function floorRows(): Promise<void> {
  const runs = Number(process.env.BENCH_FLOOR_RUNS ?? 30);
  const inputs: [string, Buffer][] = [
    ['1200x630 PNG (graphic)', await graphicCardPng(1200, 630)],
    ['1200x630 JPEG (photo)', await photoCardJpeg(1200, 630)],
    ['1600x1000 JPEG (photo)', await photoCardJpeg(1600, 1000)],
  ];
  const contenders: [string, (b: Buffer) => Promise<unknown>][] = [
    ['peer: clone x4, effort 4', (b) => peerRender(b)],
    ['peer: clone x4, effort 0', (b) => peerRender(b, 0)],
    ['one decode, 4 encodes at effort 0', (b) => oneDecodeRender(b)],
    ["one decode, renderImage's efforts", (b) => oneDecodeRender(b, renderEfforts)],
    ['renderImage', (b) => renderImage(b, { maxPixels: MAX_PIXELS })],
    // What the local record waits for (lib/media/images.ts on a store with putLater): the sizes
    // and placeholders; the encodes after it are not timed, but awaited before the next contender.
    [
      "startRender's answer (early)",
      async (b) => {
        const t0 = performance.now();
        const started = await startRender(b, { maxPixels: MAX_PIXELS, early: true });
        const ms = performance.now() - t0;
        await started.done;
        return ms;
      },
    ],
  ];
  for (const [label, bytes] of inputs) {
    const times = contenders.map(() => [] as number[]);
    for (let i = -2; i < runs; i++) {
      for (let k = 0; k < contenders.length; k++) {
        const c = (k + Math.max(0, i)) % contenders.length;
        const t0 = performance.now();
        const own = await contenders[c][1](bytes);
        if (i >= 0) times[c].push(typeof own === 'number' ? own : performance.now() - t0);
      }
    }
    for (const [c, [name]] of contenders.entries()) {
      const t = times[c];
      process.stdout.write(`${`${label}, ${name}`.padEnd(52)} p50 ${median(t).toFixed(1).padStart(6)} ms, p90 ${quantile(t, 0.9).toFixed(1)}\n`);
    }
  }
}

/**
 * `images-store` on a local disk: the image job's puts into an FsBlobStore (the manifest's HEAD,
 * then thumbnail and medium at once, then the original with the manifest: lib/media/images.ts)
 * under a fresh directory of BENCH_STORE_DIR (the OS temp dir), 200 runs; and what one file
 * created there costs (the store makes seven a job: three bodies, three sidecars, a directory).
 */
async function storeRows(): Promise<void> {
  const root = mkdtempSync(path.join(process.env.BENCH_STORE_DIR ?? tmpdir(), 'images-bench-'));
  try {
    const store = new FsBlobStore(root, () => '');
    const [thumbnail, medium, original] = [5_000, 15_000, 40_000].map((n) => randomBytes(n));
    const webp = { contentType: 'image/webp', cacheControl: 'public, max-age=31536000, immutable' };
    let job = 0;
    const puts = await timeRuns(200, async () => {
      const key = (name: string) => `assets/${(job++).toString(16).padStart(64, '0')}/${name}.webp`;
      await store.head(key('original'));
      await Promise.all([store.put(key('thumbnail'), thumbnail, { ...webp, metadata: { size: '320x168' } }), store.put(key('medium'), medium, webp)]);
      await store.put(key('original'), original, { ...webp, metadata: { manifest: 'x'.repeat(600) } });
    });
    process.stdout.write(`${"the job's puts into FsBlobStore (3 blobs)".padEnd(52)} ${figures(puts)}\n`);
    let n = 0;
    const create = await timeRuns(200, () => fs.writeFile(path.join(root, `create-${n++}`), thumbnail));
    process.stdout.write(`${'one file created there (5 KB)'.padEnd(52)} ${figures(create)}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (process.env.BENCH_FLOOR !== '0') await floorRows();
  if (process.env.BENCH_FLOOR !== '0') await storeRows();
  if (process.env.BENCH_FLOOR_ONLY === '1') return;
  const small = await photoJpeg(1600, 1000);
  const big = await photoJpeg(4000, 3000);
  const runs = Number(process.env.BENCH_RUNS ?? 9);
  const initial = sharp.concurrency();
  process.stdout.write(
    `sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}, sharp.concurrency() = ${initial}, runs = ${runs}, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}\n`,
  );
  const row = async (label: string, bytes: Buffer, effort?: number) => {
    const render = () => renderImage(bytes, { maxPixels: MAX_PIXELS, effort });
    const times = await timeRuns(runs, render);
    const r = await render();
    const kib = r.renditions.map((x) => `${x.name} ${x.width}x${x.height} ${(x.data.length / 1024).toFixed(0)} KiB`).join(', ');
    process.stdout.write(`${label.padEnd(52)} ${figures(times)}  ${kib}\n`);
  };
  const three = async (label: string) => {
    const times = await timeRuns(runs, () => Promise.all([0, 1, 2].map(() => renderImage(small, { maxPixels: MAX_PIXELS }))));
    process.stdout.write(`${label.padEnd(52)} ${figures(times)}\n`);
  };
  // A pool thread kept busy with page content, as a page-content job beside the renders.
  let busy = process.env.BENCH_POOL === '1';
  const pool = busy ? new CpuPool({ threads: 1, maxQueue: 4 }) : undefined;
  const page = { url: 'https://news.example/a', bytesBase64: Buffer.from(largeArticle(300 * 1024)).toString('base64') };
  const background = pool
    ? (async () => {
        while (busy) await pool.run('readPageContent', page);
      })()
    : undefined;
  try {
    for (const threads of [1, 2]) {
      sharp.concurrency(threads);
      const tag = `libvips ${threads} thread${threads > 1 ? 's' : ''}${pool ? ', pool busy' : ''}`;
      await row(`1600x1000 JPEG -> 4 WebP sizes (${tag})`, small);
      await row(`4000x3000 JPEG -> 4 WebP sizes (${tag})`, big);
      await three(`three 1600x1000 JPEGs at once (${tag})`);
    }
  } finally {
    sharp.concurrency(initial);
    busy = false;
    await background;
    await pool?.close();
  }
  // The placeholders alone: what they add to a render (a 32 px resize of the thumbnail's pixels, flatten, the encoder).
  for (const [label, bytes] of [
    ['1600x1000', small],
    ['4000x3000', big],
  ] as const) {
    const thumb = await sharp(bytes).resize(320, 320, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true });
    const { width, height, channels } = thumb.info;
    const times = await timeRuns(200, () => imagePlaceholders(sharp(thumb.data, { raw: { width, height, channels } })));
    process.stdout.write(`${`placeholders of a ${label}'s ${width}x${height} thumbnail pixels`.padEnd(52)} ${figures(times)}\n`);
  }
  if (process.env.BENCH_EFFORTS !== '0') {
    for (const effort of [0, 2, 4]) await row(`1600x1000 JPEG, effort ${effort} for every size`, small, effort);
  }
}
