import sharp from 'sharp';
import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import type { Config } from '../../lib/config';
import type { ImageSet } from '../../lib/contract/link';
import type { JobContext } from '../../lib/jobs/context';
import type { HostedImage, ImageJobResult } from '../../lib/jobs/kinds';
import { fitWithin, IMAGE_SIZE_NAMES, IMAGE_SIZES, type ImageSizeName } from '../../lib/media/image-sizes';
import { runImageJob, URL_MEMO } from '../../lib/media/images';
import { renderImage } from '../../lib/media/render-image';
import type { BlobStore } from '../../lib/ports';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { testConfig } from '../helpers/service';
import * as fx from './fixtures';

const MAX = 50_000_000;
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function jobContext(overrides: Partial<Config> = {}) {
  const config = testConfig(overrides);
  cleanups.push(config.cleanup);
  const store = new FsBlobStore(config.dataDir, () => 'http://assets.test');
  const puts: string[] = [];
  /** Every call the job makes on the store, in order: `has <key>`, `put <key>` and `stored <key>` when the put ends. */
  const calls: string[] = [];
  const blobs: BlobStore = {
    put: async (k, b, o) => {
      puts.push(k);
      calls.push(`put ${k}`);
      await store.put(k, b, o);
      calls.push(`stored ${k}`);
    },
    has: (k) => {
      calls.push(`has ${k}`);
      return store.has(k);
    },
    head: (k) => {
      calls.push(`head ${k}`);
      return store.head(k);
    },
    get: (k) => store.get(k),
    publicUrl: (k) => store.publicUrl(k),
  };
  const ctx: JobContext = { fetch: buildFetcher(config), blobs, config };
  return { ctx, puts, calls, store, config };
}

const rendition = (r: Awaited<ReturnType<typeof renderImage>>, name: ImageSizeName) => r.renditions.find((x) => x.name === name)!;
const sizes = (r: Awaited<ReturnType<typeof renderImage>>) => Object.fromEntries(r.renditions.map((x) => [x.name, [x.width, x.height]]));

/** The hosted image of a job asked for no `sizes`: all four. */
async function hosted(result: ImageJobResult): Promise<HostedImage & ImageSet> {
  const image = await hostedIn(result);
  expect(IMAGE_SIZE_NAMES.filter((n) => image[n])).toEqual(IMAGE_SIZE_NAMES);
  return image as HostedImage & ImageSet;
}

async function hostedIn(result: ImageJobResult): Promise<HostedImage> {
  if (!result.image) throw new Error(`expected an image, got: ${result.reason}`);
  return result.image;
}

