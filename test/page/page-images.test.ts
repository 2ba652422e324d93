/**
 * The images of the hosted HTML version (page.html). It is served with `img-src 'self'`, so its
 * <img> must point at hosted renditions: the article's images are hosted through the guarded
 * fetcher (byte, count and time caps) and rewritten; the ones that cannot be are removed, with
 * the figure they leave empty. Checked on the stored HTML and Markdown, and in headless Chromium
 * on the page as the local server serves it (with its CSP): no image may fail to load.
 */
import type http from 'node:http';
import sharp from 'sharp';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { browserAvailable, browserExecutable, launchArgs } from '../../lib/browser/availability';
import { type Config, loadConfig } from '../../lib/config';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../lib/fetch/types';
import type { PageContentResult } from '../../lib/jobs/kinds';
import { runImageJob } from '../../lib/media/images';
import { runPageContentJob } from '../../lib/page/page-content';
import { PAGE_IMAGE_LIMITS, pageImagesUntil } from '../../lib/page/page-images';
import { bestSrcsetCandidate } from '../../lib/page/sanitize';
import type { PutOptions } from '../../lib/ports';
import { type CountingServer, type FixtureServer, startCountingServer, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, startTestServer, testConfig } from '../helpers/service';
import { paragraphs } from './fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: page.html browser test skipped\n`);

jest.setTimeout(60_000);

/** The per-image byte cap in these tests (the oversize image is above it, the others well below). */
const MAX_IMAGE_BYTES = 256 * 1024;

const solid = (width: number, height: number, background: string) => sharp({ create: { width, height, channels: 3, background } });

async function images() {
  return {
    // A JPEG with EXIF (a copyright and a camera), wider than the `medium` box.
    goodA: await solid(900, 600, '#2060c0')
      .withExif({ IFD0: { Copyright: 'Secret Photographer', Make: 'SecretCam' } })
      .jpeg()
      .toBuffer(),
    goodB: await solid(400, 300, '#c04020').png().toBuffer(),
    srcsetLarge: await solid(1400, 700, '#20a040').jpeg().toBuffer(),
    lazy: await solid(500, 500, '#a0a020').jpeg().toBuffer(),
    picture: await solid(300, 200, '#8020a0').jpeg().toBuffer(),
    // Noise does not compress: about 480 KB, over MAX_IMAGE_BYTES.
    huge: await sharp(Buffer.from(Array.from({ length: 400 * 400 * 3 }, () => Math.floor(Math.random() * 256))), {
      raw: { width: 400, height: 400, channels: 3 },
    })
      .png({ compressionLevel: 0 })
      .toBuffer(),
  };
}

/**
 * An article (at /2024/gallery/story.html) with, in order: a good JPEG by a relative URL in a
 * figure, a 404 in a figure, the forbidden addresses given, an oversize PNG, a good PNG by an
 * absolute URL, an image known by srcset only, a lazy image (data-src; its src a spacer that does
 * not exist), a <picture> with a <source>, and a tracking pixel.
 */
