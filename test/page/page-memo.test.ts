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
import {
  FAILED_PART_TTL_MS,
  forgetVersions,
  PAGE_MEMO_TTL_MS,
  pageDigest,
  pageMemoKey,
  recallPage,
  rememberContent,
  rememberPage,
  versionsNamed,
} from '../../lib/page/page-memo';
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
  // The record waits for the content's read, so what it remembers of a preview does not depend on the machine's speed.
  const config = testConfig({ contentWaitMs: 20_000, ...overrides });
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
    const named = await versionsNamed(s.blobs, key.replace(/^jobs\/page\/|\.json$/g, ''));
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
    const digest = pageDigest({ url: 'https://example.com/talk', contentType: 'text/html', bytes: Buffer.from('<p>talk</p>') });
    const key = `jobs/page/${digest}.json`;
    const icon = { url: 'http://assets.test/assets/x/original.webp', width: 32, height: 32, backgroundColor: '#ffffff' };
    const player = { type: 'video' as const, url: 'https://player.vimeo.com/video/76979871', provider: 'Vimeo', aspectRatio: 16 / 9 };
    const t0 = Date.now();
    expect(await rememberPage(s.blobs, key, { icon, player }, { now: t0 })).toBe('written');
    const recalled = await recallPage(s.blobs, digest, t0 + 1000);
    expect(recalled).toEqual({ icon, player });
    // The same player again is nothing new; it stays when another part is added.
    expect(await rememberPage(s.blobs, key, { player }, { recalled, now: t0 })).toBe('unchanged');
    const memo = (await readMemo(s.blobs, key)) as Record<string, unknown>;
    await writeMemo(s.blobs, key, { ...memo, player: { url: 42, provider: 'Vimeo' } });
    expect((await recallPage(s.blobs, digest, t0 + 1000))?.player).toBeUndefined();
  } finally {
    s.cleanup();
  }
});

