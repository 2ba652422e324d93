/**
 * Hosted images end to end: the real local server (startTestServer) previews fixture pages on a
 * loopback fixture server, and every asset URL in the record is fetched back from it.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { previewOn, startTestServer } from '../helpers/service';
import * as fx from './fixtures';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let fixture: FixtureServer;
let server: Server;
let ogJpeg: Buffer;
const neverAnswered: import('node:http').ServerResponse[] = [];

beforeAll(async () => {
  ogJpeg = await fx.jpeg(1600, 1000);
  const favicon = fx.ico([
    { width: 16, height: 16, bytes: await fx.png(16, 16, '#2288ee') },
    { width: 48, height: 48, bytes: fx.icoBitmap(48, 48, [0xee, 0x88, 0x22, 0xff]) }, // BGRA: #2288ee
  ]);
  fixture = await startFixtureServer({
    '/og.jpg': { headers: { 'content-type': 'image/jpeg' }, body: ogJpeg },
    '/favicon.ico': { headers: { 'content-type': 'image/x-icon' }, body: favicon },
    '/page': { body: html('<title>Hosted</title><meta property="og:image" content="/og.jpg"><link rel="icon" href="/favicon.ico">', '<p>Hello</p>') },
    '/themed': { body: html('<title>Themed</title><meta name="theme-color" content="#FF0000"><link rel="icon" href="/favicon.ico">') },
    '/broken-first': { body: html('<title>Icons</title><link rel="icon" href="/broken.png" sizes="64x64"><link rel="icon" href="/good.png" sizes="32x32">') },
    '/broken.png': { headers: { 'content-type': 'image/png' }, body: Buffer.from('not a png at all') },
    '/good.png': { headers: { 'content-type': 'image/png' }, body: await fx.pngWithAlpha(32, 32) },
    '/slow': { body: html('<title>Slow</title><meta property="og:image" content="/never.jpg"><link rel="icon" href="/favicon.ico">') },
    '/never.jpg': (_req, res) => {
      neverAnswered.push(res); /* never answers */
    },
    '/three-icons': {
      body: html(
        '<title>Icons</title><link rel="icon" href="/i1.png" sizes="64x64"><link rel="icon" href="/i2.png" sizes="32x32"><link rel="icon" href="/i3.png" sizes="16x16">',
      ),
    },
    '/i1.png': { headers: { 'content-type': 'image/png' }, body: await fx.pngWithAlpha(64, 64) },
    '/i2.png': { headers: { 'content-type': 'image/png' }, body: await fx.pngWithAlpha(32, 32) },
    '/i3.png': { headers: { 'content-type': 'image/png' }, body: await fx.pngWithAlpha(16, 16) },
    '/photos/sunset-at-sea.jpg': { headers: { 'content-type': 'image/jpeg' }, body: ogJpeg },
    '/card': { body: html('<title>Card</title><meta property="og:image" content="/og-1200.png"><link rel="icon" href="/icon-64.png" sizes="64x64">') },
    '/og-1200.png': { headers: { 'content-type': 'image/png' }, body: await fx.gradientPng(1200, 630) },
    '/icon-64.png': { headers: { 'content-type': 'image/png' }, body: await fx.gradientPng(64, 64) },
  });
  // A roomy wait for the jobs: what is asserted is what they make, not how fast a loaded machine makes it.
  server = await startTestServer({ fetchTimeoutMs: 10_000, jobWaitMs: 20_000 });
});

afterAll(async () => {
  await server?.close();
  server?.cleanup();
  await fixture?.close();
});

const preview = (link: string) => previewOn(server, link);

/** Every image asset URL anywhere in a record (the page object's text versions are tested in test/page). */
function assetUrls(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string' && value.startsWith(`${server.url}/assets/`) && value.endsWith('.webp')) out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) assetUrls(v, out);
  return out;
}

/** The objects stored beside an asset URL's (under its `assets/<sha256>/`), without the local store's own `.meta.json` files; once its writes behind are done. */
async function storedBeside(url: string): Promise<string[]> {
  const blobs = server.deps.blobs as FsBlobStore;
  await blobs.flush();
  const dir = path.dirname(blobs.resolve(new URL(url).pathname.slice(1)));
  return fs
    .readdirSync(dir)
    .filter((f) => !f.endsWith('.meta.json'))
    .sort();
}

async function expectServed(urls: string[]): Promise<void> {
  expect(urls.length).toBeGreaterThan(0);
  for (const url of urls) {
    const res = await fetch(url);
    expect({ url, status: res.status, type: res.headers.get('content-type') }).toEqual({ url, status: 200, type: 'image/webp' });
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('etag')).toMatch(/^".+"$/);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect(meta.format).toBe('webp');
  }
}