describe('renderImage (real sharp)', () => {
  test('honours EXIF orientation, then strips metadata; never upscales', async () => {
    const bytes = await fx.jpegWithOrientation(400, 200, 6); // displayed 200 wide, 400 high
    const r = await renderImage(bytes, { maxPixels: MAX });
    expect(r.source).toMatchObject({ format: 'jpeg', width: 200, height: 400, hasAlphaChannel: false, animated: false, size: bytes.length });
    expect(sizes(r)).toEqual({ thumbnail: [160, 320], medium: [200, 400], large: [200, 400], original: [200, 400] });
    for (const x of r.renditions) {
      const m = await sharp(x.data).metadata();
      expect(m.format).toBe('webp');
      expect([m.width, m.height]).toEqual([x.width, x.height]);
      expect(m.exif).toBeUndefined();
      expect(m.orientation).toBeUndefined();
    }
  });

  test('each size resized from the next larger one keeps the size it has when resized from the source (no side a pixel off)', async () => {
    // 1500x1000 -> 1280x853 -> 640x427 -> 320x214 if each fit were taken from the one before; from the source the thumbnail is 320x213.
    for (const [w, h] of [
      [1500, 1000],
      [1400, 900],
      [999, 1777],
    ] as const) {
      const r = await renderImage(await fx.jpeg(w, h), { maxPixels: MAX });
      expect(sizes(r)).toEqual(
        Object.fromEntries(
          IMAGE_SIZES.map((s) => {
            const f = fitWithin(w, h, s.box);
            return [s.name, [f.width, f.height]];
          }),
        ),
      );
    }
    expect(sizes(await renderImage(await fx.jpeg(1500, 1000), { maxPixels: MAX })).thumbnail).toEqual([320, 213]);
  });

  test('a large PNG with alpha: every box, WebP keeping the alpha channel', async () => {
    const r = await renderImage(await fx.pngWithAlpha(2000, 1000), { maxPixels: MAX });
    expect(r.source).toMatchObject({ format: 'png', width: 2000, height: 1000, hasAlphaChannel: true });
    expect(sizes(r)).toEqual({ thumbnail: [320, 160], medium: [640, 320], large: [1280, 640], original: [2000, 1000] });
    for (const x of r.renditions) expect((await sharp(x.data).metadata()).hasAlpha).toBe(true);
  });

  test('a source within the large box: `large` is the original, encoded once, the bytes a separate encode gives', async () => {
    const bytes = await fx.gradientPng(1200, 630); // an og:image
    const r = await renderImage(bytes, { maxPixels: MAX });
    expect(r.renditions.map((x) => x.name)).toEqual(IMAGE_SIZE_NAMES);
    expect(sizes(r)).toEqual({ thumbnail: [320, 168], medium: [640, 336], large: [1200, 630], original: [1200, 630] });
    const large = rendition(r, 'large');
    const original = rendition(r, 'original');
    expect(large.data).toBe(original.data); // one encode's output, not two equal ones
    expect(large.sameAs).toBe('original'); // stored once, as the original's object (renderSource)
    expect(r.renditions.filter((x) => x.sameAs).map((x) => x.name)).toEqual(['large']);
    // What `large` was when encoded on its own: the source fitted in its box, WebP quality 80 at
    // its effort (1, the original's too). Sharing changes no byte of it.
    const alone = await sharp(bytes).resize({ width: 1280, height: 1280, fit: 'inside', withoutEnlargement: true }).webp({ quality: 80, effort: 1 }).toBuffer();
    expect(large.data.equals(alone)).toBe(true);
    // The smaller sizes are their own encodes.
    expect(rendition(r, 'medium').data.equals(original.data)).toBe(false);
    // Asked for without `original` (sizes added to an icon's manifest): encoded itself, the same bytes, still `sameAs`.
    const without = await renderImage(bytes, { maxPixels: MAX, sizes: ['medium', 'large'] });
    expect(without.renditions.map((x) => [x.name, x.sameAs])).toEqual([
      ['medium', undefined],
      ['large', 'original'],
    ]);
    expect(rendition(without, 'large').data.equals(original.data)).toBe(true);
    expect(without.edgeColor).toBe(''); // neither the thumbnail nor the original
    // Only `original` (an icon): the edge colour from it.
    const only = await renderImage(bytes, { maxPixels: MAX, sizes: ['original'] });
    expect(only.renditions.map((x) => x.name)).toEqual(['original']);
    expect(only.edgeColor).toMatch(/^#[0-9a-f]{6}$/);

    // A source larger than the box keeps a `large` of its own.
    const big = await renderImage(await fx.gradientPng(2000, 1000), { maxPixels: MAX });
    expect(sizes(big)).toMatchObject({ large: [1280, 640], original: [2000, 1000] });
    expect(rendition(big, 'large').data.equals(rendition(big, 'original').data)).toBe(false);
    expect(big.renditions.filter((x) => x.sameAs)).toEqual([]);
    expect((await sharp(rendition(big, 'large').data).metadata()).width).toBe(1280);

    // A vector (each size rendered from the source) within the box: the same rule, the same bytes.
    const vector = await renderImage(fx.svg('<rect width="100" height="50" fill="#0a0"/><circle cx="30" cy="20" r="10" fill="#f00"/>', 1000, 500), {
      maxPixels: MAX,
    });
    expect(sizes(vector)).toMatchObject({ large: [1000, 500], original: [1000, 500] });
    expect(rendition(vector, 'large').data).toBe(rendition(vector, 'original').data);

    // One effort for every size (the bench's comparison rows): a 64x64 icon is encoded once for all four.
    const icon = await renderImage(await fx.gradientPng(64, 64), { maxPixels: MAX, effort: 0 });
    expect(icon.renditions.map((x) => x.name)).toEqual(IMAGE_SIZE_NAMES);
    for (const x of icon.renditions) expect(x.data).toBe(rendition(icon, 'original').data);
    expect(icon.renditions.map((x) => x.sameAs)).toEqual(['original', 'original', 'original', undefined]);
    expect(icon.edgeColor).toMatch(/^#[0-9a-f]{6}$/i);
  });

  test('animated GIF: first frame for the stills, original stays animated', async () => {
    const r = await renderImage(await fx.animatedGif(64, 48), { maxPixels: MAX });
    expect(r.source).toMatchObject({ format: 'gif', width: 64, height: 48, animated: true });
    expect(sizes(r)).toEqual({ thumbnail: [64, 48], medium: [64, 48], large: [64, 48], original: [64, 48] });
    const thumb = r.renditions.find((x) => x.name === 'thumbnail')!;
    const tm = await sharp(thumb.data).metadata();
    expect(tm.pages ?? 1).toBe(1);
    const { data } = await sharp(thumb.data).raw().toBuffer({ resolveWithObject: true });
    // The first frame is red (the later frames are other colours): the still is that frame.
    expect(data[0]).toBeGreaterThan(200);
    expect(data[1]).toBeLessThan(60);
    expect(data[2]).toBeLessThan(60);
    const om = await sharp(r.renditions.find((x) => x.name === 'original')!.data, { animated: true }).metadata();
    expect(om.format).toBe('webp');
    expect(om.pages).toBe(3);
    expect(om.pageHeight).toBe(48);
    // `large` fits the source as it is, but is the first frame: not the animated original's bytes.
    const large = rendition(r, 'large');
    expect((await sharp(large.data).metadata()).pages ?? 1).toBe(1);
    expect(large.data.equals(rendition(r, 'original').data)).toBe(false);
    expect(large.sameAs).toBeUndefined();
  });

  test('animated WebP and still WebP', async () => {
    const a = await renderImage(await fx.animatedWebp(100, 80), { maxPixels: MAX });
    expect(a.source).toMatchObject({ format: 'webp', animated: true, width: 100, height: 80 });
    const s = await renderImage(await fx.webp(800, 600), { maxPixels: MAX });
    expect(s.source).toMatchObject({ format: 'webp', animated: false });
    expect(sizes(s)).toEqual({ thumbnail: [320, 240], medium: [640, 480], large: [800, 600], original: [800, 600] });
  });

  test('SVG is rasterized (small vectors at a useful size), internal references still render', async () => {
    const bytes = fx.svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#00f"/><stop offset="1" stop-color="#00f"/></linearGradient></defs><rect width="100" height="50" fill="url(#g)"/>',
    );
    const r = await renderImage(bytes, { maxPixels: MAX });
    expect(r.source.format).toBe('svg');
    expect(sizes(r)).toEqual({ thumbnail: [320, 160], medium: [512, 256], large: [512, 256], original: [512, 256] });
    const { data } = await sharp(r.renditions[0].data).raw().toBuffer({ resolveWithObject: true });
    expect(data[2]).toBeGreaterThan(200); // the gradient (blue) was applied
  });

  test('ICO: the largest entry wins, PNG or BMP', async () => {
    const bmpLargest = fx.ico([
      { width: 16, height: 16, bytes: await fx.png(16, 16) },
      { width: 48, height: 48, bytes: fx.icoBitmap(48, 48, [0x22, 0x88, 0xee, 0xff]) },
      { width: 32, height: 32, bytes: await fx.png(32, 32) },
    ]);
    const a = await renderImage(bmpLargest, { maxPixels: MAX });
    expect(a.source).toMatchObject({ format: 'ico', width: 48, height: 48, hasAlphaChannel: false });
    const { data } = await sharp(a.renditions[3].data).raw().toBuffer({ resolveWithObject: true });
    expect([data[0], data[1], data[2]].map((v) => Math.round(v / 16))).toEqual([0xee, 0x88, 0x22].map((v) => Math.round(v / 16)));

    const pngLargest = fx.ico([
      { width: 16, height: 16, bytes: fx.icoBitmap(16, 16, [0, 0, 0, 0xff]) },
      { width: 0, height: 0, bytes: await fx.png(256, 256) },
    ]);
    const b = await renderImage(pngLargest, { maxPixels: MAX });
    expect(b.source).toMatchObject({ format: 'ico', width: 256, height: 256, hasAlphaChannel: true });
    expect(sizes(b).original).toEqual([256, 256]);
  });

  test('a plain BMP file decodes', async () => {
    const dib = fx.icoBitmap(10, 6, [0, 0, 255, 255]).subarray(0, 40 + 10 * 6 * 4);
    const header = Buffer.from(dib.subarray(0, 40));
    header.writeInt32LE(6, 8); // a BMP stores the real height
    const file = Buffer.alloc(14);
    file.write('BM', 0, 'latin1');
    file.writeUInt32LE(14 + dib.length, 2);
    file.writeUInt32LE(54, 10);
    const r = await renderImage(Buffer.concat([file, header, dib.subarray(40)]), { maxPixels: MAX });
    expect(r.source).toMatchObject({ format: 'bmp', width: 10, height: 6 });
  });

  test('truncated files, pixel bombs and non-images are refused', async () => {
    const full = await fx.jpeg(800, 600);
    await expect(renderImage(full.subarray(0, Math.floor(full.length / 2)), { maxPixels: MAX })).rejects.toThrow();
    const p = await fx.pngWithAlpha(300, 300);
    await expect(renderImage(p.subarray(0, Math.floor(p.length * 0.6)), { maxPixels: MAX })).rejects.toThrow();
    // Refused at the header's pixel count, before any decoding (the message says which check).
    await expect(renderImage(fx.pngBomb(), { maxPixels: MAX })).rejects.toThrow(/pixel limit/);
    await expect(renderImage(fx.svg('<rect width="10" height="10"/>', 100_000, 100_000), { maxPixels: MAX })).rejects.toThrow(/pixel limit/);
    const gifBomb = Buffer.from(await fx.animatedGif(4, 4));
    gifBomb.writeUInt16LE(65535, 6); // logical screen 65535x65535
    gifBomb.writeUInt16LE(65535, 8);
    // libnsgif sizes a GIF by its frames, not by the claimed screen: it stays a harmless 4x4.
    expect((await renderImage(gifBomb, { maxPixels: MAX })).source).toMatchObject({ width: 4, height: 4 });
    await expect(renderImage(Buffer.from('<!doctype html><html></html>'), { maxPixels: MAX })).rejects.toThrow(/not an image/);
  });
});

describe('the image job', () => {
  let fixture: FixtureServer;
  beforeAll(async () => {
    fixture = await startFixtureServer();
  });
  afterAll(() => fixture.close());

  test('downloads, stores four content-addressed WebP sizes, returns a JSON-safe MediaImage', async () => {
    const { ctx, store } = jobContext();
    const bytes = await fx.jpeg(1600, 1000);
    fixture.route('/photo.png', { headers: { 'content-type': 'image/png' }, body: bytes }); // the header lies; the bytes win
    const result = await runImageJob({ url: fixture.url('/photo.png') }, ctx);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    const img = await hosted(result);
    expect(img).toMatchObject({ format: 'jpeg', width: 1600, height: 1000, size: bytes.length, hasAlphaChannel: false, reused: false });
    expect(img.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(img.thumbnail).toEqual({ width: 320, height: 200, url: `http://assets.test/assets/${img.sha256}/thumbnail.webp` });
    expect(img.medium).toMatchObject({ width: 640, height: 400 });
    expect(img.large).toMatchObject({ width: 1280, height: 800 });
    expect(img.original).toMatchObject({ width: 1600, height: 1000 });
    // A source larger than every box: four sizes, each its own object.
    expect(new Set(IMAGE_SIZE_NAMES.map((n) => img[n].url)).size).toBe(4);
    for (const name of IMAGE_SIZE_NAMES) {
      const key = `assets/${img.sha256}/${name}.webp`;
      expect(img[name].url).toBe(`http://assets.test/${key}`);
      expect((await sharp((await store.get(key))!).metadata()).format).toBe('webp');
      expect(await store.meta(key)).toMatchObject({ contentType: 'image/webp', cacheControl: 'public, max-age=31536000, immutable' });
    }
    // The manifest rides on the original (its metadata), no object of its own.
    expect(Object.keys((await store.head(`assets/${img.sha256}/original.webp`))!.metadata)).toEqual(['manifest']);
    // Every other size carries its dimensions (a page's content image finds its `medium` by one HEAD).
    expect((await store.head(`assets/${img.sha256}/thumbnail.webp`))!.metadata).toEqual({
      size: `${img.thumbnail.width}x${img.thumbnail.height}`,
    });
    expect(await store.has(`assets/${img.sha256}/manifest.json`)).toBe(false);
  });

  test('the job marks its parts for Server-Timing: download, render and store when it renders; no render when the source was rendered before', async () => {
    const { ctx } = jobContext();
    fixture.route('/parts.png', { headers: { 'content-type': 'image/png' }, body: await fx.pngWithAlpha(300, 200) });
    const marks = () => {
      const seen: Record<string, number> = {};
      const mark = (part: string, ms: number) => {
        seen[part] = (seen[part] ?? 0) + ms;
      };
      return { seen, mark };
    };
    const first = marks();
    expect((await runImageJob({ url: fixture.url('/parts.png') }, { ...ctx, mark: first.mark })).image).toBeDefined();
    expect(Object.keys(first.seen).sort()).toEqual(['download', 'render', 'store']);
    for (const ms of Object.values(first.seen)) expect(ms).toBeGreaterThanOrEqual(0);
    const again = marks();
    expect((await runImageJob({ url: fixture.url('/parts.png') }, { ...ctx, mark: again.mark })).image?.reused).toBe(true);
    expect(Object.keys(again.seen).sort()).toEqual(['download', 'store']);
  });

  test('the same bytes again are not rendered again (dedupe), from a URL or from bytes', async () => {
    const { ctx, puts } = jobContext();
    const bytes = await fx.pngWithAlpha(700, 500);
    const first = await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx));
    expect(puts).toHaveLength(3); // three sizes (`large` is the original's object), the manifest on the original
    fixture.route('/same.png', { headers: { 'content-type': 'image/png' }, body: bytes });
    const second = await hosted(await runImageJob({ url: fixture.url('/same.png') }, ctx));
    expect(puts).toHaveLength(3);
    expect(second.reused).toBe(true);
    expect({ ...second, reused: false }).toEqual(first);
  });

  test('a fresh render: one HEAD (the original, for a manifest), each object put without a check first, `large` sent to `original` (an og:image), the original last with the manifest', async () => {
    const { ctx, calls, store } = jobContext();
    fixture.route('/og.png', { headers: { 'content-type': 'image/png' }, body: await fx.gradientPng(1200, 630) });
    const img = await hosted(await runImageJob({ url: fixture.url('/og.png') }, ctx));
    expect(img.reused).toBe(false);
    const asset = (name: string) => `assets/${img.sha256}/${name}`;
    expect(calls.filter((c) => c.startsWith('has '))).toEqual([]);
    expect(calls.filter((c) => c.startsWith('head '))).toEqual([`head ${asset('original.webp')}`]);
    // Three renditions, the manifest on the original: 3 puts under assets/ (5 before `large` shared
    // the original's object and the manifest rode on it), none under jobs/ (no memo of a rendered URL).
    const renditionKeys = ['thumbnail', 'medium'].map((n) => asset(`${n}.webp`));
    expect(calls.filter((c) => c.startsWith('put ')).sort()).toEqual([...renditionKeys, asset('original.webp')].map((k) => `put ${k}`).sort());
    expect(await store.has(asset('large.webp'))).toBe(false);
    // The original (the manifest) is put only once every other rendition is stored.
    const originalPut = calls.indexOf(`put ${asset('original.webp')}`);
    for (const k of renditionKeys) expect(calls.indexOf(`stored ${k}`)).toBeLessThan(originalPut);
    const manifest = JSON.parse((await store.head(asset('original.webp')))!.metadata.manifest);
    expect(manifest.renditions).toEqual({
      thumbnail: { width: 320, height: 168, bytes: expect.any(Number) },
      medium: { width: 640, height: 336, bytes: expect.any(Number) },
      large: { width: 1200, height: 630, bytes: manifest.renditions.original.bytes, sameAs: 'original' },
      original: { width: 1200, height: 630, bytes: expect.any(Number) },
    });

    // Four entries, each with its size; `large` is the original's URL, and every URL names a stored WebP.
    expect(img.large).toEqual({ width: 1200, height: 630, url: `http://assets.test/${asset('original.webp')}` });
    expect(img.original).toEqual({ width: 1200, height: 630, url: `http://assets.test/${asset('original.webp')}` });
    expect(new Set(IMAGE_SIZE_NAMES.map((n) => img[n].url)).size).toBe(3);
    for (const name of IMAGE_SIZE_NAMES) {
      const key = img[name].url.replace('http://assets.test/', '');
      const m = await sharp((await store.get(key))!).metadata();
      expect({ name, format: m.format, width: m.width, height: m.height }).toEqual({ name, format: 'webp', width: img[name].width, height: img[name].height });
      expect(await store.meta(key)).toMatchObject({ contentType: 'image/webp', cacheControl: 'public, max-age=31536000, immutable' });
    }
    // Reused from the manifest: the same URLs.
    expect(await hosted(await runImageJob({ bytesBase64: (await fx.gradientPng(1200, 630)).toString('base64') }, ctx))).toEqual({ ...img, reused: true });
  });

  test('a manifest without `sameAs` (every size under its own key) reads as such', async () => {
    const { ctx, store, puts } = jobContext();
    const bytes = await fx.gradientPng(1200, 630);
    const fresh = await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx));
    // Rewrite it so: `large` put under its own key, no `sameAs`.
    const asset = (name: string) => `assets/${fresh.sha256}/${name}`;
    const manifest = JSON.parse((await store.head(asset('original.webp')))!.metadata.manifest);
    delete manifest.renditions.large.sameAs;
    await store.put(asset('large.webp'), (await store.get(asset('original.webp')))!, { contentType: 'image/webp' });
    await store.put(asset('original.webp'), (await store.get(asset('original.webp')))!, {
      contentType: 'image/webp',
      metadata: { manifest: JSON.stringify(manifest) },
    });
    puts.length = 0;
    const old = await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx));
    expect(puts).toEqual([]);
    expect(old).toEqual({ ...fresh, reused: true, large: { width: 1200, height: 630, url: `http://assets.test/${asset('large.webp')}` } });
  });

  test('an icon (`sizes: [original]`): one rendition carrying its manifest, the edge colour from the original', async () => {
    const { ctx, puts, store } = jobContext();
    const bytes = fx.ico([{ width: 48, height: 48, bytes: fx.icoBitmap(48, 48, [0xee, 0x88, 0x22, 0xff]) }]); // BGRA: #2288ee
    fixture.route('/icon.ico', { headers: { 'content-type': 'image/x-icon' }, body: bytes });
    const icon = await hostedIn(await runImageJob({ url: fixture.url('/icon.ico'), sizes: ['original'] }, ctx));
    const asset = (name: string) => `assets/${icon.sha256}/${name}`;
    // 1 put (5 before: four sizes and the manifest, the icon used only the original; then 2 and a URL memo).
    expect(puts).toEqual([asset('original.webp')]);
    expect(icon).toEqual({
      width: 48,
      height: 48,
      size: bytes.length,
      format: 'ico',
      hasAlphaChannel: false,
      original: { width: 48, height: 48, url: `http://assets.test/${asset('original.webp')}` },
      sha256: icon.sha256,
      animated: false,
      edgeColor: '#2388ef', // what the thumbnail gave when every size was rendered
      // No placeholders: a record's icon has none (test/media/placeholders.test.ts).
      reused: false,
    });
    expect((await sharp((await store.get(asset('original.webp')))!).metadata()).format).toBe('webp');
    // Downloaded again, found by its content hash: the same, nothing put.
    puts.length = 0;
    expect(await hostedIn(await runImageJob({ url: fixture.url('/icon.ico'), sizes: ['original'] }, ctx))).toEqual({ ...icon, reused: true });
    expect(puts).toEqual([]);

    // A 64x64 PNG icon: the same one object.
    const png = await fx.gradientPng(64, 64);
    const small = await hostedIn(await runImageJob({ bytesBase64: png.toString('base64'), sizes: ['original'] }, ctx));
    expect(puts).toEqual([`assets/${small.sha256}/original.webp`]);
    expect(small.edgeColor).toMatch(/^#[0-9a-f]{6}$/);
  });

  test('the bytes of an icon (its manifest has only `original`) as a card image: the missing sizes are rendered and stored, the original again with the new manifest', async () => {
    const { ctx, puts, store } = jobContext();
    const bytes = await fx.gradientPng(64, 64);
    fixture.route('/logo.png', { headers: { 'content-type': 'image/png' }, body: bytes });
    const downloads = () => fixture.requests.filter((q) => q.url === '/logo.png').length;
    const icon = await hostedIn(await runImageJob({ url: fixture.url('/logo.png'), sizes: ['original'] }, ctx));
    const asset = (name: string) => `assets/${icon.sha256}/${name}`;
    const manifest = async () => JSON.parse((await store.head(asset('original.webp')))!.metadata.manifest);
    expect(Object.keys((await manifest()).renditions)).toEqual(['original']);

    // The same URL as the card's image: the icon's manifest lacks sizes: no hit; the missing sizes
    // are stored, and the original again, with the manifest of every size.
    puts.length = 0;
    const card = await hosted(await runImageJob({ url: fixture.url('/logo.png') }, ctx));
    expect(downloads()).toBe(2);
    expect(card.reused).toBe(false);
    // thumbnail and medium (their own encodes: a higher effort than the original's), the original;
    // `large` is the original's object.
    expect(puts.sort()).toEqual([asset('medium.webp'), asset('original.webp'), asset('thumbnail.webp')]);
    expect(card.original).toEqual(icon.original);
    expect(card.large).toEqual(icon.original);
    expect(card.thumbnail).toEqual({ width: 64, height: 64, url: `http://assets.test/${asset('thumbnail.webp')}` });
    expect((await manifest()).renditions).toEqual({
      original: { width: 64, height: 64, bytes: expect.any(Number) },
      thumbnail: { width: 64, height: 64, bytes: expect.any(Number) },
      medium: { width: 64, height: 64, bytes: expect.any(Number) },
      large: { width: 64, height: 64, bytes: expect.any(Number), sameAs: 'original' },
    });
    for (const name of IMAGE_SIZE_NAMES) {
      const m = await sharp((await store.get(card[name].url.replace('http://assets.test/', '')))!).metadata();
      expect({ name, format: m.format, width: m.width }).toEqual({ name, format: 'webp', width: 64 });
    }
    // Now complete: a hit for either job, from the bytes or the URL, with nothing put.
    puts.length = 0;
    expect(await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx))).toEqual({ ...card, reused: true });
    expect(await hostedIn(await runImageJob({ url: fixture.url('/logo.png'), sizes: ['original'] }, ctx))).toEqual({
      ...icon,
      edgeColor: card.edgeColor,
      // The card's job made the placeholders; the manifest keeps them.
      dominantColor: card.dominantColor,
      blurhash: card.blurhash,
      reused: true,
    });
    expect(puts).toEqual([]);
    expect(downloads()).toBe(3);

    // The other way round: an image hosted with every size is an icon's hit at once.
    const photo = await fx.jpeg(800, 600);
    const full = await hosted(await runImageJob({ bytesBase64: photo.toString('base64') }, ctx));
    puts.length = 0;
    const asIcon = await hostedIn(await runImageJob({ bytesBase64: photo.toString('base64'), sizes: ['original'] }, ctx));
    expect(puts).toEqual([]);
    expect(asIcon).toEqual({ ...full, thumbnail: undefined, medium: undefined, large: undefined, reused: true });
  });

  test('an original without a manifest (a job stopped before it, or not ours) is no hit: rendered and stored again', async () => {
    const { ctx, store, puts } = jobContext();
    const bytes = await fx.gradientPng(300, 200);
    const first = await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx));
    const original = `assets/${first.sha256}/original.webp`;
    await store.put(original, (await store.get(original))!, { contentType: 'image/webp' });
    expect((await store.head(original))!.metadata).toEqual({});
    puts.length = 0;
    const again = await hosted(await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx));
    expect(again).toEqual(first); // rendered again (reused: false), the same record
    expect(puts).toContain(original);
    expect(Object.keys((await store.head(original))!.metadata)).toEqual(['manifest']);
  });

  test('a rendered URL is not remembered: downloaded again, found by its content hash, nothing stored', async () => {
    const { ctx, calls } = jobContext();
    fixture.route('/memo.jpg', { headers: { 'content-type': 'image/jpeg' }, body: await fx.jpeg(400, 300) });
    const downloads = () => fixture.requests.filter((q) => q.url === '/memo.jpg').length;
    const first = await hosted(await runImageJob({ url: fixture.url('/memo.jpg') }, ctx));
    expect(calls.filter((c) => c.startsWith('put jobs/'))).toEqual([]);
    calls.length = 0;
    const again = await hosted(await runImageJob({ url: fixture.url('/memo.jpg') }, ctx));
    expect(downloads()).toBe(2);
    expect(again).toEqual({ ...first, reused: true });
    expect(calls.filter((c) => c.startsWith('put '))).toEqual([]);
    expect(calls.filter((c) => c.startsWith('head '))).toEqual([`head assets/${first.sha256}/original.webp`]);
  });

  test('a broken image is remembered for URL_MEMO.failedMs; a timeout, a 5xx or a 429 is not remembered', async () => {
    const { ctx } = jobContext({ fetchTimeoutMs: 300 });
    fixture.route('/gone.png', { status: 404, body: 'no' });
    const count = (p: string) => fixture.requests.filter((q) => q.url === p).length;
    expect((await runImageJob({ url: fixture.url('/gone.png') }, ctx)).reason).toMatch(/HTTP 404/);
    const again = await runImageJob({ url: fixture.url('/gone.png') }, ctx);
    expect(again.reason).toMatch(/HTTP 404.*remembered/);
    expect(count('/gone.png')).toBe(1);
    const spy = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + URL_MEMO.failedMs + 1000);
    try {
      await runImageJob({ url: fixture.url('/gone.png') }, ctx);
    } finally {
      spy.mockRestore();
    }
    expect(count('/gone.png')).toBe(2);

    fixture.route('/busy.png', { status: 503, body: 'busy' });
    await runImageJob({ url: fixture.url('/busy.png') }, ctx);
    await runImageJob({ url: fixture.url('/busy.png') }, ctx);
    expect(count('/busy.png')).toBe(2);
    fixture.route('/limited.png', { status: 429, body: 'slow down' });
    await runImageJob({ url: fixture.url('/limited.png') }, ctx);
    expect((await runImageJob({ url: fixture.url('/limited.png') }, ctx)).reason).toMatch(/HTTP 429$/);
    expect(count('/limited.png')).toBe(2);
    fixture.route('/slow.png', (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end();
      }, 1500);
    });
    expect((await runImageJob({ url: fixture.url('/slow.png') }, ctx)).reason).toBeDefined();
    await runImageJob({ url: fixture.url('/slow.png') }, ctx);
    expect(count('/slow.png')).toBe(2);
  });

  test('an SVG with external references is rasterized without fetching any of them', async () => {
    const { ctx } = jobContext();
    const trap = (p: string) => fixture.url(p);
    for (const p of ['/trap-image.png', '/trap-xlink.png', '/trap-fill.svg', '/trap-import.css', '/trap-style.png', '/trap-use.svg', '/trap-entity.png']) {
      fixture.route(p, { headers: { 'content-type': 'image/png' }, body: await fx.png(10, 10) });
    }
    const body = [
      '<rect width="100" height="50" fill="#0a0"/>',
      `<image href="${trap('/trap-image.png')}" width="50" height="50"/>`,
      `<image xlink:href='${trap('/trap-xlink.png')}' x="50" width="50" height="50"/>`,
      `<rect width="10" height="10" fill="url(${trap('/trap-fill.svg')}#p)"/>`,
      `<style>@import url("${trap('/trap-import.css')}"); rect { background: url(${trap('/trap-style.png')}) }</style>`,
      `<use href="${trap('/trap-use.svg')}#x"/>`,
      `<image href="&#104;ttp://127.0.0.1:${fixture.port}/trap-entity.png" width="5" height="5"/>`,
    ].join('');
    fixture.route('/drawing.svg', { headers: { 'content-type': 'image/svg+xml' }, body: fx.svg(body) });
    const img = await hosted(await runImageJob({ url: fixture.url('/drawing.svg') }, ctx));
    expect(img.format).toBe('svg');
    expect(img.original).toMatchObject({ width: 512, height: 256 });
    const seen = fixture.requests.map((r) => r.url).filter((u) => u.startsWith('/trap-'));
    expect(seen).toEqual([]);
  });

  test('an SVG declaring entities is refused (no XXE, no billion laughs)', async () => {
    const { ctx } = jobContext();
    const xxe = Buffer.from(
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text></svg>',
    );
    expect(await runImageJob({ bytesBase64: xxe.toString('base64') }, ctx)).toEqual({ reason: expect.stringMatching(/entities/), lasting: true });
  });

  test("alternatives (an icon's candidates) are tried in order in one job: the first that hosts wins, later ones are not downloaded", async () => {
    const { ctx } = jobContext();
    fixture.route('/alt-gone.png', { status: 404, body: 'no' });
    fixture.route('/alt-junk.png', { headers: { 'content-type': 'image/png' }, body: 'not an image' });
    fixture.route('/alt-good.png', { headers: { 'content-type': 'image/png' }, body: await fx.gradientPng(32, 32) });
    fixture.route('/alt-never.png', { headers: { 'content-type': 'image/png' }, body: await fx.gradientPng(48, 48) });
    const asked = () => fixture.requests.map((q) => q.url).filter((u) => u.startsWith('/alt-'));
    const input = {
      url: fixture.url('/alt-gone.png'),
      alternatives: ['/alt-junk.png', '/alt-good.png', '/alt-never.png'].map((p) => fixture.url(p)),
      sizes: ['original' as const],
    };
    const icon = await hostedIn(await runImageJob(input, ctx));
    expect(icon).toMatchObject({ width: 32, height: 32 });
    expect(asked()).toEqual(['/alt-gone.png', '/alt-junk.png', '/alt-good.png']);
    // None hosts: the last one's reason.
    const none = await runImageJob({ url: fixture.url('/alt-gone.png'), alternatives: [fixture.url('/alt-junk.png')] }, ctx);
    expect(none.reason).toMatch(/not an image|undecodable/);
    // Each failed for a reason of its own: lasting. One that may pass (a 503) makes the whole not lasting.
    expect(none.lasting).toBe(true);
    fixture.route('/alt-busy.png', { status: 503, body: 'busy' });
    const mixed = await runImageJob({ url: fixture.url('/alt-busy.png'), alternatives: [fixture.url('/alt-junk.png')] }, ctx);
    expect(mixed).toEqual({ reason: expect.stringMatching(/not an image|undecodable/) });
  });

  test('broken, oversized, missing and forbidden images are a reason, never a thrown error', async () => {
    const { ctx } = jobContext({ maxImageBytes: 64 * 1024 });
    const noisy = await sharp(Buffer.alloc(300 * 300 * 3, 7), { raw: { width: 300, height: 300, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    fixture.route('/big.png', { headers: { 'content-type': 'image/png' }, body: noisy });
    fixture.route('/page.jpg', { headers: { 'content-type': 'image/jpeg' }, body: '<html>not an image</html>' });
    const full = await fx.jpeg(400, 300);
    const cases: [string, Parameters<typeof runImageJob>[0]][] = [
      ['truncated', { bytesBase64: full.subarray(0, full.length >> 1).toString('base64') }],
      ['bomb', { bytesBase64: fx.pngBomb().toString('base64') }],
      ['over maxImageBytes (bytes)', { bytesBase64: noisy.toString('base64') }],
      ['over maxImageBytes (download)', { url: fixture.url('/big.png') }],
      ['404', { url: fixture.url('/missing.png') }],
      ['not an image', { url: fixture.url('/page.jpg') }],
      ['nothing', {}],
    ];
    for (const [label, input] of cases) {
      const r = await runImageJob(input, ctx);
      expect({ label, image: r.image, reason: typeof r.reason }).toEqual({ label, image: undefined, reason: 'string' });
    }
    // With the SSRF guard closed, a loopback image is not fetched at all.
    const closed = jobContext({ allowPrivateNetworks: false });
    expect((await runImageJob({ url: fixture.url('/big.png') }, closed.ctx)).reason).toMatch(/not allowed/i);
  });
});
