/**
 * The page memo (lib/page/page-memo.ts): what a preview of the exact page bytes got from its jobs
 * (the record's image and icon, complete versions) is remembered, so the next preview of the same
 * bytes takes it without any job; a page whose bytes changed runs them again, and versions that
 * came out incomplete (an image cut by the wait) are not remembered until the job completes them.
 * Jobs are counted with a recording JobRunner around the real one.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { buildLocalDeps } from '../../functions/wiring';
import { createApiHandler } from '../../lib/http/api-handler';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { JobKind } from '../../lib/jobs/kinds';
import { readMemo, writeMemo } from '../../lib/jobs/memo';
import { FAILED_PART_TTL_MS, fullVersionsKey, PAGE_MEMO_TTL_MS, pageMemoKey, recallPage, rememberPage, versionsMetadata } from '../../lib/page/page-memo';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../../lib/ports';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../helpers/service';
import { paragraphs } from './fixtures';

jest.setTimeout(30_000);

class CountingRunner implements JobRunner {
  readonly kinds: JobKind[] = [];
  constructor(private readonly inner: JobRunner) {}
  run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    for (const job of jobs) this.kinds.push(job.kind);
    return this.inner.run(jobs, options);
  }
}

let site: FixtureServer;
let release: () => void = () => undefined;
// The og:image keeps the record's own image off the content's images (the first <img> is its last resort).
const article = (extra = '') =>
  html(
    '<title>A remembered article</title><meta name="description" content="About rivers"><meta property="og:image" content="/inline.png"><link rel="icon" href="/icon.png">',
    `<article><h1>Rivers</h1>${paragraphs(400, 8)
      .map((p) => `<p>${p}</p>`)
      .join('')}${extra}</article>`,
    'en',
  );

beforeAll(async () => {
  const png = await sharp({ create: { width: 120, height: 80, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  site = await startFixtureServer({
    '/plain': { body: article() },
    '/with-image': { body: article('<p><img src="/inline.png" alt="inline"></p>') },
    '/inline.png': { headers: { 'content-type': 'image/png' }, body: png },
    '/icon.png': { headers: { 'content-type': 'image/png' }, body: png },
  });
  let version = 0;
  site.route('/changing', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(article(`<p>Version ${++version}</p>`));
  });
  site.route('/late.png', async (_req, res) => {
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(png);
  });
  site.route('/with-late-image', { body: article('<p><img src="/late.png" alt="late"></p>') });
  // The same content in other bytes each time (a comment the extraction drops).
  let nonce = 0;
  site.route('/late-nonce', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(article(`<p><img src="/late.png" alt="late"></p><!-- nonce ${++nonce} -->`));
  });
});
afterAll(() => site.close());

/** The memo objects in a local data dir. */
function memos(config: { dataDir: string }): string[] {
  const dir = path.join(config.dataDir, 'jobs', 'page');
  return existsSync(dir) ? readdirSync(dir).filter((f) => !f.endsWith('.meta.json')) : [];
}

function service(overrides: Parameters<typeof testConfig>[0] = {}) {
  const config = testConfig(overrides);
  const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
  const jobs = new CountingRunner(deps.jobs);
  const handler = createApiHandler({ ...deps, jobs });
  const preview = async (link: string) => {
    const out = (await handler(
      httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link }))),
      {},
    )) as HttpResponse;
    return JSON.parse(out.body);
  };
  const contentJobs = () => jobs.kinds.filter((k) => k === 'page-content').length;
  return { preview, contentJobs, jobs: () => [...jobs.kinds], blobs: deps.blobs, config, cleanup: () => config.cleanup() };
}

