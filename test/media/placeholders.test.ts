/**
 * The image placeholders (dominantColor, blurhash: lib/media/placeholders.ts) with real sharp: of
 * the render's own pixels, kept in the manifest for a reused source, added once to a manifest
 * stored before them, and carried by the hosted image's ImageSet and MediaImage.
 */
import { decode, isBlurhashValid } from 'blurhash';
import sharp from 'sharp';
import { buildFetcher, buildLocalDeps } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import type { JobContext } from '../../lib/jobs/context';
import type { HostedImage, ImageJobResult } from '../../lib/jobs/kinds';
import { hostImageList, toImageSet } from '../../lib/media/host-images';
import { runImageJob } from '../../lib/media/images';
import { placeholdersOf } from '../../lib/media/placeholders';
import { renderImage } from '../../lib/media/render-image';
import type { BlobStore } from '../../lib/ports';
import { silentLog, testConfig } from '../helpers/service';
import * as fx from './fixtures';

const MAX = 50_000_000;
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function jobContext() {
  const config = testConfig();
  cleanups.push(config.cleanup);
  const store = new FsBlobStore(config.dataDir, () => 'http://assets.test');
  const puts: string[] = [];
  const blobs: BlobStore = {
    put: (k, b, o) => {
      puts.push(k);
      return store.put(k, b, o);
    },
    has: (k) => store.has(k),
    head: (k) => store.head(k),
    get: (k) => store.get(k),
    publicUrl: (k) => store.publicUrl(k),
  };
  const ctx: JobContext = { fetch: buildFetcher(config), blobs, config };
  return { ctx, puts, store };
}

const hex = (rgb: readonly number[]) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
const rgbOf = (color: string) => [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
const distance = (a: readonly number[], b: readonly number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));

/** The mean colour of a blurhash decoded at 32x32. */
function decodedMean(blurhash: string): number[] {
  const px = decode(blurhash, 32, 32);
  const sum = [0, 0, 0];
  for (let i = 0; i < px.length; i += 4) for (let c = 0; c < 3; c++) sum[c] += px[i + c];
  return sum.map((s) => Math.round(s / (32 * 32)));
}

/** The mean sRGB colour of an image's first frame, flattened on white (sharp's own stats, not our code). */
async function meanOf(bytes: Buffer): Promise<number[]> {
  // stats() reads its input, not the pipeline's output: flatten first.
  const flat = await sharp(bytes).flatten({ background: '#ffffff' }).toColourspace('srgb').png().toBuffer();
  const stats = await sharp(flat).stats();
  return stats.channels.slice(0, 3).map((c) => Math.round(c.mean));
}

/** An opaque PNG of one colour with a block of another (a sixteenth of its area) in a corner. */
async function mostlyOne(width: number, height: number, main: string, block: string): Promise<Buffer> {
  const corner = await sharp({ create: { width: width / 4, height: height / 4, channels: 3, background: block } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: main } })
    .composite([{ input: corner, left: 0, top: 0 }])
    .png()
    .toBuffer();
}

