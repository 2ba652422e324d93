/**
 * The preview handler configured with the AWS adapters (SqsJobRunner + S3BlobStore) against
 * s3rver and fauxqs on loopback, with the worker handler behind the queue (a test poller plays
 * the Lambda event source). A fixture page with an og:image and a video link: both are rendered by the worker,
 * stored in S3 under assets/, and the record carries CloudFront URLs.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { buildAwsDeps, buildAwsWorkerDeps } from '../../../functions/aws-deps';
import { createObservability } from '../../../functions/observability';
import { createLambdaPreviewHandler, previewCounters } from '../../../functions/preview';
import type { RunSummary } from '../../../lib/adapters/aws/sqs-job-runner';
import { createWorkerHandler } from '../../../lib/adapters/aws/sqs-job-worker';
import { InvocationBudget } from '../../../lib/budget';
import { createPreviewHandler, type HttpResponse } from '../../../lib/http/preview-handler';
import { ffmpegBinary } from '../../../lib/media/run-tool';
import { type FixtureServer, html, startFixtureServer } from '../../helpers/fixture-server';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../../helpers/service';
import { type Emulators, type Poller, startEmulators, startPoller } from './emulators';

const CDN = 'https://d111111abcdef8.cloudfront.net';
let em: Emulators;
let site: FixtureServer;
let poller: Poller | undefined;
// As deployed: the results come back on the preview container's reply queue.
const config = testConfig({ jobWaitMs: 6000, replyQueuePrefix: 'linklens-reply-aws-test-' });

beforeAll(async () => {
  em = await startEmulators('linklens-preview-test');
  Object.assign(config, { bucket: em.bucket, jobQueueUrl: em.queueUrl, publicUrl: CDN });
  const png = await sharp({ create: { width: 900, height: 600, channels: 3, background: { r: 200, g: 60, b: 30 } } })
    .png()
    .toBuffer();
  const mp4 = path.join(mkdtempSync(path.join(tmpdir(), 'aws-video-')), 'clip.mp4');
  execFileSync(await ffmpegBinary(), [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=25',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440',
    '-t',
    '3',
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    'libx264',
    '-c:a',
    'aac',
    '-shortest',
    '-movflags',
    '+faststart',
    '-y',
    mp4,
  ]);
  site = await startFixtureServer({
    '/clip.mp4': { headers: { 'content-type': 'video/mp4' }, body: readFileSync(mp4) },
    '/page': {
      body: html('<title>Fixture page</title><meta property="og:image" content="/pic.png"><meta name="description" content="A page with a picture">'),
    },
    '/pic.png': { headers: { 'content-type': 'image/png' }, body: png },
  });
  // The same page with bytes never seen before on every request: no page memo (lib/page/page-memo.ts) can answer it.
  let n = 0;
  site.route('/fresh', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html(`<title>Fixture page</title><meta property="og:image" content="/pic.png"><meta name="description" content="Fresh page ${++n}">`));
  });
});
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});
afterAll(async () => {
  await site?.close();
  await em?.close();
  config.cleanup();
});

const worker = () => createWorkerHandler({ ...buildAwsWorkerDeps({ config, log: silentLog, s3: em.s3, sqs: em.sqs }) });

async function post(handler: (e: unknown, c?: any) => Promise<unknown>, link: string, requestId: string) {
  const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link })));
  event.requestContext.requestId = requestId;
  const out = (await handler(event, { awsRequestId: `lambda-${requestId}`, getRemainingTimeInMillis: () => 28_000 })) as HttpResponse;
  return { out, json: JSON.parse(out.body) };
}

test('a page preview: the image is rendered by the worker behind SQS, stored in S3, and linked through CloudFront', async () => {
  poller = startPoller(em, worker());
  const settled: RunSummary[] = [];
  const handler = createPreviewHandler(buildAwsDeps({ config, log: silentLog, s3: em.s3, sqs: em.sqs, onJobsSettled: (s) => settled.push(s) }));
  const { out, json } = await post(handler, site.url('/page'), 'req-page-1');

  expect(out.statusCode).toBe(200);
  expect(json).toMatchObject({ ok: true, title: 'Fixture page', requestId: 'req-page-1' });
  // The image is in the record: the worker's result came back before the record deadline.
  for (const size of ['thumbnail', 'medium', 'large', 'original']) {
    expect(json.image[size].url).toMatch(new RegExp(`^${CDN}/assets/[0-9a-f]{64}/`));
  }
  expect(json.image.thumbnail).toMatchObject({ width: 320, height: 213 });

  const keys = async (prefix: string) =>
    ((await em.s3.send(new ListObjectsV2Command({ Bucket: em.bucket, Prefix: prefix }))).Contents ?? []).map((c) => c.Key!);
  const assets = await keys('assets/');
  for (const size of ['thumbnail', 'medium', 'large', 'original']) {
    const key = new URL(json.image[size].url).pathname.slice(1);
    expect(assets).toContain(key);
  }
  // The job result came back on the container's reply queue, which the message named: nothing under jobs/ for it.
  expect(await keys('jobs/req-page-1/')).toEqual([]);
  // Each result read came with its delay after the worker finished it (the runner's 'jobs settled').
  expect(settled.length).toBeGreaterThan(0);
  for (const run of settled) {
    expect(run.pickup).toBe('reply-queue');
    expect(run.resultDelayMs).toHaveLength(run.jobs - run.late - run.notQueued);
    for (const ms of run.resultDelayMs) expect(Number.isFinite(ms) && ms >= 0).toBe(true);
  }
  const messages = poller.events.flatMap((e) => e.Records.map((r) => JSON.parse(r.body)));
  expect(messages.find((m) => m.jobId === 'image')).toMatchObject({ version: 1, requestId: 'req-page-1', kind: 'image', input: { url: site.url('/pic.png') } });
  expect(messages.find((m) => m.jobId === 'image').replyTo).toMatch(/\/linklens-reply-aws-test-[0-9a-z]+-[0-9a-f]{12}$/);
});

test('a video link: probed, framed and hosted by the worker behind SQS, with CloudFront URLs', async () => {
  poller = startPoller(em, worker());
  const handler = createPreviewHandler(buildAwsDeps({ config, log: silentLog, s3: em.s3, sqs: em.sqs }));
  const { out, json } = await post(handler, site.url('/clip.mp4'), 'req-video-1');
  expect(out.statusCode).toBe(200);
  expect(json).toMatchObject({ ok: true, type: 'VIDEO' });
  expect(json.video).toMatchObject({ videoCodec: 'h264', hasAudio: true, width: 320, height: 240, frameRate: 25 });
  expect(json.video.duration).toBeCloseTo(3, 0);
  expect(json.video.image.large.url).toMatch(new RegExp(`^${CDN}/assets/[0-9a-f]{64}/`));
  expect(json.video.snapshots.length).toBeGreaterThan(0);
  const results = ((await em.s3.send(new ListObjectsV2Command({ Bucket: em.bucket, Prefix: 'jobs/req-video-1/' }))).Contents ?? []).map((c) => c.Key);
  // Its result came back as a reply, not as an S3 object.
  expect(results).toEqual([]);
}, 30_000);

test('the same page again: the record from the page memo, no job; new page bytes: the worker reuses the rendered assets', async () => {
  poller = startPoller(em, worker());
  const handler = createPreviewHandler(buildAwsDeps({ config, log: silentLog, s3: em.s3, sqs: em.sqs }));
  const a = await post(handler, site.url('/page'), 'req-page-2a');
  const received = poller.received;
  const b = await post(handler, site.url('/page'), 'req-page-2b');
  expect(b.json.image).toEqual(a.json.image);
  expect(poller.received).toBe(received);
  const c = await post(handler, site.url('/fresh'), 'req-page-2c');
  expect(poller.received).toBeGreaterThan(received);
  expect(c.json.image).toEqual(a.json.image);
});

test('a killed worker: the record comes back at the deadline without the image, and is still a 200', async () => {
  poller = startPoller(em, () => new Promise(() => {}));
  const c = { ...config, jobWaitMs: 1000 };
  const handler = createPreviewHandler(buildAwsDeps({ config: c, log: silentLog, s3: em.s3, sqs: em.sqs }));
  const { out, json } = await post(handler, site.url('/fresh'), 'req-killed-page');
  expect(out.statusCode).toBe(200);
  expect(json).toMatchObject({ ok: true, title: 'Fixture page' });
  // The worker took the image job and never answered: the record went out without it.
  expect(poller.received).toBeGreaterThanOrEqual(1);
  expect(json.image).toBeUndefined();
});

test('the Lambda wrapper: the invocation budget cuts the wait short, and a bad key is counted as a metric', async () => {
  const obs = createObservability('linklens-preview-test', { ...config, logLevel: 'silent' });
  const counted: string[] = [];
  const budget = new InvocationBudget(config.requestBudgetMs, 1500);
  const deps = buildAwsDeps({
    config,
    log: silentLog,
    s3: em.s3,
    sqs: em.sqs,
    hardDeadline: budget.deadline,
    onAuthFailure: () => counted.push('AuthFailures'),
  });
  const handler = createLambdaPreviewHandler({ config, obs, budget, deps });
  // No worker at all, and only 2.5 s left in the invocation: the wait ends 1.5 s before that,
  // where the jobs' wait (config.jobWaitMs) would have gone on far longer.
  const event = httpApiEvent(
    { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
    Buffer.from(JSON.stringify({ link: site.url('/fresh') })),
  );
  const invocationEnds = Date.now() + 2500;
  const jobsDeadline = Date.now() + config.jobWaitMs;
  const out = (await handler(event, { awsRequestId: 'lambda-budget', getRemainingTimeInMillis: () => invocationEnds - Date.now() } as any)) as HttpResponse;
  const answeredAt = Date.now();
  expect(out.statusCode).toBe(200);
  expect(JSON.parse(out.body).image).toBeUndefined();
  // The answer came while the invocation was still running (it did not time out), and before the
  // jobs' deadline: the invocation budget, not the jobs' wait, ended it.
  expect(answeredAt).toBeLessThan(invocationEnds);
  expect(jobsDeadline).toBeGreaterThan(invocationEnds);

  const bad = httpApiEvent({ authorization: 'Bearer wrong', 'content-type': 'application/json' }, Buffer.from('{"link":"https://example.com"}'));
  const res = (await handler(bad, { awsRequestId: 'lambda-bad', getRemainingTimeInMillis: () => 28000 } as any)) as HttpResponse;
  expect(res.statusCode).toBe(401);
  expect(counted).toEqual(['AuthFailures']);
});

test('the Lambda wrapper counts a 500 it answers (our bug) as ServerErrors, for the preview-errors alarm; a 200, a 401 or a 501 is not counted', async () => {
  const obs = createObservability('linklens-preview-test', { ...config, logLevel: 'silent' });
  const counted: string[] = [];
  const budget = new InvocationBudget(config.requestBudgetMs, 1500);
  const deps = buildAwsDeps({ config, log: silentLog, s3: em.s3, sqs: em.sqs, hardDeadline: budget.deadline });
  const broken = {
    ...deps,
    fetch: (async () => {
      throw new TypeError('a bug in the fetcher');
    }) as unknown as typeof deps.fetch,
  };
  const handler = createLambdaPreviewHandler({
    config,
    obs: {
      ...obs,
      count: (name: string) => {
        counted.push(name);
      },
    },
    budget,
    deps: broken,
  });
  const event = httpApiEvent(
    { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
    Buffer.from(JSON.stringify({ link: site.url('/page') })),
  );
  const out = (await handler(event, { awsRequestId: 'lambda-500', getRemainingTimeInMillis: () => 28000 } as any)) as HttpResponse;
  expect(out.statusCode).toBe(500);
  expect(counted).toEqual(['ServerErrors']);

  const fine = createLambdaPreviewHandler({
    config,
    obs: {
      ...obs,
      count: (name: string) => {
        counted.push(name);
      },
    },
    budget,
    deps,
  });
  const bad = httpApiEvent({ authorization: 'Bearer wrong', 'content-type': 'application/json' }, Buffer.from('{"link":"https://example.com"}'));
  expect(((await fine(bad, { awsRequestId: 'lambda-401', getRemainingTimeInMillis: () => 28000 } as any)) as HttpResponse).statusCode).toBe(401);
  // GET /oembed?format=xml: 501 Not Implemented is the specification's answer, not a fault.
  const xml = httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.alloc(0), 'GET', '/oembed');
  xml.rawQueryString = `url=${encodeURIComponent(site.url('/page'))}&format=xml`;
  expect(((await fine(xml, { awsRequestId: 'lambda-501', getRemainingTimeInMillis: () => 28000 } as any)) as HttpResponse).statusCode).toBe(501);
  expect(counted).toEqual(['ServerErrors']);
});

test('the preview’s counters: proxy fetches, walls, slow-down skips, shared flights and takeovers, renders', () => {
  const counted: [string, number][] = [];
  const c = previewCounters((name, value = 1) => {
    counted.push([name, value]);
  });
  c.onRoute({ taken: 'direct', proxied: 0, walls: [], proxyHosts: [] });
  expect(counted).toEqual([]);
  c.onRoute({
    taken: 'proxy',
    proxied: 2,
    walls: [{ host: 'a.test', wall: 'cloudflare-challenge' }],
    proxyHosts: ['a.test'],
    slowedDown: ['b.test', 'c.test'],
  });
  for (const role of ['alone', 'leader', 'follower', 'takeover'] as const) c.onFlight(role);
  c.onRender({ ok: false, reason: 'x' } as never);
  c.onAuthFailure();
  expect(counted).toEqual([
    ['ProxyFetches', 2],
    ['WallsSeen', 1],
    ['SlowDownSkips', 2],
    ['SharedFlights', 1],
    ['FlightTakeovers', 1],
    ['RendersFailed', 1],
    ['AuthFailures', 1],
  ]);
});