test('the same page bytes again: the same record, without any job', async () => {
  const s = service();
  try {
    const first = await s.preview(site.url('/plain'));
    expect(first.page?.markdownUrl).toMatch(/^http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/page\.md$/);
    expect(first.image?.original?.url).toBeDefined();
    expect(first.image).toMatchObject({ dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/), blurhash: expect.any(String) });
    expect(first.icon?.url).toBeDefined();
    const cold = s.jobs();
    expect(cold.filter((k) => k === 'image').length).toBeGreaterThanOrEqual(2);
    expect(s.contentJobs()).toBe(1);
    expect(memos(s.config)).toHaveLength(1);
    const second = await s.preview(site.url('/plain'));
    expect(s.jobs()).toEqual(cold);
    expect(second.page).toEqual(first.page);
    expect(second.image).toEqual(first.image);
    expect(second.icon).toEqual(first.icon);
    expect(second.description).toBe(first.description);
    // Nothing new: the memo is not written again.
    expect(memos(s.config)).toHaveLength(1);
    // A page with an image, all of it hosted: remembered too.
    const withImage = await s.preview(site.url('/with-image'));
    expect(s.contentJobs()).toBe(2);
    expect((await s.preview(site.url('/with-image'))).page).toEqual(withImage.page);
    expect(s.contentJobs()).toBe(2);
  } finally {
    s.cleanup();
  }
});

test('an image remembered before the placeholders is not used: its job runs again (a reuse, no content job), and the memo is written with them', async () => {
  const s = service();
  try {
    const first = await s.preview(site.url('/plain'));
    const [file] = memos(s.config);
    const key = `jobs/page/${file}`;
    const { dominantColor: _d, blurhash: _b, ...old } = first.image;
    const memo = (await readMemo(s.blobs, key)) as { image: unknown };
    await writeMemo(s.blobs, key, { ...memo, image: old });
    const before = s.jobs().length;
    const second = await s.preview(site.url('/plain'));
    expect(s.jobs().slice(before)).toEqual(['image']);
    expect(s.contentJobs()).toBe(1);
    expect(second.image).toEqual(first.image);
    expect(((await readMemo(s.blobs, key)) as { image: unknown }).image).toEqual(first.image);
  } finally {
    s.cleanup();
  }
});

test('a page whose bytes changed runs the job again', async () => {
  const s = service();
  try {
    const a = await s.preview(site.url('/changing'));
    const b = await s.preview(site.url('/changing'));
    expect(s.contentJobs()).toBe(2);
    expect(b.page.htmlUrl).not.toBe(a.page.htmlUrl);
  } finally {
    s.cleanup();
  }
});

test('versions that came out without an image (cut by the wait) are remembered as first ones with where the complete ones go; once the job stored those, the memo and any later job of the same content use them', async () => {
  const s = service({ pageImagesWaitMs: 200 });
  try {
    const link = site.url('/with-late-image');
    const first = await s.preview(link);
    expect(first.page?.htmlUrl).toMatch(/\/page\.html$/);
    expect(s.contentJobs()).toBe(1);
    const cold = s.jobs();
    const [memo] = memos(s.config);
    const key = `jobs/page/${memo}`;
    // Before the image is in: the card, and the first versions kept aside (not used: a preview now runs the job again).
    const card = await recallPage(s.blobs, key);
    expect(card).toMatchObject({ image: first.image, icon: first.icon, pending: { htmlUrl: first.page.htmlUrl } });
    expect(card?.content).toBeUndefined();
    expect(card?.pending?.fullKey).toMatch(/^assets\/[0-9a-f]{64}\/page\.full\.html$/);
    // Released, the job hosts the image in the background and stores the complete versions at fullKey.
    release();
    for (let i = 0; i < 200 && !(await recallPage(s.blobs, key))?.content; i++) await new Promise((r) => setTimeout(r, 25));
    const whole = (await recallPage(s.blobs, key))?.content;
    expect(whole).toMatchObject({ images: { found: 1, hosted: 1 }, complete: true });
    expect(whole?.htmlUrl).toBe(`http://assets.test/${card?.pending?.fullKey}`);
    expect(whole?.markdownUrl).not.toBe(first.page.markdownUrl);
    expect(whole?.rawTextUrl).toBe(first.page.rawTextUrl);
    const html = (await s.blobs.get(card!.pending!.fullKey!))!.toString('utf8');
    expect(html).toMatch(/<img [^>]*src="http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/medium\.webp"/);
    const second = await s.preview(link);
    expect(s.jobs()).toEqual(cold);
    expect(second.page.htmlUrl).toBe(whole?.htmlUrl);
    expect(second.image).toEqual(first.image);
  } finally {
    release();
    s.cleanup();
  }
});

