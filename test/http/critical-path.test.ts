/**
 * The critical path of a PAGE preview (issue 20): the image job is submitted before the CPU-heavy
 * page-content job; the manifest holds only the icon job; oEmbed is fetched only when a field of
 * the record could still take its value; Server-Timing names the phases that ran. Order is read
 * from a recording JobRunner and from the loopback fixture's requests, never from the clock.
 */
import sharp from 'sharp';
import { buildLocalDeps } from '../../functions/wiring';
import { createApiHandler } from '../../lib/http/api-handler';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { JobKind } from '../../lib/jobs/kinds';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../../lib/ports';
import { PhaseTimer, timedJobRunner } from '../../lib/timing';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../helpers/service';

/** Passes jobs on to the real runner and records, in order, each job submitted; screenshot jobs are answered here (no browser in tests). */
class RecordingRunner implements JobRunner {
  readonly events: string[] = [];
  private readonly seen = new Map<string, () => void>();

  constructor(private readonly inner: JobRunner) {}

  /** Resolves once a job of this kind has been submitted. */
  submitted(kind: JobKind): Promise<void> {
    if (this.events.some((e) => e.startsWith(`submit ${kind} `))) return Promise.resolve();
    return new Promise((resolve) => this.seen.set(kind, resolve));
  }

  async run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    for (const job of jobs) {
      const input = job.input as { url?: string };
      this.events.push(`submit ${job.kind} ${input.url ?? ''}`.trim());
      this.seen.get(job.kind)?.();
    }
    const shots = jobs.filter((j) => j.kind === 'screenshot');
    const out = await this.inner.run(
      jobs.filter((j) => j.kind !== 'screenshot'),
      options,
    );
    for (const j of shots) out.set(j.id, { id: j.id, ok: false, error: 'no browser in this test', ms: 0 });
    return out;
  }
}

let site: FixtureServer;
/** What the fixture's manifest route saw, in order with the jobs (shares RecordingRunner.events). */
let events: string[] = [];
/** Set per test: the manifest answers once this resolves (or after a second, so a wrong order cannot hang the test). */
let releaseManifest: () => Promise<void> = async () => {};

beforeAll(async () => {
  const png = (color: string, size: number) =>
    sharp({ create: { width: size, height: size, channels: 3, background: color } })
      .png()
      .toBuffer();
  const [image, icon] = await Promise.all([png('#3366cc', 400), png('#cc3366', 192)]);
  site = await startFixtureServer({
    '/og': {
      body: html(
        '<title>Plain title</title><meta property="og:title" content="The og title"><meta property="og:description" content="The og description">' +
          '<meta property="og:image" content="/image.png"><link rel="manifest" href="/manifest.json">' +
          '<link rel="alternate" type="application/json+oembed" href="/oembed.json">',
        '<article><p>An article body that is long enough to be read as content by the page versions, with a few sentences.</p></article>',
        'en',
      ),
    },
    '/title-only': { body: html('<title>Plain title</title><link rel="alternate" type="application/json+oembed" href="/oembed.json">', '<p>Body</p>', 'en') },
    '/oembed.json': {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'rich', version: '1.0', title: 'The oEmbed title', provider_name: 'Provider' }),
    },
    '/image.png': { headers: { 'content-type': 'image/png' }, body: image },
    '/manifest-icon.png': { headers: { 'content-type': 'image/png' }, body: icon },
  });
  site.route('/manifest.json', async (_req, res) => {
    events.push('manifest requested');
    await Promise.race([releaseManifest(), new Promise((r) => setTimeout(r, 1000))]);
    events.push('manifest answered');
    res.writeHead(200, { 'content-type': 'application/manifest+json' });
    res.end(JSON.stringify({ icons: [{ src: '/manifest-icon.png', sizes: '192x192', type: 'image/png' }] }));
  });
});
afterAll(() => site.close());

function service(overrides: Parameters<typeof testConfig>[0] = {}) {
  const config = testConfig(overrides);
  const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
  const jobs = new RecordingRunner(deps.jobs);
  events = jobs.events;
  const handler = createApiHandler({ ...deps, jobs });
  const preview = async (link: string) => {
    const out = (await handler(
      httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link }))),
      {},
    )) as HttpResponse;
    return { record: JSON.parse(out.body), timing: out.headers['server-timing'] };
  };
  return { jobs, preview, cleanup: () => config.cleanup() };
}

const oembedRequests = () => site.requests.filter((r) => r.url.startsWith('/oembed.json')).length;
const names = (timing: string) => timing.split(', ').map((p) => p.split(';')[0]);

