/**
 * The record waits for the card, never for the page's content (lib/page/describe-page.ts,
 * LINKPREVIEW_CONTENT_WAIT_MS 0, the default): on the local server through its real handler, with
 * the page-content job held by the test (its read comes late), a record comes back as soon as its
 * card is ready. It names
 * the versions' addresses (fixed by the page's digest) without the reading time; each address
 * answers 200 with the whole version once the read is let go and the versions are built; the
 * next preview of the same bytes has the reading time from the job's own memo, and runs no job.
 * A page with no description of its own waits for the read (its excerpt is the description). A
 * page whose content has nothing to read, named before the read, gets stand-ins at its
 * addresses: 200, never a 404, and the next preview names none.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { JobKind } from '../../lib/jobs/kinds';
import { renditionKey } from '../../lib/media/image-sizes';
import { versionDigest } from '../../lib/page/page-versions';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { assetUrls, get, preview, until } from '../helpers/page-versions';
import { startTestServer } from '../helpers/service';
import { paragraphs } from './fixtures';

jest.setTimeout(60_000);

const prose = paragraphs(400, 8)
  .map((p) => `<p>${p}</p>`)
  .join('');
const head = (description: string, image = '/card.png') =>
  `<title>A river, in pictures</title>${description}<meta property="og:image" content="${image}"><link rel="icon" href="/icon.png">`;

let site: FixtureServer;
/** The no-description page's own card image (no other page's job has stored it). */
let card2: Buffer;
let server: Awaited<ReturnType<typeof startTestServer>>;
/** The page-content jobs asked for, and the gate that holds them (their read comes late). */
let reads = 0;
let release: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();
const hold = () => {
  gate = new Promise<void>((resolve) => {
    release = resolve;
  });
};

beforeAll(async () => {
  const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#2a6f97' } })
    .png()
    .toBuffer();
  const icon = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#97512a' } })
    .png()
    .toBuffer();
  card2 = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#6f972a' } })
    .png()
    .toBuffer();
  site = await startFixtureServer({
    '/card2.png': { headers: { 'content-type': 'image/png' }, body: card2 },
    '/card.png': { headers: { 'content-type': 'image/png' }, body: png },
    '/icon.png': { headers: { 'content-type': 'image/png' }, body: icon },
    '/article': { body: html(head('<meta name="description" content="Rivers">'), `<article><h1>A river</h1>${prose}</article>`, 'en') },
    '/no-description': { body: html(head('', '/card2.png'), `<article><h1>A river</h1>${prose}</article>`, 'en') },
    '/shell': { body: '<html><head><meta name="description" content="An app"></head><body><script>render()</script></body></html>' },
  });
  server = await startTestServer({ jobWaitMs: 20_000, contentWaitMs: 0 });
  // The server's runner, counting the jobs it runs and holding each page-content job until the test lets it go.
  const jobs = server.deps.jobs;
  const run = jobs.run.bind(jobs);
  jest.spyOn(jobs, 'run').mockImplementation(async (list, options) => {
    for (const j of list) runs.push(j.kind);
    if (list.some((j) => j.kind === 'page-content')) {
      reads++;
      await gate;
    }
    return run(list, options);
  });
});
afterAll(async () => {
  release();
  jest.restoreAllMocks();
  await server.close();
  server.cleanup();
  await site.close();
});
afterEach(() => release());

/** The job kinds the server ran. */
const runs: JobKind[] = [];
const jobsRun = () => runs;

const contentMemo = (htmlUrl: string) => `jobs/page-content/${versionDigest(htmlUrl.slice(`${server.url}/`.length))}.json`;

test('the record comes back with the card while the read is held: the addresses named, no reading time; each answers 200 with the whole version once built; the next preview has the reading time and runs no job', async () => {
  hold();
  const readsBefore = reads;
  const record = await preview(server, site.url('/article'));
  // The read was asked for and is still held: the record did not wait for it.
  expect(reads).toBe(readsBefore + 1);
  expect(record.description).toBe('Rivers');
  expect(record.image?.original?.url).toBeDefined();
  expect(record.icon?.url).toBeDefined();
  const { htmlUrl, markdownUrl, rawTextUrl, estimatedReadingTimeInMinutes } = record.page ?? {};
  expect(htmlUrl).toMatch(new RegExp(`^${server.url}/assets/[0-9a-f]{64}/page\\.html$`));
  expect(markdownUrl).toBe(htmlUrl.replace(/page\.html$/, 'page.md'));
  expect(rawTextUrl).toBe(htmlUrl.replace(/page\.html$/, 'page.txt'));
  expect(estimatedReadingTimeInMinutes).toBeUndefined();

  // Every address at once, before the content is even read: held, then the whole object.
  const urls = assetUrls(record, server);
  const answers = urls.map((u) => get(u));
  const blobs = server.deps.blobs;
  expect(await blobs.has(htmlUrl.slice(`${server.url}/`.length))).toBe(false);
  release();
  for (const [i, a] of (await Promise.all(answers)).entries()) expect({ url: urls[i], status: a.status }).toEqual({ url: urls[i], status: 200 });
  const page = (await get(htmlUrl)).body.toString('utf8');
  expect(page).toContain('A river');
  expect(page).not.toMatch(/<img /); // the article has no content image
  expect((await get(markdownUrl)).body.toString('utf8')).toContain('A river');
  expect((await get(rawTextUrl)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

  // The job remembered its result (after the record went out): the next preview has the reading time, and runs no job.
  await until(() => blobs.has(contentMemo(htmlUrl)));
  const before = jobsRun().length;
  const again = await preview(server, site.url('/article'));
  expect(jobsRun().slice(before)).toEqual([]);
  expect(again.page).toEqual({ ...record.page, estimatedReadingTimeInMinutes: expect.any(Number) });
  expect(again.page.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
  expect(again.image).toEqual(record.image);
});

test('a page with no description of its own waits for the read: its excerpt is the description, with the reading time', async () => {
  hold();
  const readsBefore = reads;
  let settled = false;
  const pending = preview(server, site.url('/no-description')).finally(() => {
    settled = true;
  });
  // Let the read go only once the card's image is stored (its `original`, with the manifest, is put
  // last): a record that did not wait for the read would come back without it.
  await until(() => reads > readsBefore);
  const original = renditionKey(createHash('sha256').update(card2).digest('hex'), 'original');
  await until(() => server.deps.blobs.has(original));
  expect(settled).toBe(false);
  release();
  const record = await pending;
  expect(record.description).toMatch(/\w{3,}/);
  expect(record.description).not.toBe('Rivers');
  expect(record.page?.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
  expect(record.page?.htmlUrl).toBeDefined();
});

test('a page with nothing to read, named before the read: its addresses answer stand-ins (200, never a 404); the next preview names none', async () => {
  hold();
  const record = await preview(server, site.url('/shell'));
  const { htmlUrl, markdownUrl, rawTextUrl } = record.page ?? {};
  expect(htmlUrl).toBeDefined();
  const answers = [htmlUrl, markdownUrl, rawTextUrl].map((u: string) => get(u));
  release();
  for (const a of await Promise.all(answers)) {
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-cache');
  }
  await until(() => server.deps.blobs.has(contentMemo(htmlUrl)));
  const again = await preview(server, site.url('/shell'));
  expect(again.page?.htmlUrl).toBeUndefined();
});
