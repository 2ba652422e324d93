/**
 * The page memo (lib/page/page-memo.ts): what a preview of the exact page bytes got from its jobs
 * (the record's image and icon, the page-content result naming the versions) is remembered, so
 * the next preview of the same bytes takes it without any job; a page whose bytes changed runs
 * them again. The memo is written before the record goes out, with the deadline of the job that
 * builds the versions the record names: whoever serves their addresses reads it there.
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
import { FAILED_PART_TTL_MS, forgetVersions, PAGE_MEMO_TTL_MS, pageMemoKey, recallPage, rememberPage, versionsNamed } from '../../lib/page/page-memo';
import type { BlobStore, Job, JobOutcome, JobRunner, PutOptions, RunOptions } from '../../lib/ports';
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
});
afterAll(() => site.close());

/** The memo objects in a local data dir. */
function memos(config: { dataDir: string }): string[] {
  const dir = path.join(config.dataDir, 'jobs', 'page');
  return existsSync(dir) ? readdirSync(dir).filter((f) => !f.endsWith('.meta.json')) : [];
}

function service(overrides: Parameters<typeof testConfig>[0] = {}, blobs?: (store: BlobStore) => BlobStore) {
  const config = testConfig(overrides);
  const local = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
  const deps = blobs ? { ...local, blobs: blobs(local.blobs) } : local;
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
    // Written before the record went out, with the deadline of the job that builds the versions it names.
    const key = `jobs/page/${memos(s.config)[0]}`;
    expect(key.replace(/^jobs\/page\/|\.json$/g, '')).toBe(first.page.htmlUrl.split('/').at(-2));
    const named = await versionsNamed(s.blobs, key);
    expect(named?.until).toBeGreaterThan(Date.parse(first.updatedAt));
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

test('a memo that could not be written: the record names no versions (nobody serving their addresses would know they are on their way)', async () => {
  const s = service({}, (store) =>
    Object.assign(Object.create(store), {
      put: (key: string, body: Buffer | string, options: PutOptions) =>
        key.startsWith('jobs/page/') ? Promise.reject(new Error('SlowDown')) : store.put(key, body, options),
    }),
  );
  try {
    const record = await s.preview(site.url('/plain'));
    expect(s.contentJobs()).toBe(1);
    expect(record.page?.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
    expect(record.page?.htmlUrl).toBeUndefined();
    expect(record.page?.markdownUrl).toBeUndefined();
    expect(record.page?.rawTextUrl).toBeUndefined();
    expect(record.image?.original?.url).toBeDefined();
  } finally {
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
    expect(await rememberPage(s.blobs, key, { icon, player }, { now: t0 })).toBe('written');
    const recalled = await recallPage(s.blobs, key, t0 + 1000);
    expect(recalled).toEqual({ icon, player });
    // The same player again is nothing new; it stays when another part is added.
    expect(await rememberPage(s.blobs, key, { player }, { recalled, now: t0 })).toBe('unchanged');
    const memo = (await readMemo(s.blobs, key)) as Record<string, unknown>;
    await writeMemo(s.blobs, key, { ...memo, player: { url: 42, provider: 'Vimeo' } });
    expect((await recallPage(s.blobs, key, t0 + 1000))?.player).toBeUndefined();
  } finally {
    s.cleanup();
  }
});

test("a memo made through another public base, or older than its TTL, is not used; a result read now is kept with its job's deadline, and forgotten with its stand-ins", async () => {
  const s = service();
  try {
    const key = pageMemoKey({ url: 'https://example.com/a', contentType: 'text/html', bytes: Buffer.from('<p>x</p>') });
    const icon = { url: 'http://assets.test/assets/x/original.webp', width: 32, height: 32, backgroundColor: '#ffffff' };
    const t0 = Date.now();
    expect(await rememberPage(s.blobs, key, { icon }, { now: t0 })).toBe('written');
    expect(await recallPage(s.blobs, key, t0 + 1000)).toEqual({ icon });
    // Nothing new: no write.
    expect(await rememberPage(s.blobs, key, { icon }, { recalled: { icon }, now: t0 })).toBe('unchanged');
    expect(await versionsNamed(s.blobs, key)).toBeUndefined();
    expect(await recallPage(s.blobs, key, t0 + PAGE_MEMO_TTL_MS)).toBeUndefined();
    const other = buildLocalDeps({ config: s.config, log: silentLog, baseUrl: () => 'http://other.test' });
    expect(await recallPage(other.blobs, key, t0 + 1000)).toBeUndefined();

    // A result read now: kept with the deadline of the job building the versions it names.
    const content = {
      words: 1,
      cjkChars: 0,
      article: true,
      estimatedReadingTimeInMinutes: 1,
      htmlUrl: 'http://assets.test/assets/aa/page.html',
      markdownUrl: 'http://assets.test/assets/aa/page.md',
      rawTextUrl: 'http://assets.test/assets/aa/page.txt',
    };
    const key2 = pageMemoKey({ url: 'https://example.com/b', bytes: Buffer.from('<p>y</p>') });
    expect(await rememberPage(s.blobs, key2, { icon, content, versionsUntil: t0 + 8000 }, { now: t0 })).toBe('written');
    const recalled = await recallPage(s.blobs, key2, t0 + 1);
    expect(recalled).toEqual({ icon, content, versionsUntil: t0 + 8000 });
    expect(await versionsNamed(s.blobs, key2)).toEqual({ until: t0 + 8000 });
    // A later job of the same bytes (the memo recalled without its result): the later deadline is kept.
    expect(await rememberPage(s.blobs, key2, { content, versionsUntil: t0 + 9000 }, { recalled: { icon }, now: t0 + 2 })).toBe('written');
    expect(await versionsNamed(s.blobs, key2)).toEqual({ until: t0 + 9000 });
    // Stand-ins stored in the versions' place: the memo forgets them (the next preview runs the job), and keeps the rest.
    await forgetVersions(s.blobs, key2);
    expect(await recallPage(s.blobs, key2, t0 + 3)).toEqual({ icon });
    expect(await versionsNamed(s.blobs, key2)).toBeUndefined();
    // A page without versions (no text): its reason is remembered, and names nothing.
    const key4 = pageMemoKey({ url: 'https://example.com/d', bytes: Buffer.from('<p></p>') });
    const none = { words: 0, cjkChars: 0, article: false, reason: 'no text' };
    expect(await rememberPage(s.blobs, key4, { content: none, versionsUntil: t0 + 8000 }, { now: t0 })).toBe('written');
    expect((await recallPage(s.blobs, key4, t0 + 1))?.content).toEqual(none);
    expect(await versionsNamed(s.blobs, key4)).toBeUndefined();

    // A card part that failed for a lasting reason: remembered as failed for FAILED_PART_TTL_MS, its time kept by later writes.
    const key3 = pageMemoKey({ url: 'https://example.com/c', bytes: Buffer.from('<p>z</p>') });
    expect(await rememberPage(s.blobs, key3, { icon, failed: { image: true } }, { now: t0 })).toBe('written');
    const withFailure = await recallPage(s.blobs, key3, t0 + 1);
    expect(withFailure).toMatchObject({ icon, failed: { image: true } });
    expect(await rememberPage(s.blobs, key3, { failed: { image: true } }, { recalled: withFailure, now: t0 + 2 })).toBe('unchanged');
    expect(await rememberPage(s.blobs, key3, { content }, { recalled: withFailure, now: t0 + 60_000 })).toBe('written');
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