test('the same content in other bytes (a nonce): its job finds the complete versions the first one stored, and they are its result at once', async () => {
  const s = service({ pageImagesWaitMs: 200 });
  try {
    const link = site.url('/late-nonce');
    const first = await s.preview(link);
    const [memo] = memos(s.config);
    const fullKey = (await recallPage(s.blobs, `jobs/page/${memo}`))?.pending?.fullKey;
    expect(fullKey).toBeDefined();
    release(); // the first job's late image: its complete versions are stored at fullKey
    for (let i = 0; i < 200 && !(await s.blobs.has(fullKey!)); i++) await new Promise((r) => setTimeout(r, 25));
    // Other bytes, the same content: the job runs; its own download of the image is held again, but it needs none.
    const second = await s.preview(link);
    expect(s.contentJobs()).toBe(2);
    expect(second.page.htmlUrl).toBe(`http://assets.test/${fullKey}`);
    expect(second.page.markdownUrl).not.toBe(first.page.markdownUrl);
    expect(second.page.rawTextUrl).toBe(first.page.rawTextUrl);
    // Its memo has them as complete: a third preview of those bytes runs no job.
    const memos2 = memos(s.config).map((m) => `jobs/page/${m}`);
    const recalled = await Promise.all(memos2.map((k) => recallPage(s.blobs, k)));
    expect(recalled.filter((r) => r?.content?.complete === true && r.content.htmlUrl === second.page.htmlUrl)).toHaveLength(2);
  } finally {
    release();
    s.cleanup();
  }
});

test('a player an oEmbed fetch gave for itself is remembered once, beside the other parts; a malformed one is not recalled', async () => {
  const s = service();
  try {
    const key = pageMemoKey({ url: 'https://example.com/talk', contentType: 'text/html', bytes: Buffer.from('<p>talk</p>') });
    const icon = { url: 'http://assets.test/assets/x/original.webp', width: 32, height: 32, backgroundColor: '#ffffff' };
    const player = { type: 'video' as const, url: 'https://player.vimeo.com/video/76979871', provider: 'Vimeo', aspectRatio: 16 / 9 };
    const t0 = Date.now();
    expect(await rememberPage(s.blobs, key, { icon, player }, { now: t0 })).toBe(true);
    const recalled = await recallPage(s.blobs, key, t0 + 1000);
    expect(recalled).toEqual({ icon, player });
    // The same player again is nothing new; it stays when another part is added.
    expect(await rememberPage(s.blobs, key, { player }, { recalled, now: t0 })).toBe(false);
    const memo = (await readMemo(s.blobs, key)) as Record<string, unknown>;
    await writeMemo(s.blobs, key, { ...memo, player: { url: 42, provider: 'Vimeo' } });
    expect((await recallPage(s.blobs, key, t0 + 1000))?.player).toBeUndefined();
  } finally {
    s.cleanup();
  }
});

