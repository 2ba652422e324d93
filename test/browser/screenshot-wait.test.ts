/**
 * The screenshot wait policy: once the rest of the record is ready it waits for the screenshot at
 * most LINKPREVIEW_SCREENSHOT_WAIT_MS; a late screenshot still finishes, is stored and remembered
 * for its URL (LINKPREVIEW_SCREENSHOT_MEMO_TTL_MS), and the next preview of the URL takes it
 * without a job. No elapsed time is asserted: slow steps are held by gates the tests release.
 */
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import { browserAvailable, closeBrowser } from '../../lib/browser/browser';
import { recallScreenshot, rememberScreenshot } from '../../lib/browser/screenshot-memo';
import { type Config, loadConfig } from '../../lib/config';
import type { ImageSet } from '../../lib/contract/link';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import type { FetchResult } from '../../lib/fetch/types';
import type { JobKind, PageContentResult } from '../../lib/jobs/kinds';
import { describePage } from '../../lib/page/describe-page';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../../lib/ports';
import { previewLink } from '../../lib/preview/preview-link';
import { PhaseTimer } from '../../lib/timing';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { memoryBlobs } from '../helpers/memory-blobs';
import { testConfig } from '../helpers/service';
import { paragraphs } from '../page/fixtures';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${loadConfig(process.env).browserPath}: the real-browser wait test is skipped\n`);

jest.setTimeout(60_000);

afterAll(async () => {
  await closeBrowser();
});

function gate(): { promise: Promise<void>; release(): void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

/** A job runner around the real one that keeps every screenshot run, so a test can await one the record did not wait for. */
class WatchedRunner implements JobRunner {
  readonly screenshotRuns: Promise<Map<string, JobOutcome>>[] = [];
  /** How many of them have finished. */
  screenshotRunsDone = 0;
  constructor(private readonly inner: JobRunner) {}
  get sharesCpu() {
    return this.inner.sharesCpu;
  }
  run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    const run = this.inner.run(jobs, options);
    if (jobs.some((j) => j.kind === 'screenshot')) {
      this.screenshotRuns.push(run as Promise<Map<string, JobOutcome>>);
      void run.then(() => {
        this.screenshotRunsDone++;
      });
    }
    return run;
  }
}

/** The preview pipeline on the local adapters (a loopback fixture, the guard open for it), with the runner watched. */
function pipeline(config: Config) {
  const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 5 });
  const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
  const jobs = new WatchedRunner(new InlineJobRunner({ fetch, blobs, config }, config.jobConcurrency));
  let n = 0;
  const preview = async (link: string) =>
    (await previewLink({ link } as never, { config, fetch, blobs, jobs }, { requestId: `req-${++n}`, timer: new PhaseTimer() })).record;
  return { preview, blobs, jobs };
}

const ARTICLE = (head = '') =>
  `<!doctype html><html><head><title>Rivers</title>${head}</head><body><article><h1>Rivers</h1>${paragraphs(400)
    .map((p) => `<p>${p}</p>`)
    .join('')}</article></body></html>`;

/** An ImageSet that no job made (what an old memo holds). */
const OLD_SHOT: ImageSet = {
  width: 1280,
  height: 800,
  size: 1000,
  format: 'png',
  hasAlphaChannel: false,
  thumbnail: { width: 320, height: 200, url: 'http://assets.test/assets/old/thumbnail.webp' },
  medium: { width: 640, height: 400, url: 'http://assets.test/assets/old/medium.webp' },
  large: { width: 1280, height: 800, url: 'http://assets.test/assets/old/large.webp' },
  original: { width: 1280, height: 800, url: 'http://assets.test/assets/old/original.webp' },
} as ImageSet;

describe('a slow screenshot does not hold the record', () => {
  let site: FixtureServer;
  let css: ReturnType<typeof gate>;
  beforeAll(async () => {
    css = gate();
    // The page's stylesheet is held until the test releases it: its load event (and so the capture) waits for it.
    site = await startFixtureServer({
      '/held': { body: ARTICLE('<link rel="stylesheet" href="/held.css">') },
      '/held.css': async (_req, res) => {
        await css.promise;
        res.writeHead(200, { 'content-type': 'text/css' });
        res.end('body { background: #c03030 }');
      },
    });
  });
  afterAll(async () => {
    css.release();
    await site.close();
  });

  withBrowser('the record leaves without page.screenshot; the late screenshot is stored and the next preview of the URL has it, with no new job', async () => {
    const config = testConfig({ screenshots: 'on', jobWaitMs: 20_000 });
    const { preview, jobs } = pipeline(config);
    const url = site.url('/held');
    try {
      const first = await preview(url);
      expect(first.ok).toBe(true);
      // The rest of the page object is there; the screenshot is not, and its job has not finished.
      expect(first.page?.htmlUrl).toMatch(/^http:\/\/assets\.test\/assets\//);
      expect(first.page?.screenshot).toBeUndefined();
      expect(jobs.screenshotRuns).toHaveLength(1);
      expect(jobs.screenshotRunsDone).toBe(0);

      // Released, the job finishes after the record left, and stores its screenshot.
      css.release();
      const late = (await jobs.screenshotRuns[0]).get('screenshot');
      expect(late).toMatchObject({ ok: true, result: { screenshot: { original: { width: 1280, height: 800 } } } });
      const shot = late?.ok && late.kind === 'screenshot' ? late.result.screenshot : undefined;

      const second = await preview(url);
      expect(second.page?.screenshot).toEqual(shot);
      // At no cost: no second screenshot job, and the browser loaded the page's stylesheet once.
      expect(jobs.screenshotRuns).toHaveLength(1);
      expect(site.requests.filter((r) => r.url === '/held.css')).toHaveLength(1);
    } finally {
      config.cleanup();
    }
  });
});

describe('the screenshot memo', () => {
  let site: FixtureServer;
  beforeAll(async () => {
    site = await startFixtureServer({ '/page': { body: ARTICLE() } });
  });
  afterAll(() => site.close());

  // Screenshots on whether or not a browser is installed: these cases look at which screenshot the
  // record takes and whether a job is asked for, not at the capture.
  const memoConfig = (overrides: Partial<Config> = {}) => testConfig({ screenshots: 'on', screenshotWaitMs: 0, ...overrides });

  test('a fresh memo is taken as it is: no screenshot job', async () => {
    const config = memoConfig();
    const { preview, blobs, jobs } = pipeline(config);
    try {
      await rememberScreenshot(blobs, { url: site.url('/page'), screenshot: OLD_SHOT, at: Date.now() }, config.screenshotMemoTtlMs);
      const record = await preview(site.url('/page'));
      expect(record.page?.screenshot).toEqual(OLD_SHOT);
      expect(jobs.screenshotRuns).toHaveLength(0);
    } finally {
      config.cleanup();
    }
  });

  test('a memo older than the TTL is not used: the screenshot job runs', async () => {
    const config = memoConfig({ screenshotMemoTtlMs: 60_000 });
    const { preview, blobs, jobs } = pipeline(config);
    try {
      await rememberScreenshot(blobs, { url: site.url('/page'), screenshot: OLD_SHOT, at: Date.now() - 60_001 }, config.screenshotMemoTtlMs);
      const record = await preview(site.url('/page'));
      expect(record.page?.screenshot).not.toEqual(OLD_SHOT);
      expect(jobs.screenshotRuns).toHaveLength(1);
      await jobs.screenshotRuns[0];
    } finally {
      config.cleanup();
    }
  });

  test('TTL 0 turns reuse off: a memo is neither read nor written', async () => {
    const config = memoConfig({ screenshotMemoTtlMs: 0 });
    const { preview, blobs, jobs } = pipeline(config);
    const url = site.url('/page');
    try {
      // Written by a deployment with reuse on: a preview with TTL 0 does not take it.
      await rememberScreenshot(blobs, { url, screenshot: OLD_SHOT, at: Date.now() }, 3_600_000);
      const record = await preview(url);
      expect(record.page?.screenshot).not.toEqual(OLD_SHOT);
      expect(jobs.screenshotRuns).toHaveLength(1);
      await jobs.screenshotRuns[0];
      // The job (with a browser, a new capture) did not replace the memo.
      expect(await recallScreenshot(blobs, url, 3_600_000)).toEqual(OLD_SHOT);

      // And with TTL 0 nothing is remembered.
      const other = site.url('/page?other');
      await rememberScreenshot(blobs, { url: other, screenshot: OLD_SHOT, at: Date.now() }, 0);
      expect(await recallScreenshot(blobs, other, 3_600_000)).toBeUndefined();
    } finally {
      config.cleanup();
    }
  });

  test('recall: by URL, within the TTL of the capture, never from the future', async () => {
    const config = memoConfig();
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const at = Date.now();
    try {
      await rememberScreenshot(blobs, { url: 'https://a.example/', screenshot: OLD_SHOT, at }, 1000);
      expect(await recallScreenshot(blobs, 'https://a.example/', 1000, at + 999)).toEqual(OLD_SHOT);
      expect(await recallScreenshot(blobs, 'https://a.example/', 1000, at + 1000)).toBeUndefined();
      expect(await recallScreenshot(blobs, 'https://a.example/', 1000, at - 1)).toBeUndefined();
      expect(await recallScreenshot(blobs, 'https://b.example/', 1000, at)).toBeUndefined();
    } finally {
      config.cleanup();
    }
  });
});

describe('describePage waits for the rest of the record before the screenshot wait starts', () => {
  test('a screenshot that comes after the page content but before the other jobs is included', async () => {
    const config = testConfig({ screenshots: 'on', screenshotWaitMs: 0 });
    const shotGate = gate();
    const others = gate();
    const runner: JobRunner = {
      run: (async (jobs: Job[]) => {
        const job = jobs[0];
        if (job.kind === 'screenshot') {
          await shotGate.promise;
          return new Map([[job.id, { id: job.id, kind: 'screenshot', ok: true, result: { screenshot: OLD_SHOT }, ms: 1 }]]);
        }
        return new Map([
          [
            job.id,
            {
              id: job.id,
              kind: 'page-content',
              ok: true,
              result: { words: 3, cjkChars: 0, article: true, htmlUrl: 'http://assets.test/p.html', excerpt: 'x' },
              ms: 1,
            },
          ],
        ]);
      }) as JobRunner['run'],
    };
    const blobs = memoryBlobs();
    const res = { finalUrl: 'https://a.example/', body: Buffer.from('<p>x</p>') } as FetchResult;
    try {
      let done = false;
      const described = describePage(
        res,
        'text/html',
        { config, jobs: runner, blobs },
        { requestId: 'r', deadline: Date.now() + 20_000, othersReady: others.promise },
      ).then((d) => {
        done = true;
        return d;
      });
      // The page content is in and the screenshot arrives; the other jobs still run: no answer yet.
      shotGate.release();
      await new Promise((r) => setImmediate(r));
      expect(done).toBe(false);
      others.release();
      expect((await described).page).toEqual({ htmlUrl: 'http://assets.test/p.html', screenshot: OLD_SHOT });
    } finally {
      config.cleanup();
    }
  });
});

describe('where the jobs share the cores (the local runner), the capture starts once the rest of the record is ready', () => {
  const CONTENT: PageContentResult = { words: 3, cjkChars: 0, article: true, htmlUrl: 'http://assets.test/p.html', excerpt: 'x' };
  /** A runner that logs each submission and holds page-content until the test releases it. */
  function heldRunner(sharesCpu: boolean | undefined, contentGate: Promise<void>) {
    const submitted: string[] = [];
    const runner: JobRunner = {
      sharesCpu,
      run: (async (jobs: Job[]) => {
        const job = jobs[0];
        submitted.push(job.kind);
        if (job.kind === 'screenshot') return new Map([[job.id, { id: job.id, kind: 'screenshot', ok: true, result: { screenshot: OLD_SHOT }, ms: 1 }]]);
        await contentGate;
        return new Map([[job.id, { id: job.id, kind: 'page-content', ok: true, result: CONTENT, ms: 1 }]]);
      }) as JobRunner['run'],
    };
    return { runner, submitted };
  }
  const noBlobs = memoryBlobs();
  const res = { finalUrl: 'https://a.example/', body: Buffer.from('<p>x</p>') } as FetchResult;
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };

  test.each([
    ['shares the cores', true, ['page-content'], ['page-content', 'screenshot']],
    ['runs jobs elsewhere (SQS)', undefined, ['page-content', 'screenshot'], ['page-content', 'screenshot']],
  ])('a runner that %s', async (_name, sharesCpu, whileHeld, atEnd) => {
    const config = testConfig({ screenshots: 'on', screenshotWaitMs: 5_000 });
    const content = gate();
    const others = gate();
    const { runner, submitted } = heldRunner(sharesCpu, content.promise);
    try {
      const described = describePage(
        res,
        'text/html',
        { config, jobs: runner, blobs: noBlobs },
        { requestId: 'r', deadline: Date.now() + 20_000, othersReady: others.promise },
      );
      await settle();
      // The page content and the image jobs still run.
      expect(submitted).toEqual(whileHeld);
      content.release();
      await settle();
      expect(submitted).toEqual(whileHeld);
      others.release();
      // The wait is long enough for the screenshot either way: it is in the record.
      expect((await described).page).toEqual({ htmlUrl: 'http://assets.test/p.html', screenshot: OLD_SHOT });
      expect(submitted).toEqual(atEnd);
    } finally {
      config.cleanup();
    }
  });

  test('a remembered screenshot is taken from the memo: no job is started', async () => {
    const config = testConfig({ screenshots: 'on', screenshotWaitMs: 5_000 });
    const content = gate();
    const { runner, submitted } = heldRunner(true, content.promise);
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    try {
      await rememberScreenshot(blobs, { url: res.finalUrl, screenshot: OLD_SHOT, at: Date.now() }, config.screenshotMemoTtlMs);
      const described = describePage(res, 'text/html', { config, jobs: runner, blobs }, { requestId: 'r', deadline: Date.now() + 20_000 });
      content.release();
      expect((await described).page).toEqual({ htmlUrl: 'http://assets.test/p.html', screenshot: OLD_SHOT });
      expect(submitted).toEqual(['page-content']);
    } finally {
      config.cleanup();
    }
  });
});
