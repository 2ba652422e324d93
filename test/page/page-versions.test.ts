/**
 * The URL rule of a record (lib/page/page-versions.ts), on the local server through its real
 * handler: every address a record names answers 200 with the whole object whenever it is asked,
 * from the moment the record came back. The page versions' addresses are fixed by the page's
 * digest, so the record names them before they are built and never waits for them; an address
 * asked for before its version is stored is held until it is. A version that cannot be built is
 * a stand-in at its address, never a 404; a page without text, or a record whose page memo could
 * not be written, names none.
 */

import sharp from 'sharp';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { readMemo } from '../../lib/jobs/memo';
import { pageMemoKey, rememberPage, versionsNamed } from '../../lib/page/page-memo';
import { awaitVersion, pageVersionKeys, VERSION_GRACE_MS, versionDigest } from '../../lib/page/page-versions';
import type { PutOptions } from '../../lib/ports';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { assetUrls, get, preview, rememberNamedVersions, until } from '../helpers/page-versions';
import { startTestServer, testConfig } from '../helpers/service';
import { paragraphs } from './fixtures';

jest.setTimeout(60_000);

const article = (body: string) =>
  html(
    '<title>A river, in pictures</title><meta name="description" content="Rivers"><meta property="og:image" content="/card.png"><link rel="icon" href="/icon.png">',
    `<article><h1>A river, in pictures</h1>${paragraphs(400, 8)
      .map((p) => `<p>${p}</p>`)
      .join('')}${body}</article>`,
    'en',
  );

let site: FixtureServer;
let png: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#2a6f97' } })
    .png()
    .toBuffer();
  const other = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#97512a' } })
    .png()
    .toBuffer();
  site = await startFixtureServer({
    '/card.png': { headers: { 'content-type': 'image/png' }, body: png },
    '/icon.png': { headers: { 'content-type': 'image/png' }, body: other },
    '/empty': { body: '<html><body><script>render()</script></body></html>' },
  });
});
afterAll(() => site.close());

describe('every address of a record answers 200 with the whole object, at once and later', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    // The record waits for the content's read (its reading time): these tests are about the versions' addresses.
    // The versions are built right after the read (as on AWS), not when the server is idle: a request
    // held for them reads the page memo (test/page/versions-when-idle.test.ts has the other way).
    server = await startTestServer({ jobWaitMs: 20_000, contentWaitMs: 20_000, contentIdleMs: 0 });
  });
  afterAll(async () => {
    await server.close();
    server.cleanup();
  });

  test('the record comes back while its content image is still held; its versions are held until built, with the image hosted by linklens; the same bytes again later', async () => {
    // The content image answers only once the test releases it.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = 0;
    site.route('/held.png', async (_req, res) => {
      asked++;
      await gate;
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(png);
    });
    site.route('/held', { body: article('<figure><img src="/held.png" alt="The held image"></figure>') });
    const blobs = server.deps.blobs as FsBlobStore;
    const reads = jest.spyOn(FsBlobStore.prototype, 'get');
    try {
      const record = await preview(server, site.url('/held'));
      // Back with the versions' addresses and the reading time, the content image still held.
      const { htmlUrl, markdownUrl, rawTextUrl } = record.page ?? {};
      expect(htmlUrl).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/page\\.html$`));
      expect(markdownUrl).toBe(htmlUrl.replace(/page\.html$/, 'page.md'));
      expect(rawTextUrl).toBe(htmlUrl.replace(/page\.html$/, 'page.txt'));
      expect(record.page.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
      const key = (u: string) => u.slice(`${server.url}/`.length);
      expect(await blobs.has(key(htmlUrl))).toBe(false);
      const urls = assetUrls(record, server);
      expect(urls).toEqual(expect.arrayContaining([htmlUrl, markdownUrl, rawTextUrl, record.image.original.url, record.icon.url]));

      // Every address at once: the versions' requests are held by the server (each reads the page memo) ...
      const memoKey = `jobs/page/${versionDigest(key(htmlUrl))}.json`;
      const memoReads = () => reads.mock.calls.filter(([k]) => k === memoKey).length;
      const before = memoReads();
      const first = urls.map((u) => get(u));
      const heads = [htmlUrl, markdownUrl, rawTextUrl].map((u: string) => get(u, 'HEAD'));
      await until(() => memoReads() >= before + 6);
      expect(await blobs.has(key(htmlUrl))).toBe(false);
      // ... until the image is in and the versions are stored.
      await until(() => asked > 0);
      release();
      const answers = await Promise.all(first);
      for (const [i, a] of answers.entries()) expect({ url: urls[i], status: a.status }).toEqual({ url: urls[i], status: 200 });
      for (const h of await Promise.all(heads)) {
        expect(h.status).toBe(200);
        expect(h.body.length).toBe(0);
      }
      const page = answers[urls.indexOf(htmlUrl)];
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Complete: the content image, hosted by linklens, on the same origin as the page.
      const imgs = [...page.body.toString('utf8').matchAll(/<img\b[^>]*\bsrc="([^"]+)"[^>]*>/g)].map((m) => m[1]);
      expect(imgs).toHaveLength(1);
      expect(imgs[0]).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/medium\\.webp$`));
      expect((await get(imgs[0])).status).toBe(200);
      expect(answers[urls.indexOf(markdownUrl)].body.toString('utf8')).toContain(`](${imgs[0]}`);

      // Later: the same bytes for every address.
      const later = await Promise.all(urls.map((u) => get(u)));
      for (const [i, a] of later.entries()) {
        expect(a.status).toBe(200);
        expect(a.body.equals(answers[i].body)).toBe(true);
      }
      // The next preview of the same bytes: the same record parts, from the memo; no request of the image again.
      const asks = asked;
      const again = await preview(server, site.url('/held'));
      expect(again.page).toEqual(record.page);
      expect(asked).toBe(asks);
    } finally {
      release();
      reads.mockRestore();
    }
  });

  test('a version that cannot be built answers its stand-in, never a 404; the next preview of the same bytes builds it over the stand-in', async () => {
    site.route('/fails', { body: article('<figure><img src="/card.png" alt="The card again"></figure>') });
    // The first put of a page.md fails (a full disk): the build stores stand-ins instead.
    const original = FsBlobStore.prototype.put;
    let failures = 0;
    const puts = jest.spyOn(FsBlobStore.prototype, 'put').mockImplementation(function (
      this: FsBlobStore,
      key: string,
      body: Buffer | string,
      options: PutOptions,
    ) {
      if (failures === 0 && key.endsWith('/page.md')) {
        failures++;
        return Promise.reject(new Error('ENOSPC'));
      }
      return original.call(this, key, body, options);
    });
    const blobs = server.deps.blobs as FsBlobStore;
    try {
      const record = await preview(server, site.url('/fails'));
      const versions = [record.page.htmlUrl, record.page.markdownUrl, record.page.rawTextUrl] as string[];
      const first = await Promise.all(versions.map((u) => get(u)));
      expect(failures).toBe(1);
      for (const a of first) expect(a.status).toBe(200);
      // What could be made: page.txt was stored; page.md and page.html are stand-ins, not kept by caches.
      expect(first.map((a) => a.headers.get('cache-control'))).toEqual(['no-cache', 'no-cache', 'public, max-age=31536000, immutable']);
      expect(first[0].body.toString('utf8')).toMatch(/^<!doctype html>/);
      expect(first[0].body.toString('utf8')).not.toContain('A river');
      expect(first[1].body.length).toBe(0);
      expect(first[2].body.toString('utf8')).toContain('A river, in pictures');
      // Asked again later: the same stand-ins (nothing rebuilds them but a preview).
      const later = await Promise.all(versions.map((u) => get(u)));
      for (const [i, a] of later.entries()) expect(a.body.equals(first[i].body)).toBe(true);

      // The memo forgot them: the next preview of the same bytes runs the job, which builds them over the stand-ins.
      const again = await preview(server, site.url('/fails'));
      expect(again.page.htmlUrl).toBe(record.page.htmlUrl);
      const htmlKey = versions[0].slice(`${server.url}/`.length);
      await until(async () => (await blobs.head(htmlKey))?.metadata.versions !== 'stand-in');
      const built = await get(versions[0]);
      expect(built.status).toBe(200);
      expect(built.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(built.body.toString('utf8')).toMatch(new RegExp(`<img [^>]*src="${server.url}/assets/[0-9a-f]{64}/medium\\.webp"`));
    } finally {
      puts.mockRestore();
    }
  });

  test('a page without text: the record names no versions', async () => {
    const record = await preview(server, site.url('/empty'));
    expect(record.ok).toBe(true);
    expect(record.page?.htmlUrl).toBeUndefined();
    expect(record.page?.markdownUrl).toBeUndefined();
    expect(record.page?.rawTextUrl).toBeUndefined();
  });

  test('an address no record named is a 404 at once; an image that was never stored too', async () => {
    const digest = 'a'.repeat(64);
    for (const name of ['page.html', 'page.md', 'page.txt', 'medium.webp']) expect((await get(`${server.url}/assets/${digest}/${name}`)).status).toBe(404);
  });
});