test('the image job goes before page-content, the manifest holds only the icon job, and oEmbed is not fetched when the og tags gave every field', async () => {
  // The record waits for the content's read here, so its Server-Timing has every phase.
  const s = service({ screenshots: 'on', contentWaitMs: 20_000 });
  // The manifest answers only once page-content is submitted: were anything but the icon job
  // waiting for it, the order below would show it.
  releaseManifest = () => s.jobs.submitted('page-content');
  const oembedBefore = oembedRequests();
  try {
    const { record, timing } = await s.preview(site.url('/og'));
    expect(record).toMatchObject({ ok: true, title: 'The og title', description: 'The og description', language: 'en' });
    expect(record.image?.original?.url).toBeDefined();
    expect(record.icon?.width).toBe(192);
    expect(record.page?.markdownUrl).toBeDefined();

    const at = (prefix: string) => events.findIndex((e) => e.startsWith(prefix));
    expect(at('submit image')).toBeGreaterThanOrEqual(0);
    expect(events.filter((e) => e === 'manifest requested')).toHaveLength(1);
    expect(at('submit image')).toBeLessThan(at('submit page-content'));
    expect(at('submit page-content')).toBeLessThan(at('manifest answered'));
    // The icon jobs wait for the manifest, and try its icon.
    const iconJobs = events.filter((e) => e.startsWith('submit image') && !e.endsWith('/image.png'));
    expect(iconJobs).toContain(`submit image ${site.url('/manifest-icon.png')}`);
    expect(events.indexOf(`submit image ${site.url('/manifest-icon.png')}`)).toBeGreaterThan(at('manifest answered'));
    // og:title, og:description and og:image rank above oEmbed's rules: no oEmbed request.
    expect(oembedRequests()).toBe(oembedBefore);

    // The image jobs' parts come after the phases: each part's longest time among them.
    expect(names(timing)).toEqual([
      'fetch',
      'extract',
      'jobs',
      'platform',
      'subfetch',
      'images',
      'content',
      'screenshot',
      'images-download',
      'images-render',
      'images-store',
      'route',
      'wire',
      'total',
    ]);
    // The preview's connections: its fetcher is new, so the link's fetch opened one (http: TCP, then
    // the request); the image, on the same host, reused a connection or opened one.
    expect(timing).toMatch(/wire;desc="opened=[1-9]\d* reused=\d+ page-rtt=2 image-rtt=[12]"/);
    const dur = (name: string) => Number(/dur=([\d.]+)/.exec(timing.split(', ').find((p: string) => p.startsWith(`${name};`)) ?? '')?.[1]);
    for (const part of ['download', 'render', 'store']) expect(dur(`images-${part}`)).toBeLessThanOrEqual(dur('images'));
  } finally {
    releaseManifest = async () => {};
    s.cleanup();
  }
});

test('oEmbed is fetched when a field of the record could still take its value from it', async () => {
  const s = service();
  const before = oembedRequests();
  try {
    const { record, timing } = await s.preview(site.url('/title-only'));
    // <title> ranks below oEmbed's title: the oEmbed title wins.
    expect(record.title).toBe('The oEmbed title');
    expect(oembedRequests()).toBe(before + 1);
    expect(names(timing)).toContain('subfetch');
  } finally {
    s.cleanup();
  }
});

test("Server-Timing counts a phase's concurrent spans once, and a timed runner puts each job kind under its phase", async () => {
  const timer = new PhaseTimer();
  timer.record('images', 0, 10);
  timer.record('images', 5, 15);
  timer.record('images', 20, 25);
  expect(timer.duration('images')).toBe(20);
  expect(timer.duration('content')).toBe(0);

  const inner: JobRunner = {
    run: async <K extends JobKind>(jobs: Job<K>[]) => new Map(jobs.map((j) => [j.id, { id: j.id, ok: false, error: 'x', ms: 0 } as JobOutcome<K>])),
  };
  const t = new PhaseTimer();
  await timedJobRunner(inner, t).run(
    [
      { id: 'a', kind: 'page-content', input: { url: 'https://a.test/', bytesBase64: '' } },
      { id: 'b', kind: 'echo', input: { value: 1 } },
    ],
    { requestId: 'r', deadline: Date.now() + 1000 },
  );
  expect(names(t.header())).toEqual(['fetch', 'extract', 'jobs', 'content', 'total']);
});

test("a phase's parts are each part's longest among its jobs, in name order; a failed job's and an unphased job's are not reported", async () => {
  const outcomes: Record<string, JobOutcome> = {
    card: { id: 'card', kind: 'image', ok: true, result: { reason: 'x' }, ms: 50, parts: { download: 20, render: 25, store: 5 } },
    icon: { id: 'icon', kind: 'image', ok: true, result: { reason: 'x' }, ms: 30, parts: { store: 9, download: 21 } },
    gone: { id: 'gone', ok: false, error: 'x', ms: 90 },
    echo: { id: 'echo', kind: 'echo', ok: true, result: { value: 1 }, ms: 5, parts: { wait: 5 } },
  };
  const inner: JobRunner = {
    run: async <K extends JobKind>(jobs: Job<K>[]) => new Map(jobs.map((j) => [j.id, outcomes[j.id] as JobOutcome<K>])),
  };
  const t = new PhaseTimer();
  await timedJobRunner(inner, t).run(
    [
      { id: 'card', kind: 'image', input: { url: 'https://a.test/a.png' } },
      { id: 'icon', kind: 'image', input: { url: 'https://a.test/i.png' } },
      { id: 'gone', kind: 'image', input: { url: 'https://a.test/g.png' } },
      { id: 'echo', kind: 'echo', input: { value: 1 } },
    ],
    { requestId: 'r', deadline: Date.now() + 1000 },
  );
  const header = t.header();
  expect(names(header)).toEqual(['fetch', 'extract', 'jobs', 'images', 'images-download', 'images-render', 'images-store', 'total']);
  expect(header).toContain('images-download;dur=21.0');
  expect(header).toContain('images-render;dur=25.0');
  expect(header).toContain('images-store;dur=9.0');
});
