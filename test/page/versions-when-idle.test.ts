/**
 * The local server makes a page's content when it is idle, or at once when one of its versions'
 * addresses is asked for (LINKPREVIEW_CONTENT_IDLE_MS, lib/jobs/idle-work.ts), on the real server
 * and handler: the whole page-content job when the record goes without it (the page has a
 * description, LINKPREVIEW_CONTENT_WAIT_MS 0), else the versions' build with images. The record
 * names the addresses and comes back without any content image having been asked for; an address
 * asked for is held while the content is made, and answers 200 with the whole version, its image
 * hosted by linklens; an idle server makes what was parked by itself; a stopping server makes what
 * is still parked before it ends.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { get, preview, until } from '../helpers/page-versions';
import { startTestServer } from '../helpers/service';
import { paragraphs } from './fixtures';

jest.setTimeout(60_000);

const article = (name: string) =>
  html(
    `<title>${name}</title><meta name="description" content="Rivers"><meta property="og:image" content="/card.png"><link rel="icon" href="/icon.png">`,
    `<article><h1>${name}</h1>${paragraphs(400, 8)
      .map((p) => `<p>${p}</p>`)
      .join('')}<figure><img src="/content-${name}.png" alt="${name}"></figure></article>`,
    'en',
  );

let site: FixtureServer;
/** How often each content image was asked for. */
const asked = new Map<string, number>();
beforeAll(async () => {
  const png = (background: string) =>
    sharp({ create: { width: 300, height: 200, channels: 3, background } })
      .png()
      .toBuffer();
  const [card, icon, content] = await Promise.all([png('#2a6f97'), png('#97512a'), png('#2a9751')]);
  site = await startFixtureServer({
    '/card.png': { headers: { 'content-type': 'image/png' }, body: card },
    '/icon.png': { headers: { 'content-type': 'image/png' }, body: icon },
  });
  for (const name of ['asked', 'idle', 'stopping', 'unread']) {
    site.route(`/${name}`, { body: article(name) });
    site.route(`/content-${name}.png`, (_req, res) => {
      asked.set(name, (asked.get(name) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(content);
    });
  }
});
afterAll(() => site.close());

const hostedImages = (page: string) => [...page.matchAll(/<img\b[^>]*\bsrc="([^"]+)"[^>]*>/g)].map((m) => m[1]);

test('parked while the server is never idle: the record names the versions, and an address asked for starts their build and answers the whole version', async () => {
  // Never idle within the test: only the request for an address builds the versions.
  const server = await startTestServer({ jobWaitMs: 20_000, contentWaitMs: 20_000, contentIdleMs: 60_000 });
  try {
    const record = await preview(server, site.url('/asked'));
    const { htmlUrl, markdownUrl } = record.page ?? {};
    expect(htmlUrl).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/page\\.html$`));
    expect(record.page.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
    // The content's read came in time, and its images were not asked for: the build is parked.
    expect(asked.get('asked') ?? 0).toBe(0);
    const store = server.deps.blobs as FsBlobStore;
    expect(await store.has(htmlUrl.slice(server.url.length + 1))).toBe(false);

    const [page, markdown] = await Promise.all([get(htmlUrl), get(markdownUrl)]);
    expect([page.status, markdown.status]).toEqual([200, 200]);
    expect(asked.get('asked')).toBe(1);
    const imgs = hostedImages(page.body.toString('utf8'));
    expect(imgs).toHaveLength(1);
    expect(imgs[0]).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/medium\\.webp$`));
    expect((await get(imgs[0])).status).toBe(200);
    expect(markdown.body.toString('utf8')).toContain(`](${imgs[0]}`);
    // Later: the same bytes, and no second build.
    expect((await get(htmlUrl)).body.equals(page.body)).toBe(true);
    expect(asked.get('asked')).toBe(1);
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('an idle server builds what was parked by itself; a stopping one builds what is still parked before it ends', async () => {
  const idleServer = await startTestServer({ jobWaitMs: 20_000, contentWaitMs: 20_000, contentIdleMs: 20 });
  try {
    const record = await preview(idleServer, site.url('/idle'));
    const key = (record.page.htmlUrl as string).slice(idleServer.url.length + 1);
    const store = idleServer.deps.blobs as FsBlobStore;
    await until(() => store.has(key));
    expect(asked.get('idle')).toBe(1);
    expect(hostedImages((await store.get(key))?.toString('utf8') ?? '')).toHaveLength(1);
  } finally {
    await idleServer.close();
    idleServer.cleanup();
  }

  const stopping = await startTestServer({ jobWaitMs: 20_000, contentWaitMs: 20_000, contentIdleMs: 60_000 });
  try {
    const record = await preview(stopping, site.url('/stopping'));
    const key = (record.page.htmlUrl as string).slice(stopping.url.length + 1);
    expect(asked.get('stopping') ?? 0).toBe(0);
    const dataDir = (stopping.deps.blobs as FsBlobStore).root;
    await stopping.close();
    // Built, and written to the disk, before close() returned.
    expect(asked.get('stopping')).toBe(1);
    expect(existsSync(path.join(dataDir, key))).toBe(true);
  } finally {
    stopping.cleanup();
  }
});

test('the record goes without the content (it has a description, no wait for the reading time): nothing of it is made until a version is asked for; the next preview has the reading time', async () => {
  const server = await startTestServer({ jobWaitMs: 20_000, contentIdleMs: 60_000 });
  try {
    const record = await preview(server, site.url('/unread'));
    const { htmlUrl, markdownUrl, rawTextUrl } = record.page ?? {};
    expect(htmlUrl).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/page\\.html$`));
    expect(record.page.estimatedReadingTimeInMinutes).toBeUndefined();
    expect(record.description).toBe('Rivers');
    const store = server.deps.blobs as FsBlobStore;
    const digest = /assets\/([0-9a-f]{64})\//.exec(htmlUrl)?.[1];
    // Not read: the job's memo is not there, and the content's image was never asked for.
    expect(await store.has(`jobs/page-content/${digest}.json`)).toBe(false);
    expect(asked.get('unread') ?? 0).toBe(0);

    const [text, page] = await Promise.all([get(rawTextUrl), get(htmlUrl)]);
    expect([text.status, page.status]).toEqual([200, 200]);
    expect(text.body.toString('utf8')).toContain('unread');
    expect(asked.get('unread')).toBe(1);
    expect(hostedImages(page.body.toString('utf8'))).toHaveLength(1);
    expect((await get(markdownUrl)).status).toBe(200);

    const again = await preview(server, site.url('/unread'));
    expect(again.page).toEqual({ ...record.page, estimatedReadingTimeInMinutes: expect.any(Number) });
    expect(again.page.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
    expect(asked.get('unread')).toBe(1);
  } finally {
    await server.close();
    server.cleanup();
  }
});