describe('awaitVersion: what serves an address the record named', () => {
  test('the versions of a job past its deadline (and the grace) were never built: their stand-ins are stored, and the memo forgets them', async () => {
    const config = testConfig();
    try {
      const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
      // A job whose deadline has passed by more than the grace (a local server restarted under it, say).
      const { keys, memoKey, digest } = await rememberNamedVersions(blobs, 'lost', Date.now() - VERSION_GRACE_MS - 1);
      expect(await awaitVersion(blobs, keys.markdown)).toBe('stored');
      for (const key of Object.values(keys)) expect((await blobs.meta(key)).metadata).toEqual({ versions: 'stand-in' });
      expect(await versionsNamed(blobs, digest)).toBeUndefined();
      expect(((await readMemo(blobs, memoKey)) as { versionsUntil?: number }).versionsUntil).toBeUndefined();
      // Stored now (the stand-in): at once, without the memo.
      expect(await awaitVersion(blobs, keys.html)).toBe('stored');
      // Not a version's key, or a version no memo names: unknown (404).
      expect(await awaitVersion(blobs, 'assets/abc/page.html')).toBe('unknown');
      expect(await awaitVersion(blobs, `assets/${'b'.repeat(64)}/page.html`)).toBe('unknown');
      expect(await awaitVersion(blobs, `assets/${'b'.repeat(64)}/medium.webp`)).toBe('unknown');
    } finally {
      config.cleanup();
    }
  });

  test("capped by its caller (the origin function's own time): the stand-in at the cap", async () => {
    const config = testConfig();
    try {
      const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
      const page = { url: 'https://example.com/slow', contentType: 'text/html', bytes: Buffer.from('<p>slow</p>') };
      const keys = pageVersionKeys(page);
      await rememberPage(blobs, pageMemoKey(page), { versionsUntil: Date.now() + 600_000 });
      expect(await awaitVersion(blobs, keys.html, { capMs: 0 })).toBe('stored');
      expect((await blobs.meta(keys.html)).metadata).toEqual({ versions: 'stand-in' });
    } finally {
      config.cleanup();
    }
  });
});