function galleryArticle(origin: string, forbidden: string[]): string {
  const paras = paragraphs(600).map((p) => `<p>${p}</p>`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A gallery of rivers</title></head>
<body><nav><a href="/">Home</a></nav><main><article>
  <h1>A gallery of rivers</h1>
  ${paras.slice(0, 2).join('\n')}
  <figure><img src="../img/good-a.jpg" alt="Good A" width="900" height="600"><figcaption>Caption A</figcaption></figure>
  ${paras.slice(2, 4).join('\n')}
  <figure><img src="/img/missing.jpg" alt="Missing"><figcaption>Caption of the missing image</figcaption></figure>
  ${forbidden.map((u, i) => `<p><img src="${u}" alt="Forbidden ${i}"></p>`).join('\n')}
  <p>Before the oversize image <img src="/img/huge.png" alt="Huge"> and after it.</p>
  ${paras.slice(4, 6).join('\n')}
  <p><img src="${origin}/img/good-b.png" alt="Good B"></p>
  <p><img srcset="/img/srcset-small.jpg 320w, /img/srcset-large.jpg 1400w" sizes="100vw" alt="Srcset"></p>
  ${paras.slice(6, 8).join('\n')}
  <p><img src="/img/spacer.gif" data-src="/img/lazy.jpg" alt="Lazy"></p>
  <figure><picture><source srcset="/img/picture.avif" type="image/avif"><img src="/img/picture.jpg" alt="Picture"></picture></figure>
  <p><img src="/img/pixel.gif" width="1" height="1" alt="">${paras[8]?.replace(/<\/?p>/g, '') ?? ''}</p>
  ${paras.slice(9).join('\n')}
</article></main><footer>Footer</footer></body></html>`;
}

const GOOD_ALTS = ['Good A', 'Good B', 'Srcset', 'Lazy', 'Picture'];
const BAD_ALTS = ['Missing', 'Forbidden 0', 'Forbidden 1', 'Huge'];
const IMAGE_PATHS = [
  '/img/missing.jpg',
  '/img/huge.png',
  '/img/good-b.png',
  '/img/srcset-large.jpg',
  '/img/lazy.jpg',
  '/img/picture.jpg',
  '/2024/img/good-a.jpg',
];

async function serveGallery(site: FixtureServer, origin: string, forbidden: string[]): Promise<void> {
  const img = await images();
  const route = (path: string, body: Buffer, type: string) => site.route(path, { headers: { 'content-type': type }, body });
  site.route('/2024/gallery/story.html', { body: galleryArticle(origin, forbidden) });
  route('/2024/img/good-a.jpg', img.goodA, 'image/jpeg');
  route('/img/good-b.png', img.goodB, 'image/png');
  route('/img/srcset-large.jpg', img.srcsetLarge, 'image/jpeg');
  route('/img/srcset-small.jpg', img.goodB, 'image/png');
  route('/img/lazy.jpg', img.lazy, 'image/jpeg');
  route('/img/picture.jpg', img.picture, 'image/jpeg');
  route('/img/picture.avif', img.picture, 'image/jpeg');
  route('/img/huge.png', img.huge, 'image/png');
  route('/img/pixel.gif', img.goodB, 'image/png');
}

/** The <img> tags of an HTML document, with their attributes. */
function imgTags(html: string): Record<string, string>[] {
  return [...html.matchAll(/<img\b([^>]*)>/g)].map((m) =>
    Object.fromEntries([...m[1].matchAll(/([a-z-]+)="([^"]*)"/g)].map((a) => [a[1], a[2].replace(/&amp;/g, '&')])),
  );
}

const HOSTED = (base: string) => new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/assets/[0-9a-f]{64}/(medium|large)\\.webp$`);

describe('the images of page.html (the page-content job)', () => {
  let site: FixtureServer;
  let v4: CountingServer;
  let config: Config & { cleanup(): void };
  let fetch: Fetcher;
  let blobs: FsBlobStore;
  let origin: string;
  let r: PageContentResult;
  let html: string;
  let markdown: string;
  const ASSETS = 'http://assets.test';

  const cap = PAGE_IMAGE_LIMITS.maxImages;
  beforeAll(async () => {
    // The gallery's nine images all count here (the cap has its own test below).
    PAGE_IMAGE_LIMITS.maxImages = 12;
    site = await startFixtureServer();
    v4 = await startCountingServer('127.0.0.2', { 'content-type': 'image/png' });
    origin = `http://public.test:${site.port}`;
    await serveGallery(site, origin, [`http://private.test:${v4.port}/secret.png`, `http://127.0.0.2:${v4.port}/x.png`]);
    // A closed guard: only the fixture's address is trusted (it plays a public host), as in test/browser/screenshot.test.ts.
    fetch = closedGuardFetcher([site.port, v4.port], { 'public.test': '127.0.0.1', 'private.test': '127.0.0.2' });
    config = testConfig({ allowPrivateNetworks: false, maxImageBytes: MAX_IMAGE_BYTES });
    blobs = new FsBlobStore(config.dataDir, () => ASSETS);
    const page = await globalThis.fetch(site.url('/2024/gallery/story.html')).then((x) => x.arrayBuffer());
    r = await runPageContentJob(
      {
        url: `${origin}/2024/gallery/story.html`,
        bytesBase64: Buffer.from(page).toString('base64'),
        contentType: 'text/html; charset=utf-8',
        deadline: Date.now() + 20_000,
      },
      { fetch, blobs, config },
    );
    html = (await blobs.get(r.htmlUrl!.replace(`${ASSETS}/`, '')))!.toString('utf8');
    markdown = (await blobs.get(r.markdownUrl!.replace(`${ASSETS}/`, '')))!.toString('utf8');
  });
  afterAll(async () => {
    PAGE_IMAGE_LIMITS.maxImages = cap;
    config.cleanup();
    await Promise.all([site.close(), v4.close()]);
  });

  test('the good images are hosted and their <img> rewritten to the renditions; nothing points at the page or its srcset', () => {
    expect(r.images).toEqual({ found: 9, hosted: 5 });
    const tags = imgTags(html);
    expect(tags.map((t) => t.alt)).toEqual(GOOD_ALTS);
    for (const t of tags) {
      expect(t.src).toMatch(HOSTED(ASSETS));
      expect(t.src).toMatch(/\/medium\.webp$/);
      for (const candidate of (t.srcset ?? '').split(',').filter(Boolean)) expect(candidate.trim().split(/\s+/)[0]).toMatch(HOSTED(ASSETS));
      expect(Object.keys(t).filter((k) => /^data-|^sizes$|^class$/.test(k))).toEqual([]);
    }
    // The one rendition the versions show: medium (640 px box) as src, no srcset.
    const a = tags.find((t) => t.alt === 'Good A')!;
    expect(a.src).toMatch(/\/medium\.webp$/);
    expect(a.srcset).toBeUndefined();
    expect({ width: a.width, height: a.height }).toEqual({ width: '900', height: '600' }); // the page's own
    const b = tags.find((t) => t.alt === 'Good B')!;
    expect(b.srcset).toBeUndefined(); // 400 px wide: medium is the whole image
    expect({ width: b.width, height: b.height }).toEqual({ width: '400', height: '300' }); // from the rendition
    // Nothing but the canonical link names the page's host; no <source>, no private address.
    expect(html.replace(/<link rel="canonical"[^>]*>/, '')).not.toMatch(/public\.test|private\.test|127\.0\.0\.2|<source|srcset="(?!http:\/\/assets\.test)/);
  });

  test('the images that fail (404, forbidden address, over the byte cap) are removed, with the figure they leave empty', () => {
    for (const alt of BAD_ALTS) expect(html).not.toContain(`alt="${alt}"`);
    expect(html).not.toContain('Caption of the missing image');
    expect(html).toContain('<figcaption>Caption A</figcaption>');
    expect(html).toMatch(/Before the oversize image\s+and after it\./); // the paragraph's text stays
    expect(html).not.toMatch(/<p>\s*<\/p>|<figure>\s*<\/figure>|<picture>\s*<\/picture>/);
    // Markdown has the same images.
    const mdImages = [...markdown.matchAll(/!\[([^\]]*)\]\(([^)]+)\)/g)].map((m) => [m[1], m[2]]);
    expect(mdImages.map(([alt]) => alt)).toEqual(GOOD_ALTS);
    for (const [, url] of mdImages) expect(url).toMatch(HOSTED(ASSETS));
  });

  test('relative URLs are resolved against the final page URL; srcset gives its best candidate, data-src wins over a placeholder src; pixels are not fetched', () => {
    const fetched = site.requests.map((q) => q.url);
    expect(fetched).toEqual(expect.arrayContaining(IMAGE_PATHS));
    for (const path of ['/img/srcset-small.jpg', '/img/spacer.gif', '/img/pixel.gif', '/img/picture.avif']) expect(fetched).not.toContain(path);
    expect(bestSrcsetCandidate('a.jpg 320w, b.jpg 1400w, c.jpg 2800w')).toBe('b.jpg');
    expect(bestSrcsetCandidate('a.jpg 320w, b.jpg 800w')).toBe('b.jpg');
    expect(bestSrcsetCandidate('a.jpg, b.jpg 2x, c.jpg 3x')).toBe('b.jpg');
    expect(bestSrcsetCandidate('https://cdn.example/w_300,h_200/a.jpg 300w, https://cdn.example/w_1300,h_800/a.jpg 1300w')).toBe(
      'https://cdn.example/w_1300,h_800/a.jpg',
    );
  });

  test('the forbidden addresses were never reached: not a request, not a TCP connection', () => {
    expect(v4.connections).toBe(0);
  });

  test('renditions are WebP without the source metadata', async () => {
    const a = imgTags(html).find((t) => t.alt === 'Good A')!;
    // Only the size the versions show, and no srcset.
    expect(a.srcset).toBeUndefined();
    for (const u of [a.src]) {
      const bytes = (await blobs.get(u.replace(`${ASSETS}/`, '')))!;
      const meta = await sharp(bytes).metadata();
      expect(meta.format).toBe('webp');
      expect(meta.exif).toBeUndefined();
      expect(bytes.includes('Secret Photographer')).toBe(false);
    }
  });

  test("the same page again (its memo gone): the versions built before are found by one HEAD; no image is downloaded, nothing is stored but the job's memo", async () => {
    const before = site.requests.length;
    const page = await globalThis.fetch(site.url('/2024/gallery/story.html')).then((x) => x.arrayBuffer());
    const puts = jest.spyOn(blobs, 'put');
    const heads = jest.spyOn(blobs, 'head');
    try {
      const again = await runPageContentJob(
        { url: `${origin}/2024/gallery/story.html`, bytesBase64: Buffer.from(page).toString('base64'), contentType: 'text/html; charset=utf-8' },
        { fetch, blobs, config },
      );
      expect(again.htmlUrl).toBe(r.htmlUrl);
      expect(again.images).toEqual(r.images);
      expect(puts.mock.calls.map(([k]) => k)).toEqual([expect.stringMatching(/^jobs\/page-content\/[0-9a-f]{64}\.json$/)]);
      expect(heads.mock.calls.map(([k]) => k)).toEqual([r.htmlUrl!.replace(`${ASSETS}/`, '')]);
    } finally {
      puts.mockRestore();
      heads.mockRestore();
    }
    // Only the page itself was fetched again (by this test).
    expect(site.requests.slice(before).map((q) => q.url)).toEqual(['/2024/gallery/story.html']);
  });
});