function expectPlaceholders(p: { dominantColor?: string; blurhash?: string } | undefined): asserts p is { dominantColor: string; blurhash: string } {
  expect(p?.dominantColor).toMatch(/^#[0-9a-f]{6}$/);
  expect(isBlurhashValid(p?.blurhash ?? '')).toEqual({ result: true });
  expect(p?.blurhash).toHaveLength(28); // 4 by 3 components: 4 + 2 per component
}

describe('placeholders of the render', () => {
  test('a PNG mostly of one colour: that colour is the dominant one, exactly; the blurhash decodes to about its mean', async () => {
    const bytes = await mostlyOne(800, 400, '#c81e28', '#1e64c8');
    const { placeholders } = await renderImage(bytes, { maxPixels: MAX });
    expectPlaceholders(placeholders);
    expect(placeholders.dominantColor).toBe('#c81e28');
    const mean = await meanOf(bytes);
    expect(distance(decodedMean(placeholders.blurhash), mean)).toBeLessThanOrEqual(16);
    // The block shows where it is: the blurhash's top-left corner is bluer than its bottom-right.
    const px = decode(placeholders.blurhash, 32, 32);
    const at = (x: number, y: number) => [0, 1, 2].map((c) => px[(y * 32 + x) * 4 + c]);
    expect(at(1, 1)[2]).toBeGreaterThan(at(30, 30)[2] + 20);
  });

  test("the dominant colour is sharp's most common bin, answered as its pixels' mean (no bin centre: white stays white)", () => {
    const rgba = Buffer.alloc(4 * 4 * 4, 255);
    expect(placeholdersOf(rgba, 4, 4).dominantColor).toBe('#ffffff');
    // Three pixels of two close shades (one bin), one other: the mean of the three.
    const px = [
      [16, 32, 48],
      [18, 34, 50],
      [20, 36, 52],
      [200, 0, 0],
    ];
    const two = Buffer.from(px.flatMap((p) => [...p, 255]));
    expect(placeholdersOf(two, 2, 2).dominantColor).toBe(hex([18, 34, 50]));
    expect(() => placeholdersOf(two, 3, 2)).toThrow(RangeError);
  });

  test('an image with alpha is flattened on white, as a card shows it', async () => {
    // Left half transparent, right half #00a03c: no edge-to-edge tie on a 3:1 canvas with a quarter opaque.
    const raw = Buffer.alloc(400 * 100 * 4);
    for (let i = 0; i < 400 * 100; i++) {
      const x = i % 400;
      raw.set(x < 300 ? [0, 160, 60, 0] : [0, 160, 60, 255], i * 4);
    }
    const bytes = await sharp(raw, { raw: { width: 400, height: 100, channels: 4 } })
      .png()
      .toBuffer();
    const { placeholders, source } = await renderImage(bytes, { maxPixels: MAX });
    expect(source.hasAlphaChannel).toBe(true);
    expectPlaceholders(placeholders);
    expect(distance(rgbOf(placeholders.dominantColor), [255, 255, 255])).toBeLessThanOrEqual(2); // but for the blend at the edge in the small downscale
    // Its mean is three quarters white, not three quarters black (what ignoring alpha would give).
    const mean = decodedMean(placeholders.blurhash);
    expect(distance(mean, await meanOf(bytes))).toBeLessThanOrEqual(16);
    expect(Math.min(...mean)).toBeGreaterThan(150);
  });

  test('a grey image, with and without alpha, gives sRGB placeholders', async () => {
    const grey = await sharp(Buffer.alloc(64 * 64, 77), { raw: { width: 64, height: 64, channels: 1 } })
      .png()
      .toBuffer();
    expect((await renderImage(grey, { maxPixels: MAX })).placeholders?.dominantColor).toBe('#4d4d4d');
    const greyAlpha = await sharp(Buffer.from(Array.from({ length: 64 * 64 }, () => [77, 128]).flat()), { raw: { width: 64, height: 64, channels: 2 } })
      .png()
      .toBuffer();
    // 77 at half opacity over white: (77 + 255) / 2.
    expect(distance(rgbOf((await renderImage(greyAlpha, { maxPixels: MAX })).placeholders?.dominantColor ?? ''), [166, 166, 166])).toBeLessThanOrEqual(1);
  });

  test.each([
    ['GIF', fx.animatedGif],
    ['WebP', fx.animatedWebp],
  ])('an animated %s: the placeholders of its first frame (red), the original still animated', async (_name, make) => {
    const bytes = await make(120, 80);
    const r = await renderImage(bytes, { maxPixels: MAX });
    expect(r.source.animated).toBe(true);
    expect((await sharp(r.renditions.find((x) => x.name === 'original')!.data).metadata()).pages).toBe(3);
    expectPlaceholders(r.placeholders);
    expect(distance(rgbOf(r.placeholders.dominantColor), [255, 0, 0])).toBeLessThanOrEqual(8);
    expect(distance(decodedMean(r.placeholders.blurhash), [255, 0, 0])).toBeLessThanOrEqual(8);
  });

  test('an icon rendered in `original` only, and an SVG (a decode per size), have them too', async () => {
    const bytes = await mostlyOne(64, 64, '#2288ee', '#ffffff');
    const icon = await renderImage(bytes, { maxPixels: MAX, sizes: ['original'] });
    expect(icon.placeholders?.dominantColor).toBe('#2288ee');
    const svg = fx.svg('<rect width="100" height="50" fill="#123456"/>');
    for (const sizes of [undefined, ['original'] as const]) {
      const r = await renderImage(svg, { maxPixels: MAX, sizes });
      expectPlaceholders(r.placeholders);
      expect(distance(rgbOf(r.placeholders.dominantColor), [0x12, 0x34, 0x56])).toBeLessThanOrEqual(4); // from a WebP rendition: its small losses
    }
  });
});

describe('placeholders in the image job', () => {
  const run = async (ctx: JobContext, bytes: Buffer): Promise<HostedImage> => {
    const r: ImageJobResult = await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx);
    if (!r.image) throw new Error(`expected an image, got: ${r.reason}`);
    return r.image;
  };

  test('stored in the manifest: a reused source (the same bytes again) has the same two values, with nothing rendered', async () => {
    const { ctx, puts, store } = jobContext();
    const bytes = await mostlyOne(800, 400, '#c81e28', '#1e64c8');
    const first = await run(ctx, bytes);
    expect(first.reused).toBe(false);
    expectPlaceholders(first);
    expect(first.dominantColor).toBe('#c81e28');
    const manifest = JSON.parse((await store.head(`assets/${first.sha256}/original.webp`))!.metadata.manifest);
    expect(manifest).toMatchObject({ dominantColor: first.dominantColor, blurhash: first.blurhash });
    puts.length = 0;
    const again = await run(ctx, bytes);
    expect(puts).toEqual([]);
    expect(again).toMatchObject({ reused: true, dominantColor: first.dominantColor, blurhash: first.blurhash });
  });

  test('a manifest stored before the placeholders: its `original` is rendered again once (one put), the others kept; then a plain hit', async () => {
    const { ctx, puts, store } = jobContext();
    const bytes = await fx.gradientPng(900, 500);
    const fresh = await run(ctx, bytes);
    const original = `assets/${fresh.sha256}/original.webp`;
    const { dominantColor: _d, blurhash: _b, ...old } = JSON.parse((await store.head(original))!.metadata.manifest);
    await store.put(original, (await store.get(original))!, { contentType: 'image/webp', metadata: { manifest: JSON.stringify(old) } });
    puts.length = 0;
    const upgraded = await run(ctx, bytes);
    expect(puts).toEqual([original]);
    // The same facts; the placeholders of the full decode, not of the thumbnail's pixels: the same colour, a blurhash about the same.
    expect(upgraded).toEqual({ ...fresh, blurhash: expect.any(String), reused: false });
    expect(distance(decodedMean(upgraded.blurhash!), decodedMean(fresh.blurhash!))).toBeLessThanOrEqual(4);
    const manifest = JSON.parse((await store.head(original))!.metadata.manifest);
    expect(manifest).toEqual({ ...old, dominantColor: upgraded.dominantColor, blurhash: upgraded.blurhash, renditions: expect.any(Object) });
    expect(Object.keys(manifest.renditions).sort()).toEqual(['large', 'medium', 'original', 'thumbnail']);
    puts.length = 0;
    expect(await run(ctx, bytes)).toEqual({ ...upgraded, reused: true });
    expect(puts).toEqual([]);
  });

  test('an icon (`original` alone) is rendered without them, and its manifest reused as is; the same source hosted as an image then gets them, with one put', async () => {
    const { ctx, puts, store } = jobContext();
    const bytes = await mostlyOne(180, 180, '#2288ee', '#ffffff');
    const icon = await runImageJob({ bytesBase64: bytes.toString('base64'), sizes: ['original'] }, ctx);
    expect(icon.image).toBeDefined();
    expect(icon.image).not.toHaveProperty('blurhash');
    expect(icon.image).not.toHaveProperty('dominantColor');
    const original = `assets/${icon.image!.sha256}/original.webp`;
    expect(JSON.parse((await store.head(original))!.metadata.manifest)).not.toHaveProperty('blurhash');
    puts.length = 0;
    expect((await runImageJob({ bytesBase64: bytes.toString('base64'), sizes: ['original'] }, ctx)).image).toMatchObject({ reused: true });
    expect(puts).toEqual([]);
    const image = await run(ctx, bytes);
    expectPlaceholders(image);
    expect(image.dominantColor).toBe('#2288ee');
    expect(puts).toContain(original);
    // An icon job after it keeps them in the manifest.
    puts.length = 0;
    expect((await runImageJob({ bytesBase64: bytes.toString('base64'), sizes: ['original'] }, ctx)).image).toMatchObject({ reused: true });
    expect(JSON.parse((await store.head(original))!.metadata.manifest)).toMatchObject({ blurhash: image.blurhash });
  });

  test('the ImageSet and the MediaImage of a hosted image carry them', async () => {
    const config = testConfig();
    cleanups.push(config.cleanup);
    const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
    const bytes = await mostlyOne(400, 400, '#2288ee', '#ffffff');
    const [media] = await hostImageList([{ bytes }], deps.jobs, { requestId: 'r', deadline: Date.now() + 20_000 });
    expectPlaceholders(media);
    expect(media).toMatchObject({ width: 400, height: 400, format: 'png', dominantColor: '#2288ee' });
    expect(toImageSet(media!)).toEqual({
      thumbnail: media!.thumbnail,
      medium: media!.medium,
      large: media!.large,
      original: media!.original,
      dominantColor: media!.dominantColor,
      blurhash: media!.blurhash,
    });
  });
});
