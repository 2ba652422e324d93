/**
 * The page-content memo (lib/page/content-memo.ts): complete versions are remembered for the exact
 * page bytes, so the next preview of the same bytes takes them without the job; a page whose bytes
 * changed, or whose versions came out incomplete (an image cut by the wait), runs the job again.
 * Jobs are counted with a recording JobRunner around the real one.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { buildLocalDeps } from '../../functions/wiring';
import { createApiHandler } from '../../lib/http/api-handler';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { JobKind } from '../../lib/jobs/kinds';
import { pageContentMemoKey } from '../../lib/page/content-memo';
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
    '<title>A remembered article</title><meta name="description" content="About rivers"><meta property="og:image" content="/inline.png">',
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
});
afterAll(() => site.close());

/** The memo objects in a local data dir. */
function memos(config: { dataDir: string }): string[] {
  const dir = path.join(config.dataDir, 'jobs', 'page-content');
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
  return { preview, contentJobs, config, cleanup: () => config.cleanup() };
}

test('the same page bytes again: the same versions, without the page-content job', async () => {
  const s = service();
  try {
    const first = await s.preview(site.url('/plain'));
    expect(first.page?.markdownUrl).toMatch(/^http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/page\.md$/);
    expect(s.contentJobs()).toBe(1);
    expect(memos(s.config)).toHaveLength(1);
    const second = await s.preview(site.url('/plain'));
    expect(s.contentJobs()).toBe(1);
    expect(second.page).toEqual(first.page);
    expect(second.description).toBe(first.description);
    // A page with an image, all of it hosted: remembered too.
    const withImage = await s.preview(site.url('/with-image'));
    expect(s.contentJobs()).toBe(2);
    expect((await s.preview(site.url('/with-image'))).page).toEqual(withImage.page);
    expect(s.contentJobs()).toBe(2);
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

test('versions that came out without an image (cut by the wait) are not remembered', async () => {
  const s = service({ pageImagesWaitMs: 200 });
  try {
    const first = await s.preview(site.url('/with-late-image'));
    expect(first.page?.htmlUrl).toBeDefined();
    expect(s.contentJobs()).toBe(1);
    expect(memos(s.config)).toEqual([]);
    release();
    await s.preview(site.url('/with-late-image'));
    expect(s.contentJobs()).toBe(2);
  } finally {
    release();
    s.cleanup();
  }
});

test('the memo is keyed by the URL, the content type and the bytes', () => {
  const base = { url: 'https://example.com/a', contentType: 'text/html', bytesBase64: Buffer.from('<p>x</p>').toString('base64') };
  const key = pageContentMemoKey(base);
  expect(key).toMatch(/^jobs\/page-content\/[0-9a-f]{64}\.json$/);
  expect(pageContentMemoKey({ ...base })).toBe(key);
  expect(pageContentMemoKey({ ...base, url: 'https://example.com/b' })).not.toBe(key);
  expect(pageContentMemoKey({ ...base, contentType: 'text/html; charset=iso-8859-1' })).not.toBe(key);
  expect(pageContentMemoKey({ ...base, bytesBase64: Buffer.from('<p>y</p>').toString('base64') })).not.toBe(key);
  // Length-prefixed: moving a character between parts changes the key.
  expect(pageContentMemoKey({ url: 'ab', contentType: 'c', bytesBase64: 'd' })).not.toBe(pageContentMemoKey({ url: 'a', contentType: 'bc', bytesBase64: 'd' }));
});