test('a page with og:image gets all four sizes of `image` and an `icon`, each served by the local server', async () => {
  const record = await preview(fixture.url('/page'));
  expect(record).toMatchObject({ ok: true, type: 'PAGE', title: 'Hosted' });
  expect(record.image).toEqual({
    thumbnail: { width: 320, height: 200, url: expect.stringMatching(/\/assets\/[0-9a-f]{64}\/thumbnail\.webp$/) },
    medium: { width: 640, height: 400, url: expect.stringMatching(/\/medium\.webp$/) },
    large: { width: 1280, height: 800, url: expect.stringMatching(/\/large\.webp$/) },
    original: { width: 1600, height: 1000, url: expect.stringMatching(/\/original\.webp$/) },
    dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/),
    blurhash: expect.stringMatching(/^[0-9A-Za-z#$%*+,.:;=?@^_{|}~[\]-]{28}$/),
  });
  // The placeholders of the flat #2255aa JPEG: its decoded colour, within a unit or two.
  const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const near = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));
  expect(near(rgb(record.image.dominantColor), [0x22, 0x55, 0xaa])).toBeLessThanOrEqual(2);
  // ICO: the largest entry (48x48); no colour declared, so the icon's edge colour.
  expect(record.icon).toEqual({
    width: 48,
    height: 48,
    backgroundColor: expect.stringMatching(/^#[0-9a-f]{6}$/),
    url: expect.stringMatching(/\/original\.webp$/),
  });
  const [r, g, b] = rgb(record.icon.backgroundColor);
  expect(Math.abs(r - 0x22) + Math.abs(g - 0x88) + Math.abs(b - 0xee)).toBeLessThan(24);
  await expectServed(assetUrls(record));
  expect(assetUrls(record)).toHaveLength(5);
  // Stored: the image's four sizes (each its own: the source is larger than every box), the
  // manifest on the original; the icon only in the size the record uses.
  expect(await storedBeside(record.image.original.url)).toEqual(['large.webp', 'medium.webp', 'original.webp', 'thumbnail.webp']);
  expect(await storedBeside(record.icon.url)).toEqual(['original.webp']);

  // Second time: the same assets (content-addressed), nothing rendered again.
  const again = await preview(fixture.url('/page'));
  expect(again.image).toEqual(record.image);
  expect(again.icon).toEqual(record.icon);
});

test("a 1200x630 og:image: `large` is the original's object (3 renditions stored, the manifest on the original), every URL served", async () => {
  const record = await preview(fixture.url('/card'));
  expect(record.image.large).toEqual({ width: 1200, height: 630, url: record.image.original.url });
  expect(record.image.original).toMatchObject({ width: 1200, height: 630, url: expect.stringMatching(/\/original\.webp$/) });
  expect(record.image.medium).toMatchObject({ width: 640, height: 336 });
  expect(record.icon).toMatchObject({ width: 64, height: 64, url: expect.stringMatching(/\/original\.webp$/) });
  expect(await storedBeside(record.image.original.url)).toEqual(['medium.webp', 'original.webp', 'thumbnail.webp']);
  expect(await storedBeside(record.icon.url)).toEqual(['original.webp']);
  await expectServed(assetUrls(record));
});

test("the page's declared colour is the icon background, as CSS hex", async () => {
  const record = await preview(fixture.url('/themed'));
  expect(record.icon).toMatchObject({ width: 48, height: 48, backgroundColor: '#ff0000' });
});

test('icon candidates are tried in order: the first that decodes wins', async () => {
  const record = await preview(fixture.url('/broken-first'));
  expect(record.icon).toMatchObject({ width: 32, height: 32 });
  await expectServed(assetUrls(record));
});

test('an icon candidate is downloaded only when the one before it failed (one job tries them in order, on any runner)', async () => {
  const record = await preview(fixture.url('/three-icons'));
  expect(record.icon).toMatchObject({ width: 64, height: 64 });
  const asked = fixture.requests.map((r) => r.url).filter((u) => /^\/(i\d|broken|good)\.png/.test(u));
  expect(asked).toContain('/i1.png');
  expect(asked).not.toContain('/i2.png');
  expect(asked).not.toContain('/i3.png');
  // After a broken first candidate, the next one (the broken-first test above) was asked for.
  expect(asked.indexOf('/broken.png')).toBeLessThan(asked.indexOf('/good.png'));
});

test('a slow image never holds the record past its deadline; the record comes without it', async () => {
  // A server of its own: a 30 s fetch timeout, and a 4 s wait for the jobs (the icon's is done well within it).
  const own = await startTestServer({ fetchTimeoutMs: 30_000, jobWaitMs: 4000 });
  try {
    const record = await previewOn(own, fixture.url('/slow'));
    expect(record).toMatchObject({ ok: true, title: 'Slow' });
    expect(record.image).toBeUndefined();
    expect(record.icon).toMatchObject({ width: 48, height: 48 });
    // The record came while the image request was still unanswered: with a 30 s fetch timeout,
    // only the 4 s record deadline can have released it.
    expect(neverAnswered).toHaveLength(1);
    expect(neverAnswered[0].headersSent).toBe(false);
    expect(neverAnswered[0].writableEnded).toBe(false);
  } finally {
    await own.close();
    own.cleanup();
  }
});

test('an IMAGE link: type IMAGE, the top-level image in four sizes, title from the file name, size', async () => {
  const record = await preview(fixture.url('/photos/sunset-at-sea.jpg'));
  expect(record).toMatchObject({ ok: true, type: 'IMAGE', size: ogJpeg.length });
  expect(record.title).toMatch(/sunset.at.sea/i); // from the file name (the inferred-defaults rule decides its exact form)
  expect(record.image.original).toMatchObject({ width: 1600, height: 1000 });
  expect(record.image.thumbnail).toMatchObject({ width: 320, height: 200 });
  await expectServed(assetUrls(record));
});
