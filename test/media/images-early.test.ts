/**
 * A record that waits only for its card's image sizes, not their encodes: on a store that holds
 * reads (BlobStore.putLater: the local server's, writing behind), the image job answers once the
 * sizes are known (render-image.ts `startRender`: the decode, the resizes, the placeholders), every
 * size's key held by the store until its WebP is encoded and in place. What it answers and what it
 * stores are those of the job that waits (the plain store), but for the record's edge colour
 * (an icon's, and an icon's job still waits).
 */

import sharp from 'sharp';
import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import type { JobContext } from '../../lib/jobs/context';
import type { HostedImage } from '../../lib/jobs/kinds';
import { IMAGE_SIZE_NAMES } from '../../lib/media/image-sizes';
import { runImageJob } from '../../lib/media/images';
import { renderImage, startRender } from '../../lib/media/render-image';
import type { BlobToPut } from '../../lib/ports';
import { html, startFixtureServer } from '../helpers/fixture-server';
import { get } from '../helpers/page-versions';
import { stillPending } from '../helpers/pending';
import { previewOn, startTestServer, testConfig } from '../helpers/service';
import * as fx from './fixtures';

const MAX = 50_000_000;
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/** A job context on a store of its own: writing behind (the local server's), or putting plainly. */
function jobContext(writeBehind: boolean) {
  const config = testConfig();
  cleanups.push(config.cleanup);
  const store = new FsBlobStore(config.dataDir, () => 'http://assets.test', { writeBehind });
  const marked: string[] = [];
  const ctx: JobContext = { fetch: buildFetcher(config), blobs: store, config, mark: (part) => void marked.push(part) };
  return { ctx, store, marked };
}

const withoutData = (r: { name: string; width: number; height: number; sameAs?: string }) => ({
  name: r.name,
  width: r.width,
  height: r.height,
  ...(r.sameAs ? { sameAs: r.sameAs } : {}),
});

describe('startRender', () => {
  const sources: [string, () => Promise<Buffer>][] = [
    ['a photo larger than every box', () => fx.jpeg(1600, 1000)],
    ['an og:image within the large box (`large` is the original)', () => fx.gradientPng(1200, 630)],
    ['a PNG with alpha', () => fx.pngWithAlpha(700, 500)],
    ['an animated GIF (its sizes once its animated original is made)', () => fx.animatedGif(120, 80)],
    ['an SVG (each size from the source)', async () => fx.svg('<rect width="100" height="50" fill="#0a0"/>', 1000, 500)],
  ];
  test.each(sources)('%s: the sizes and placeholders it answers with are those of the finished render', async (_name, make) => {
    const bytes = await make();
    const started = await startRender(bytes, { maxPixels: MAX, early: true });
    const done = await started.done;
    expect(started.sizes).toEqual(done.renditions.map(withoutData));
    expect(started.placeholders).toEqual(done.placeholders);
    expect(started.placeholders?.blurhash).toEqual(expect.any(String));
    expect(started.source).toEqual(done.source);
  });

  test('`early` changes only when the encodes start, not a byte of what they make', async () => {
    const bytes = await fx.jpeg(1500, 1000);
    const early = await (await startRender(bytes, { maxPixels: MAX, early: true })).done;
    const beside = await renderImage(bytes, { maxPixels: MAX });
    expect(early.renditions.map((r) => [r.name, r.data.toString('base64')])).toEqual(beside.renditions.map((r) => [r.name, r.data.toString('base64')]));
    expect(early.edgeColor).toBe(beside.edgeColor);
  });

  test('a source that does not decode fails startRender itself, not only its `done`', async () => {
    const png = await fx.gradientPng(400, 300);
    await expect(startRender(png.subarray(0, png.length / 2), { maxPixels: MAX, early: true })).rejects.toThrow();
  });
});