describe('caps: count, total bytes and the deadline', () => {
  let site: FixtureServer;
  let config: Config & { cleanup(): void };
  let fetch: Fetcher;
  const article = (imgs: string[]) => `<!doctype html><html><head><title>Many images</title></head><body><article><h1>Many images</h1>
    ${paragraphs(480, 30)
      .map((p, i) => `<p>${p}</p>${imgs[i] !== undefined ? `<p><img src="${imgs[i]}" alt="img ${i}"></p>` : ''}`)
      .join('\n')}</article></body></html>`;
  const run = (html: string, deadline?: number) =>
    runPageContentJob(
      { url: site.url('/a.html'), bytesBase64: Buffer.from(html).toString('base64'), deadline },
      { fetch, blobs: new FsBlobStore(config.dataDir, () => 'http://assets.test'), config },
    );
  const stored = async (u: string) =>
    (await new FsBlobStore(config.dataDir, () => 'http://assets.test').get(u.replace('http://assets.test/', '')))!.toString('utf8');

  beforeAll(async () => {
    site = await startFixtureServer();
    for (let i = 0; i < 16; i++)
      site.route(`/n/${i}.png`, {
        headers: { 'content-type': 'image/png' },
        body: await solid(64, 64, `#${(0x102030 + i * 0x080808).toString(16)}`)
          .png()
          .toBuffer(),
      });
    config = testConfig({ maxImageBytes: MAX_IMAGE_BYTES });
    fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
  });
  afterAll(async () => {
    config.cleanup();
    await site.close();
  });

  test(`at most ${PAGE_IMAGE_LIMITS.maxImages} images are hosted; the ones after them are removed, not fetched`, async () => {
    const cap = PAGE_IMAGE_LIMITS.maxImages;
    const paths = Array.from({ length: cap + 2 }, (_, i) => `/n/${i}.png`);
    const r = await run(article(paths));
    expect(r.images).toEqual({ found: cap + 2, hosted: cap });
    const tags = imgTags(await stored(r.htmlUrl!));
    expect(tags.map((t) => t.alt)).toEqual(Array.from({ length: cap }, (_, i) => `img ${i}`));
    const fetched = site.requests.map((q) => q.url);
    expect(fetched).not.toContain(`/n/${cap}.png`);
    expect(fetched).not.toContain(`/n/${cap + 1}.png`);
  });

  test("an image that would pass the total byte cap is removed (and not remembered as failed for the record's own image jobs)", async () => {
    // Uncompressed PNGs of about 120 KB each; the total cap fits the first two only.
    const big = await solid(200, 200, '#123456').png({ compressionLevel: 0 }).toBuffer();
    const other = await solid(200, 200, '#654321').png({ compressionLevel: 0 }).toBuffer();
    const third = await solid(200, 200, '#abcdef').png({ compressionLevel: 0 }).toBuffer();
    site.route('/t/1.png', { headers: { 'content-type': 'image/png' }, body: big });
    site.route('/t/2.png', { headers: { 'content-type': 'image/png' }, body: other });
    site.route('/t/3.png', { headers: { 'content-type': 'image/png' }, body: third });
    const total = PAGE_IMAGE_LIMITS.maxTotalBytes;
    PAGE_IMAGE_LIMITS.maxTotalBytes = big.length + other.length + 1024;
    try {
      const r = await run(article(['/t/1.png', '/t/2.png', '/t/3.png']));
      expect(r.images).toEqual({ found: 3, hosted: 2 });
      expect(imgTags(await stored(r.htmlUrl!)).map((t) => t.alt)).toEqual(['img 0', 'img 1']);
    } finally {
      PAGE_IMAGE_LIMITS.maxTotalBytes = total;
    }
    // The record's image job (its own cap) still hosts it: the refusal above was not remembered.
    const own = await runImageJob({ url: site.url('/t/3.png') }, { fetch, blobs: new FsBlobStore(config.dataDir, () => 'http://assets.test'), config });
    expect(own.reason).toBeUndefined();
    expect(own.image?.medium?.url).toMatch(/^http:\/\/assets\.test\/assets\//);
  });

  test("a content image whose source the record's image job hosted is found by one HEAD: its medium, not rendered or stored again", async () => {
    const wide = await solid(1000, 500, '#3a5a7a').jpeg().toBuffer();
    site.route('/shared/og.jpg', { headers: { 'content-type': 'image/jpeg' }, body: wide });
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const card = await runImageJob({ url: site.url('/shared/og.jpg') }, { fetch, blobs, config });
    expect(card.image?.medium).toMatchObject({ width: 640, height: 320 });
    const puts = jest.spyOn(FsBlobStore.prototype, 'put');
    try {
      const r = await run(article(['/shared/og.jpg']));
      expect(r.images).toEqual({ found: 1, hosted: 1 });
      const [tag] = imgTags(await stored(r.htmlUrl!));
      expect(tag.src).toBe(card.image?.medium?.url);
      expect([tag.width, tag.height]).toEqual(['640', '320']);
      expect(puts.mock.calls.map(([k]) => k).filter((k) => k.endsWith('.webp'))).toEqual([]);
    } finally {
      puts.mockRestore();
    }
  });

  test("the deadline decides the images' cut-off: reserveMs before it (else defaultMs after the start)", () => {
    expect(pageImagesUntil({ deadline: 1_000_000, started: 900_000 })).toBe(1_000_000 - PAGE_IMAGE_LIMITS.reserveMs);
    expect(pageImagesUntil({ deadline: undefined, started: 900_000 })).toBe(900_000 + PAGE_IMAGE_LIMITS.defaultMs);
  });

  test('the deadline: an image still loading at the cut-off is removed, stopped by our side, and the versions are stored', async () => {
    let hung: http.ServerResponse | undefined;
    let closed: Promise<void> | undefined;
    site.route('/slow.png', (_req, res) => {
      hung = res;
      closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    });
    // The cut-off (reserveMs before the deadline) comes 1.5 s after the start. No elapsed time is
    // asserted: the stalled response never ends, so only the cut-off can have stopped it.
    const r = await run(article(['/n/14.png', '/slow.png']), Date.now() + PAGE_IMAGE_LIMITS.reserveMs + 1500);
    // If it was requested at all, the stalled response was still unanswered when the result came,
    // and our side then closed its connection.
    if (hung) {
      expect(hung.writableEnded).toBe(false);
      await closed;
    }
    // The slow image is removed; every image kept is hosted (the other one, when it was hosted in time).
    expect(r.images?.found).toBe(2);
    const tags = imgTags(await stored(r.htmlUrl!));
    expect(tags.map((t) => t.alt)).toEqual(r.images?.hosted === 1 ? ['img 0'] : []);
    for (const t of tags) expect(t.src).toMatch(HOSTED('http://assets.test'));
    hung?.destroy();
  });

  test('the result comes once the content is read; the versions, built after it (deferred), wait for every image however late, and are stored once', async () => {
    // /late.png answers only once released.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const late = await solid(80, 60, '#405060').png().toBuffer();
    site.route('/late.png', async (_req, res) => {
      await gate;
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(late);
    });
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const puts = jest.spyOn(blobs, 'put');
    const deferred: (() => Promise<void>)[] = [];
    const r = await runPageContentJob(
      { url: site.url('/w.html'), bytesBase64: Buffer.from(article(['/n/15.png', '/late.png'])).toString('base64'), deadline: Date.now() + 20_000 },
      { fetch, blobs, config, defer: (w) => void deferred.push(w) },
    );
    // The result names the versions and their reading time; nothing is built yet.
    expect(r.htmlUrl).toMatch(/^http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/page\.html$/);
    expect(r.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
    expect(r.images).toBeUndefined();
    // After the result: the job's memo (its result for the next preview), and the build.
    expect(deferred).toHaveLength(2);
    expect(puts).not.toHaveBeenCalled();
    await deferred[0]();
    expect(puts.mock.calls.map(([k]) => k)).toEqual([expect.stringMatching(/^jobs\/page-content\/[0-9a-f]{64}\.json$/)]);
    // The build waits for the late image: nothing of the versions is stored until it is released.
    const building = deferred[1]();
    const versionPuts = () => puts.mock.calls.map(([k]) => k).filter((k) => /\/page\.(html|md|txt)$/.test(k));
    await new Promise((resolve) => setImmediate(resolve));
    expect(versionPuts()).toEqual([]);
    release();
    await building;
    expect(imgTags(await stored(r.htmlUrl!)).map((t) => t.alt)).toEqual(['img 0', 'img 1']);
    expect(await stored(r.markdownUrl!)).toContain('img 1');
    expect((await blobs.head(r.htmlUrl!.replace('http://assets.test/', '')))?.metadata).toEqual({ images: '2/2' });
    // Each version put once, page.html last.
    expect(versionPuts().map((k) => k.split('/').pop())).toEqual(['page.md', 'page.txt', 'page.html']);
  });

  test('a build that fails stores stand-ins: an empty document for each version not stored, not kept by caches', async () => {
    const store = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    // The first put of a version fails (a full disk, a throttled bucket).
    let failed = false;
    const blobs: typeof store = Object.assign(Object.create(store), {
      put: (k: string, b: Buffer | string, o: PutOptions) => {
        if (!failed && /\/page\.md$/.test(k)) {
          failed = true;
          return Promise.reject(new Error('SlowDown'));
        }
        return store.put(k, b, o);
      },
    });
    const r = await runPageContentJob(
      { url: site.url('/f.html'), bytesBase64: Buffer.from(article(['/n/13.png'])).toString('base64'), deadline: Date.now() + 20_000 },
      { fetch, blobs, config },
    );
    expect(failed).toBe(true);
    expect(r.htmlUrl).toBeDefined();
    expect(r.images).toBeUndefined(); // not built
    // What could be made: page.txt was stored beside the page.md that failed, and stays; the others are stand-ins.
    for (const [u, body] of [
      [r.htmlUrl!, /^<!doctype html>[\s\S]*<body>\s*<\/body>[\s\S]*<\/html>\n$/],
      [r.markdownUrl!, /^$/],
    ] as const) {
      const key = u.replace('http://assets.test/', '');
      expect(await stored(u)).toMatch(body);
      expect(await store.meta(key)).toMatchObject({ cacheControl: 'no-cache', metadata: { versions: 'stand-in' } });
    }
    expect(await stored(r.rawTextUrl!)).toMatch(/^Many images\n/);
    expect((await store.meta(r.rawTextUrl!.replace('http://assets.test/', ''))).cacheControl).toBe('public, max-age=31536000, immutable');
  });

  test('a job aborted while its images load hosts nothing more: its versions are stand-ins', async () => {
    const controller = new AbortController();
    let requested!: () => void;
    const asked = new Promise<void>((resolve) => {
      requested = resolve;
    });
    site.route('/slow2.png', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write('x');
      requested();
      setTimeout(() => res.destroy(), 3000);
    });
    void asked.then(() => controller.abort());
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const r = await runPageContentJob(
      { url: site.url('/b.html'), bytesBase64: Buffer.from(article(['/slow2.png'])).toString('base64'), deadline: Date.now() + 20_000 },
      { fetch, blobs, config, signal: controller.signal },
    );
    expect((await blobs.meta(r.htmlUrl!.replace('http://assets.test/', ''))).metadata).toEqual({ versions: 'stand-in' });
    expect(await stored(r.htmlUrl!)).not.toContain('<img');
  });
});

describe('page.html in a browser', () => {
  withBrowser('served by the local server (with its CSP), every <img> loads, from the hosted origin', async () => {
    const site = await startFixtureServer();
    // The SSRF guard as deployed, with loopback opened for the fixture: private networks and
    // link-local stay closed (private.test resolves to 10.0.0.5 here).
    const resolver = async (host: string) => {
      if (host === 'private.test') return [{ address: '10.0.0.5', family: 4 as const }];
      throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    // The gallery's nine images all count (the cap has its own test).
    const cap = PAGE_IMAGE_LIMITS.maxImages;
    PAGE_IMAGE_LIMITS.maxImages = 12;
    const server = await startTestServer(
      { allowPrivateNetworks: false, allowLoopback: true, maxImageBytes: MAX_IMAGE_BYTES, jobWaitMs: 15_000, publicUrl: '' },
      resolver,
    );
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: browserExecutable(loadConfig(process.env)),
      headless: true,
      chromiumSandbox: false,
      args: [...launchArgs(), '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
    });
    try {
      await serveGallery(site, site.origin, ['http://private.test/secret.png', 'http://169.254.169.254/latest/meta-data/x.png']);
      const res = await fetch(`${server.url}/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ link: site.url('/2024/gallery/story.html') }),
      });
      expect(res.status).toBe(200);
      const record = (await res.json()) as { page?: { htmlUrl?: string } };
      const htmlUrl = record.page?.htmlUrl;
      expect(htmlUrl).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/page\\.html$`));
      const served = await fetch(htmlUrl!);
      expect(served.headers.get('content-security-policy')).toMatch(/img-src 'self'/);

      const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('requestfailed', (q) => problems.push(`failed: ${q.url()}`));
      page.on('response', (q) => {
        if (q.status() >= 400) problems.push(`${q.status()}: ${q.url()}`);
      });
      await page.goto(htmlUrl!, { waitUntil: 'load' });
      type Img = { alt: string; src: string; currentSrc: string; complete: boolean; naturalWidth: number };
      const imgs = await page.evaluate(() => {
        const doc = (globalThis as unknown as { document: { images: ArrayLike<Img> } }).document;
        return Array.from(doc.images).map((i) => ({ alt: i.alt, src: i.currentSrc || i.src, complete: i.complete, naturalWidth: i.naturalWidth }));
      });
      expect(imgs.map((i) => i.alt)).toEqual(GOOD_ALTS);
      for (const i of imgs) {
        expect(i).toMatchObject({ complete: true, naturalWidth: expect.any(Number) });
        expect({ alt: i.alt, broken: i.naturalWidth === 0 }).toEqual({ alt: i.alt, broken: false });
        expect(i.src.startsWith(`${server.url}/assets/`)).toBe(true);
      }
      expect(problems).toEqual([]);
      const shot = await page.screenshot({ fullPage: true });
      const stats = await sharp(shot).stats();
      expect(Math.max(...stats.channels.slice(0, 3).map((c) => c.stdev))).toBeGreaterThan(10); // the coloured images are there
    } finally {
      PAGE_IMAGE_LIMITS.maxImages = cap;
      await browser.close();
      await server.close();
      server.cleanup();
      await site.close();
    }
  });
});