test('a memo made through another public base, or older than its TTL, is not used; first versions are kept until their complete ones are stored, then those are written in once', async () => {
  const s = service();
  try {
    const key = pageMemoKey({ url: 'https://example.com/a', contentType: 'text/html', bytes: Buffer.from('<p>x</p>') });
    const icon = { url: 'http://assets.test/assets/x/original.webp', width: 32, height: 32, backgroundColor: '#ffffff' };
    const t0 = Date.now();
    expect(await rememberPage(s.blobs, key, { icon }, { now: t0 })).toBe(true);
    expect(await recallPage(s.blobs, key, t0 + 1000)).toEqual({ icon });
    // Nothing new: no write.
    expect(await rememberPage(s.blobs, key, { icon }, { recalled: { icon }, now: t0 })).toBe(false);
    // Incomplete versions that name no complete ones are never remembered.
    expect(await rememberPage(s.blobs, key, { content: { words: 1, cjkChars: 0, article: true, htmlUrl: 'x' } }, { recalled: { icon }, now: t0 })).toBe(false);
    expect(await recallPage(s.blobs, key, t0 + PAGE_MEMO_TTL_MS)).toBeUndefined();
    const other = buildLocalDeps({ config: s.config, log: silentLog, baseUrl: () => 'http://other.test' });
    expect(await recallPage(other.blobs, key, t0 + 1000)).toBeUndefined();

    // First versions, and where their complete ones will be.
    const fullKey = fullVersionsKey('assets/aa/page.html', ['https://example.com/i.png']);
    const firstOnes = {
      words: 1,
      cjkChars: 0,
      article: true,
      htmlUrl: 'http://assets.test/assets/aa/page.html',
      markdownUrl: 'http://assets.test/assets/bb/page.md',
      rawTextUrl: 'http://assets.test/assets/cc/page.txt',
      images: { found: 1, hosted: 0 },
      fullKey,
    };
    const key2 = pageMemoKey({ url: 'https://example.com/b', bytes: Buffer.from('<p>y</p>') });
    expect(await rememberPage(s.blobs, key2, { icon, content: firstOnes }, { now: t0 })).toBe(true);
    const before = await recallPage(s.blobs, key2, t0 + 1);
    expect(before).toEqual({ icon, pending: firstOnes });
    // The same first versions again: nothing new.
    expect(await rememberPage(s.blobs, key2, { icon, content: firstOnes }, { recalled: before, now: t0 + 2 })).toBe(false);
    // The job stores the complete versions at fullKey (page.full.html last, naming page.md and page.txt).
    await s.blobs.put('assets/dd/page.md', 'md', { contentType: 'text/markdown' });
    await s.blobs.put(fullKey, '<p>full</p>', {
      contentType: 'text/html',
      metadata: versionsMetadata({ markdown: 'assets/dd/page.md', text: 'assets/cc/page.txt' }, { found: 1, hosted: 1 }),
    });
    const { fullKey: _k, ...rest } = firstOnes;
    const complete = {
      ...rest,
      htmlUrl: `http://assets.test/${fullKey}`,
      markdownUrl: 'http://assets.test/assets/dd/page.md',
      images: { found: 1, hosted: 1 },
      complete: true,
    };
    const recalled = await recallPage(s.blobs, key2, t0 + 3);
    expect(recalled).toEqual({ icon, content: complete, unmerged: true });
    // The preview writes them into the memo (once): the next recall has them from one read.
    expect(await rememberPage(s.blobs, key2, {}, { recalled, now: t0 + 4 })).toBe(true);
    const heads = jest.spyOn(s.blobs, 'head');
    expect(await recallPage(s.blobs, key2, t0 + 5)).toEqual({ icon, content: complete });
    expect(heads).not.toHaveBeenCalled();
    heads.mockRestore();

    // A card part that failed for a lasting reason: remembered as failed for FAILED_PART_TTL_MS, its time kept by later writes.
    const key3 = pageMemoKey({ url: 'https://example.com/c', bytes: Buffer.from('<p>z</p>') });
    expect(await rememberPage(s.blobs, key3, { icon, failed: { image: true } }, { now: t0 })).toBe(true);
    const withFailure = await recallPage(s.blobs, key3, t0 + 1);
    expect(withFailure).toMatchObject({ icon, failed: { image: true } });
    expect(await rememberPage(s.blobs, key3, { failed: { image: true } }, { recalled: withFailure, now: t0 + 2 })).toBe(false);
    expect(await rememberPage(s.blobs, key3, { content: complete }, { recalled: withFailure, now: t0 + 60_000 })).toBe(true);
    expect((await recallPage(s.blobs, key3, t0 + FAILED_PART_TTL_MS - 1))?.failed).toEqual({ image: true });
    expect((await recallPage(s.blobs, key3, t0 + FAILED_PART_TTL_MS))?.failed).toBeUndefined();
  } finally {
    s.cleanup();
  }
});

test('the memo is keyed by the URL, the content type and the bytes', () => {
  const base = { url: 'https://example.com/a', contentType: 'text/html', bytes: Buffer.from('<p>x</p>') };
  const key = pageMemoKey(base);
  expect(key).toMatch(/^jobs\/page\/[0-9a-f]{64}\.json$/);
  expect(pageMemoKey({ ...base })).toBe(key);
  expect(pageMemoKey({ ...base, url: 'https://example.com/b' })).not.toBe(key);
  expect(pageMemoKey({ ...base, contentType: 'text/html; charset=iso-8859-1' })).not.toBe(key);
  expect(pageMemoKey({ ...base, bytes: Buffer.from('<p>y</p>') })).not.toBe(key);
  // Length-prefixed: moving a character between parts changes the key.
  expect(pageMemoKey({ url: 'ab', contentType: 'c', bytes: Buffer.from('d') })).not.toBe(pageMemoKey({ url: 'a', contentType: 'bc', bytes: Buffer.from('d') }));
});