describe('the image job on a store that holds reads', () => {
  test('answers before its sizes are encoded; each address waits for its bytes; the same result and objects as the job that waits', async () => {
    const bytes = await fx.jpeg(1600, 1000);
    const early = jobContext(true);
    // What happened in which order: the job's answer, and each size's bytes made (putLater's `made`).
    // The answer comes in the same turn as the render's sizes (promise callbacks only); an encode
    // ends in a later one (sharp's thread): were the answer to wait for an encode, it would come after.
    const events: string[] = [];
    const putLater = early.store.putLater?.bind(early.store);
    Object.assign(early.store, {
      putLater: (key: string, made: Promise<BlobToPut>, after?: Promise<unknown>) => {
        made.then(() => events.push(`made ${key.split('/').pop()}`));
        return putLater?.(key, made, after);
      },
    });
    const result = await runImageJob({ bytesBase64: bytes.toString('base64') }, early.ctx).finally(() => events.push('answered'));
    const image = result.image as HostedImage & Record<(typeof IMAGE_SIZE_NAMES)[number], { url: string }>;
    expect(image).toBeDefined();
    const key = (name: string) => `assets/${image.sha256}/${name}.webp`;
    // Each key is held: a read waits for its bytes.
    expect(await early.store.has(key('thumbnail'))).toBe(true);
    const got = await Promise.all(IMAGE_SIZE_NAMES.map((name) => early.store.get(key(name))));
    expect(events[0]).toBe('answered');
    expect(new Set(events.slice(1))).toEqual(new Set(['made thumbnail.webp', 'made medium.webp', 'made large.webp', 'made original.webp']));
    // The record's parts: the download, the look-up of a manifest (`store`), the render up to the sizes; no put.
    expect(early.marked).toEqual(['download', 'store', 'render']);

    const waiting = jobContext(false);
    const waited = (await runImageJob({ bytesBase64: bytes.toString('base64') }, waiting.ctx)).image as HostedImage;
    // The same answer, but for the edge colour (an icon's background: an icon's job waits for it).
    expect(waited.edgeColor).toMatch(/^#[0-9a-f]{6}$/);
    expect(image).toEqual({ ...waited, edgeColor: '' });
    // The same objects: every size's bytes and metadata, the manifest on the original (with the edge colour).
    await early.store.flush();
    for (const [i, name] of IMAGE_SIZE_NAMES.entries()) {
      expect(got[i]).toEqual(await waiting.store.get(key(name)));
      expect(await new FsBlobStore(early.store.root, () => '').get(key(name))).toEqual(got[i]);
      expect(await early.store.meta(key(name))).toEqual(await waiting.store.meta(key(name)));
    }
    // The next job finds the manifest: reused, with the edge colour now.
    const again = (await runImageJob({ bytesBase64: bytes.toString('base64') }, early.ctx)).image as HostedImage;
    expect(again).toEqual({ ...waited, reused: true });
  });

  test("the manifest's original is written after the sizes it names", async () => {
    const bytes = await fx.pngWithAlpha(700, 500);
    const { ctx, store } = jobContext(true);
    const order: string[] = [];
    const write = (store as unknown as { write: (file: string, ...rest: unknown[]) => Promise<void> }).write.bind(store);
    Object.assign(store, {
      write: async (file: string, ...rest: unknown[]) => {
        await write(file, ...rest);
        order.push(file.split('/').pop() as string);
      },
    });
    await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx);
    await store.flush();
    expect(order.sort((a, b) => Number(a === 'original.webp') - Number(b === 'original.webp'))).toEqual(order);
    expect(order.at(-1)).toBe('original.webp');
    expect(new Set(order)).toEqual(new Set(['thumbnail.webp', 'medium.webp', 'original.webp']));
  });

  test("an icon's job (`original` only) still waits for its encode: its record's background is the encode's edge colour", async () => {
    const { ctx, store } = jobContext(true);
    const icon = (await runImageJob({ bytesBase64: (await fx.gradientPng(64, 64)).toString('base64'), sizes: ['original'] }, ctx)).image as HostedImage;
    expect(icon.edgeColor).toMatch(/^#[0-9a-f]{6}$/);
    expect(await stillPending(store.get(`assets/${icon.sha256}/original.webp`))).toBe(false);
  });
});

describe('on the local server', () => {
  test("a record's image addresses, asked for the moment it is back, answer 200 with each size's WebP; the same bytes later", async () => {
    const photo = await fx.jpeg(1600, 1000);
    const site = await startFixtureServer({
      '/photo.jpg': { headers: { 'content-type': 'image/jpeg' }, body: photo },
      '/story': {
        body: html(
          '<title>Kites</title><meta name="description" content="Kites over the bay"><meta property="og:image" content="/photo.jpg">',
          '<p>Kites.</p>',
          'en',
        ),
      },
    });
    const server = await startTestServer();
    try {
      const record = await previewOn(server, site.url('/story'));
      const urls: string[] = IMAGE_SIZE_NAMES.map((n) => record.image[n].url);
      expect(new Set(urls).size).toBe(4);
      const first = await Promise.all(urls.map((u) => get(u)));
      for (const [i, a] of first.entries()) {
        expect(a.status).toBe(200);
        expect(a.headers.get('content-type')).toBe('image/webp');
        const meta = await sharp(a.body).metadata();
        const size = record.image[IMAGE_SIZE_NAMES[i]];
        expect([meta.format, meta.width, meta.height]).toEqual(['webp', size.width, size.height]);
      }
      const later = await Promise.all(urls.map((u) => get(u)));
      for (const [i, a] of later.entries()) expect(a.body).toEqual(first[i].body);
    } finally {
      await server.close();
      server.cleanup();
      await site.close();
    }
  });
});