test("a memo made through another public base, or older than its TTL, is not used; the job's result is recalled from its own memo; versions named are kept with their job's deadline, and forgotten with their stand-ins", async () => {
  const s = service();
  try {
    const digestOf = (name: string, contentType?: string) =>
      pageDigest({ url: `https://example.com/${name}`, contentType, bytes: Buffer.from(`<p>${name}</p>`) });
    const memoKey = (digest: string) => `jobs/page/${digest}.json`;
    const a = digestOf('a', 'text/html');
    const icon = { url: 'http://assets.test/assets/x/original.webp', width: 32, height: 32, backgroundColor: '#ffffff' };
    const t0 = Date.now();
    expect(await rememberPage(s.blobs, memoKey(a), { icon }, { now: t0 })).toBe('written');
    expect(await recallPage(s.blobs, a, t0 + 1000)).toEqual({ icon });
    // Nothing new: no write.
    expect(await rememberPage(s.blobs, memoKey(a), { icon }, { recalled: { icon }, now: t0 })).toBe('unchanged');
    expect(await versionsNamed(s.blobs, a)).toBeUndefined();
    expect(await recallPage(s.blobs, a, t0 + PAGE_MEMO_TTL_MS)).toBeUndefined();
    const other = buildLocalDeps({ config: s.config, log: silentLog, baseUrl: () => 'http://other.test' });
    expect(await recallPage(other.blobs, a, t0 + 1000)).toBeUndefined();

    // Versions a record named: kept with the deadline of the job building them; the job's result from its own memo.
    const content = {
      words: 1,
      cjkChars: 0,
      article: true,
      estimatedReadingTimeInMinutes: 1,
      htmlUrl: 'http://assets.test/assets/aa/page.html',
      markdownUrl: 'http://assets.test/assets/aa/page.md',
      rawTextUrl: 'http://assets.test/assets/aa/page.txt',
    };
    const b = digestOf('b');
    expect(await rememberPage(s.blobs, memoKey(b), { icon, versionsUntil: t0 + 8000 }, { now: t0 })).toBe('written');
    expect(await recallPage(s.blobs, b, t0 + 1)).toEqual({ icon, versionsUntil: t0 + 8000 });
    expect(await versionsNamed(s.blobs, b)).toEqual({ until: t0 + 8000 });
    expect(await rememberContent(s.blobs, b, { content, until: t0 + 8500, now: t0 + 1 })).toBe(true);
    expect(await versionsNamed(s.blobs, b)).toEqual({ until: t0 + 8500 });
    expect(await recallPage(s.blobs, b, t0 + 2)).toEqual({ icon, content, versionsUntil: t0 + 8000 });
    expect(await recallPage(s.blobs, b, t0 + 1 + PAGE_MEMO_TTL_MS)).toBeUndefined();
    expect((await recallPage(other.blobs, b, t0 + 2))?.content).toBeUndefined();
    // The job's memo alone (the preview's could not be written): its result all the same.
    const e = digestOf('e');
    await rememberContent(s.blobs, e, { content, until: t0 + 100, now: t0 });
    expect(await recallPage(s.blobs, e, t0 + 1)).toEqual({ content });
    // A later record may name them from there: named until the job's deadline.
    expect(await versionsNamed(s.blobs, e)).toEqual({ until: t0 + 100 });
    // A later job of the same bytes: the later deadline is kept, an earlier one changes nothing.
    expect(await rememberPage(s.blobs, memoKey(b), { versionsUntil: t0 + 9000 }, { recalled: { icon }, now: t0 + 2 })).toBe('written');
    expect(await versionsNamed(s.blobs, b)).toEqual({ until: t0 + 9000 });
    // A result that came before the record went out is in the preview's memo too (the job's write may land later).
    const f = digestOf('f');
    expect(await rememberPage(s.blobs, memoKey(f), { content, versionsUntil: t0 + 700 }, { now: t0 })).toBe('written');
    expect(await recallPage(s.blobs, f, t0 + 1)).toEqual({ content, versionsUntil: t0 + 700 });
    const recalled = await recallPage(s.blobs, b, t0 + 3);
    expect(await rememberPage(s.blobs, memoKey(b), { versionsUntil: t0 + 5000 }, { recalled, now: t0 + 3 })).toBe('unchanged');
    // Stand-ins stored in the versions' place: both memos forget them (the next preview runs the job), and keep the rest.
    await forgetVersions(s.blobs, b);
    expect(await recallPage(s.blobs, b, t0 + 3)).toEqual({ icon });
    expect(await versionsNamed(s.blobs, b)).toBeUndefined();
    // A page without versions (no text): its reason is recalled, and names nothing.
    const d = digestOf('d');
    const none = { words: 0, cjkChars: 0, article: false, reason: 'no text' };
    await rememberContent(s.blobs, d, { content: none, now: t0 });
    expect((await recallPage(s.blobs, d, t0 + 1))?.content).toEqual(none);
    expect(await versionsNamed(s.blobs, d)).toBeUndefined();

    // A card part that failed for a lasting reason: remembered as failed for FAILED_PART_TTL_MS, its time kept by later writes.
    const c = digestOf('c');
    expect(await rememberPage(s.blobs, memoKey(c), { icon, failed: { image: true } }, { now: t0 })).toBe('written');
    const withFailure = await recallPage(s.blobs, c, t0 + 1);
    expect(withFailure).toMatchObject({ icon, failed: { image: true } });
    expect(await rememberPage(s.blobs, memoKey(c), { failed: { image: true } }, { recalled: withFailure, now: t0 + 2 })).toBe('unchanged');
    expect(await rememberPage(s.blobs, memoKey(c), { versionsUntil: t0 + 1 }, { recalled: withFailure, now: t0 + 60_000 })).toBe('written');
    expect((await recallPage(s.blobs, c, t0 + FAILED_PART_TTL_MS - 1))?.failed).toEqual({ image: true });
    expect((await recallPage(s.blobs, c, t0 + FAILED_PART_TTL_MS))?.failed).toBeUndefined();
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
