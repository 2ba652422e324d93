/**
 * The real AWS adapters (S3BlobStore, SqsJobRunner, the worker handler) against S3- and
 * SQS-protocol servers on loopback (s3rver, fauxqs). A poller in the test plays the Lambda event
 * source: it receives SQS messages and invokes the worker with a real SQS event shape.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ListQueuesCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { buildFetcher } from '../../../functions/wiring';
import { encodeJson } from '../../../lib/adapters/aws/job-message';
import { isReplyQueueUrl, ReplyInbox } from '../../../lib/adapters/aws/reply-queue';
import { S3BlobStore } from '../../../lib/adapters/aws/s3-blob-store';
import { DEFAULT_POLL, type RunSummary, SqsJobRunner } from '../../../lib/adapters/aws/sqs-job-runner';
import { createWorkerHandler } from '../../../lib/adapters/aws/sqs-job-worker';
import { RouteState } from '../../../lib/fetch/proxy-route';
import { parseProxyUrl } from '../../../lib/fetch/proxy-url';
import { createFetcher } from '../../../lib/fetch/safe-fetch';
import { validParts } from '../../../lib/jobs/context';
import { JOB_REGISTRY, withJobKind } from '../../../lib/jobs/registry';
import { JOB_SPECS } from '../../../lib/jobs/specs';
import type { Job } from '../../../lib/ports';
import { resultKey } from '../../../lib/storage-keys';
import { startFixtureServer } from '../../helpers/fixture-server';
import { startForwardProxy, viaProxy } from '../../helpers/forward-proxy';
import { recordingLog, silentLog, testConfig } from '../../helpers/service';
import { type Emulators, type Poller, startEmulators, startPoller } from './emulators';

const CDN = 'https://d111111abcdef8.cloudfront.net';

let em: Emulators;
let blobs: S3BlobStore;
const config = testConfig();
let poller: Poller | undefined;

beforeAll(async () => {
  em = await startEmulators();
  blobs = new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: CDN });
});
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});
afterAll(async () => {
  await em?.close();
  config.cleanup();
});

function worker() {
  return createWorkerHandler({ config, fetch: buildFetcher(config), blobs, log: silentLog });
}

function runner(opts: Partial<ConstructorParameters<typeof SqsJobRunner>[0]> = {}) {
  return new SqsJobRunner({ sqs: em.sqs, queueUrl: em.queueUrl, blobs, ...opts });
}

const echo = (id: string, value: unknown, extra: { delayMs?: number; fail?: boolean } = {}): Job => ({ id, kind: 'echo', input: { value, ...extra } });

describe('S3BlobStore', () => {
  test('puts, reads, tells what exists, and gives CloudFront URLs; assets get the immutable cache header', async () => {
    await blobs.put('assets/abc/thumbnail.webp', Buffer.from([1, 2, 3]), { contentType: 'image/webp' });
    expect(await blobs.has('assets/abc/thumbnail.webp')).toBe(true);
    expect(await blobs.has('assets/abc/missing.webp')).toBe(false);
    expect(await blobs.get('assets/abc/missing.webp')).toBeUndefined();
    expect([...(await blobs.get('assets/abc/thumbnail.webp'))!]).toEqual([1, 2, 3]);
    const head = await em.s3.send(new GetObjectCommand({ Bucket: em.bucket, Key: 'assets/abc/thumbnail.webp' }));
    expect(head.ContentType).toBe('image/webp');
    expect(head.CacheControl).toBe('public, max-age=31536000, immutable');
    expect(blobs.publicUrl('assets/abc/thumbnail.webp')).toBe(`${CDN}/assets/abc/thumbnail.webp`);
    // Metadata (an image's manifest on its original) comes back from a HEAD, as S3 user metadata,
    // its placeholders too: a blurhash may hold any of the 83 characters of its alphabet.
    const blurhash = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
    const manifest = JSON.stringify({
      sha256: 'abc',
      renditions: { original: { width: 1, height: 1, bytes: 3 } },
      edgeColor: '#ffffff',
      dominantColor: '#ffffff',
      blurhash,
    });
    await blobs.put('assets/abc/original.webp', Buffer.from([4]), { contentType: 'image/webp', metadata: { manifest } });
    expect(await blobs.head('assets/abc/original.webp')).toEqual({ metadata: { manifest } });
    expect(await blobs.head('assets/abc/thumbnail.webp')).toEqual({ metadata: {} });
    expect(await blobs.head('assets/abc/missing.webp')).toBeUndefined();
    await expect(blobs.put('assets/../jobs/x', 'x', { contentType: 'text/plain' })).rejects.toThrow(/Invalid blob key/);
  });
});

describe('SqsJobRunner with the worker behind SQS', () => {
  test('runs started together share their SendMessageBatch requests (a page: image, icon, versions); a later run sends its own', async () => {
    poller = startPoller(em, worker());
    const sent: number[] = [];
    const sqs = {
      send: (cmd: any) => {
        if (cmd instanceof SendMessageBatchCommand) sent.push(cmd.input.Entries?.length ?? 0);
        return em.sqs.send(cmd);
      },
    } as typeof em.sqs;
    const r = runner({ sqs });
    const options = { requestId: 'req-together', deadline: Date.now() + 30_000 };
    const [a, b, c] = await Promise.all([
      r.run([echo('image', 1)], options),
      r.run([echo('icon-0', 2), echo('icon-1', 3)], options),
      Promise.resolve().then(() => r.run([echo('page-content', 4)], options)),
    ]);
    expect(sent).toEqual([4]);
    expect([a.get('image'), b.get('icon-1'), c.get('page-content')]).toEqual([
      expect.objectContaining({ ok: true, result: { value: 1 } }),
      expect.objectContaining({ ok: true, result: { value: 3 } }),
      expect.objectContaining({ ok: true, result: { value: 4 } }),
    ]);
    // Eleven at once: a batch of ten and one of one.
    sent.length = 0;
    const many = await r.run(
      Array.from({ length: 11 }, (_, i) => echo(`e${i}`, i)),
      { requestId: 'req-eleven', deadline: Date.now() + 30_000 },
    );
    expect(sent).toEqual([10, 1]);
    expect([...many.values()].every((o) => o.ok)).toBe(true);
  });

  test("a job's marked parts travel with its result to the runner's outcome (Server-Timing's images-download …); unsound ones are dropped", async () => {
    const w = createWorkerHandler({
      config,
      fetch: buildFetcher(config),
      blobs,
      log: silentLog,
      runJob: async (_kind, input, ctx) => {
        ctx.mark?.('download', 12.34);
        ctx.mark?.('render', 20);
        ctx.mark?.('Bad Name', 1);
        return input;
      },
    });
    poller = startPoller(em, w);
    const out = await runner().run([echo('marked', 1)], { requestId: 'req-parts', deadline: Date.now() + 30_000 });
    expect(out.get('marked')).toEqual(expect.objectContaining({ ok: true, parts: { download: 12.3, render: 20 } }));
    expect(validParts({ render: 3, 'x y': 1, neg: -1, nan: Number.NaN, s: '4' })).toEqual({ render: 3 });
    expect(validParts('no')).toBeUndefined();
  });

  test('fans out with SendMessageBatch, the worker writes results to S3, the runner collects them all', async () => {
    const w = worker();
    poller = startPoller(em, w);
    const jobs = Array.from({ length: 12 }, (_, i) => echo(`echo-${i}`, { n: i, bytes: Buffer.from([i, 255]) }));
    const outcomes = await runner().run(jobs, { requestId: 'req-fanout-1', deadline: Date.now() + 30_000 });

    expect([...outcomes.keys()]).toEqual(jobs.map((j) => j.id));
    for (let i = 0; i < 12; i++) {
      const o = outcomes.get(`echo-${i}`)!;
      expect(o).toMatchObject({ ok: true, result: { value: { n: i } } });
      // Buffers survive the SQS and S3 round trip.
      expect(Buffer.isBuffer((o as any).result.value.bytes)).toBe(true);
      expect([...(o as any).result.value.bytes]).toEqual([i, 255]);
    }
    // Every job is ok: all twelve came back before the deadline (a late one would be 'deadline exceeded').

    // The messages were versioned JSON carrying the request id, job id, kind, input and deadline.
    const bodies = poller.events.flatMap((e) => e.Records.map((r) => JSON.parse(r.body)));
    expect(bodies).toHaveLength(12);
    for (const b of bodies) {
      expect(b).toEqual({
        version: 1,
        requestId: 'req-fanout-1',
        jobId: expect.stringMatching(/^echo-\d+$/),
        kind: 'echo',
        input: expect.any(Object),
        deadline: expect.any(Number),
      });
    }
    // Every event is the real SQS shape.
    expect(poller.events[0].Records[0]).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: em.queueArn, attributes: { ApproximateReceiveCount: '1' } });

    // The results are in S3 under jobs/<requestId>/<jobId>.json.
    const listed = await em.s3.send(new ListObjectsV2Command({ Bucket: em.bucket, Prefix: 'jobs/req-fanout-1/' }));
    expect((listed.Contents ?? []).map((c) => c.Key).sort()).toEqual(jobs.map((j) => `jobs/req-fanout-1/${j.id}.json`).sort());
    const stored = JSON.parse((await blobs.get(resultKey('req-fanout-1', 'echo-3')))!.toString());
    expect(stored).toMatchObject({ version: 1, requestId: 'req-fanout-1', jobId: 'echo-3', kind: 'echo', ok: true });
  });

  test('a failing job comes back at once as a failure; the others are unaffected', async () => {
    poller = startPoller(em, worker());
    const deadline = Date.now() + 30_000;
    const outcomes = await runner().run([echo('good', 1), echo('bad', 2, { fail: true })], { requestId: 'req-fail', deadline });
    expect(outcomes.get('good')).toMatchObject({ ok: true, result: { value: 1 } });
    // The worker's own error, read from its result: the failure did not wait for the deadline.
    expect(outcomes.get('bad')).toMatchObject({ ok: false, error: 'echo job asked to fail' });
    expect(await blobs.has(resultKey('req-fail', 'bad'))).toBe(true);
  });

  test('a slow worker: the late job is left out at the deadline, the others are in', async () => {
    poller = startPoller(em, worker());
    const deadline = Date.now() + 1200;
    const outcomes = await runner().run([echo('fast', 'f'), echo('slow', 's', { delayMs: 5000 })], { requestId: 'req-slow', deadline });
    expect(outcomes.get('fast')).toMatchObject({ ok: true });
    expect(outcomes.get('slow')).toMatchObject({ ok: false, error: 'deadline exceeded' });
    // The run ended when the deadline fired: the slow job's outcome is the runner's own 'deadline
    // exceeded', not a result of the worker (which was still busy with it then).
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    expect(await blobs.has(resultKey('req-slow', 'fast'))).toBe(true);
  });

  test('a killed worker (messages received, never answered): every job is left out at the deadline, no error', async () => {
    poller = startPoller(em, () => new Promise(() => {})); // takes the batch and dies
    const deadline = Date.now() + 800;
    const outcomes = await runner().run([echo('a', 1), echo('b', 2)], { requestId: 'req-killed', deadline });
    expect([...outcomes.values()]).toEqual([
      expect.objectContaining({ ok: false, error: 'deadline exceeded' }),
      expect.objectContaining({ ok: false, error: 'deadline exceeded' }),
    ]);
    // It waited until the deadline, with no result to read, and then reported both jobs late.
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    expect(poller.received).toBe(2); // the worker did take the messages
  });

  test('the hard (invocation) deadline wins over a later record deadline', async () => {
    const outcomes = await runner({ hardDeadline: () => Date.now() + 300 }).run([echo('x', 1)], { requestId: 'req-hard', deadline: Date.now() + 20000 });
    expect(outcomes.get('x')).toMatchObject({ ok: false, error: 'deadline exceeded' });
  });

  test('each result read is reported with its delay after the worker finished the job (its finishedAt)', async () => {
    const summaries: RunSummary[] = [];
    // The result is already there, written (as the worker writes it) an hour after it finished.
    const hourAgo = Date.now() - 3600_000;
    await blobs.put(
      resultKey('req-delay', 'done'),
      encodeJson({
        version: 1,
        requestId: 'req-delay',
        jobId: 'done',
        kind: 'echo',
        ok: true,
        result: { value: 1 },
        ms: 5,
        finishedAt: new Date(hourAgo).toISOString(),
      }),
      { contentType: 'application/json' },
    );
    const outcomes = await runner({ onRun: (s) => summaries.push(s) }).run([echo('done', 1), echo('never', 2)], {
      requestId: 'req-delay',
      deadline: Date.now() + 300,
    });
    expect(outcomes.get('done')).toMatchObject({ ok: true, result: { value: 1 } });
    expect(outcomes.get('never')).toMatchObject({ ok: false, error: 'deadline exceeded' });
    // One delay, for the one result read, measured from the result's finishedAt.
    expect(summaries).toHaveLength(1);
    expect(summaries[0].resultDelayMs).toHaveLength(1);
    expect(summaries[0].resultDelayMs[0]).toBeGreaterThanOrEqual(3600_000);
  });

  test('the poll schedule: a kind whose first poll is later than the deadline is looked for once, at the deadline', async () => {
    const gets = new Map<string, number>();
    const counting = Object.create(blobs, {
      get: {
        value: (key: string) => {
          gets.set(key, (gets.get(key) ?? 0) + 1);
          return blobs.get(key);
        },
      },
    });
    const outcomes = await runner({ blobs: counting, poll: { firstPollMs: { echo: 60_000 } } }).run([echo('late-first', 1)], {
      requestId: 'req-first',
      deadline: Date.now() + 300,
    });
    expect(outcomes.get('late-first')).toMatchObject({ ok: false, error: 'deadline exceeded' });
    expect(gets.get(resultKey('req-first', 'late-first'))).toBe(1);
    expect(DEFAULT_POLL.maxMs).toBeLessThanOrEqual(50);
  });

  test("the preview's route travels with its jobs: the worker's fetches to the hosts the preview sent through the proxy go there too", async () => {
    const proxy = await startForwardProxy();
    const site = await startFixtureServer({}, '127.0.0.1');
    const seen: string[] = [];
    site.route('/og.png', (req, res) => {
      seen.push(viaProxy(req) ? 'proxy' : 'direct');
      res.end('png');
    });
    try {
      const endpoint = parseProxyUrl(proxy.url());
      const fetch = createFetcher({
        allowPrivateNetworks: true,
        allowedPorts: [],
        userAgent: 'linklens-test',
        maxRedirects: 3,
        resolver: async () => [{ address: '127.0.0.1', family: 4 }],
        proxy: { mode: 'fallback', endpoint: async () => endpoint },
      });
      // The job fetches one image from the walled host, as an image job would.
      const w = createWorkerHandler({
        config,
        fetch,
        blobs,
        log: silentLog,
        runJob: async (_kind, _input, ctx) => ({
          status: (await ctx.fetch(`http://walled.test:${site.port}/og.png`, { maxBytes: 1000, timeoutMs: 3000 })).status,
        }),
      });
      poller = startPoller(em, w);
      const route = new RouteState({ proxyHosts: ['walled.test'] });
      const outcomes = await runner().run([echo('routed', 'fetch-og')], { requestId: 'req-route', deadline: Date.now() + 30_000, route });
      expect(outcomes.get('routed')).toMatchObject({ ok: true, result: { status: 200 } });
      expect(seen).toEqual(['proxy']);
      // Messages of earlier tests' unanswered jobs may come first: find this job's.
      const bodies = poller.events.flatMap((e) => e.Records.map((r) => JSON.parse(r.body)));
      expect(bodies.find((b) => b.jobId === 'routed')?.route).toEqual({ proxyHosts: ['walled.test'] });
      // A message without a route: the worker's fetch goes direct.
      await runner().run([echo('plain', 'fetch-og')], { requestId: 'req-route-2', deadline: Date.now() + 30_000 });
      expect(seen).toEqual(['proxy', 'direct']);
    } finally {
      await site.close();
      await proxy.close();
    }
  });

  test('an input too large for a message is stored in S3 beside its result and read back by the worker', async () => {
    poller = startPoller(em, worker());
    const big = Buffer.alloc(300 * 1024, 7);
    const outcomes = await runner({ maxInlineBytes: 10 * 1024 }).run([echo('big', { big })], { requestId: 'req-big', deadline: Date.now() + 8000 });
    const o = outcomes.get('big') as any;
    expect(o.ok).toBe(true);
    expect(o.result.value.big.length).toBe(big.length);
    expect(await blobs.has('jobs/req-big/big.input.json')).toBe(true);
    const body = poller.events.flatMap((e) => e.Records.map((r) => JSON.parse(r.body))).find((b) => b.jobId === 'big');
    expect(body).toMatchObject({ version: 1, inputKey: 'jobs/req-big/big.input.json' });
    expect(body.input).toBeUndefined();
  });
});

describe("reply queue: the results come back on the preview container's own queue", () => {
  const PREFIX = 'linklens-reply-test-';
  const replyConfig = { ...config, replyQueuePrefix: PREFIX };
  let inbox: ReplyInbox;
  beforeAll(() => {
    inbox = new ReplyInbox({ sqs: em.sqs, namePrefix: PREFIX });
  });
  const replyWorker = (deps: Partial<Parameters<typeof createWorkerHandler>[0]> = {}) =>
    createWorkerHandler({ config: replyConfig, fetch: buildFetcher(replyConfig), blobs, log: silentLog, sqs: em.sqs, ...deps });
  const replyRunner = (opts: Partial<ConstructorParameters<typeof SqsJobRunner>[0]> = {}) => runner({ replies: inbox, ...opts });
  /** An SQS record of an echo job (`jobId` its message id too) whose result goes to `replyTo`. */
  const replyRecord = (requestId: string, jobId: string, replyTo: string): SQSEvent['Records'][number] => ({
    messageId: jobId,
    receiptHandle: `r-${jobId}`,
    body: encodeJson({ version: 1, requestId, jobId, kind: 'echo', input: { value: jobId }, deadline: Date.now() + 5000, replyTo }),
    attributes: {} as never,
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'x',
    awsRegion: 'us-east-1',
  });
  const stored = async (requestId: string) =>
    (await em.s3.send(new ListObjectsV2Command({ Bucket: em.bucket, Prefix: `jobs/${requestId}/` }))).Contents?.map((o) => o.Key) ?? [];

  test('each result is one reply: no S3 object, at most one receive per job, the order of the caller kept', async () => {
    poller = startPoller(em, replyWorker());
    const summaries: RunSummary[] = [];
    const before = inbox.requests.ReceiveMessage;
    const jobs = [echo('a', 1, { delayMs: 50 }), echo('b', 2), echo('c', 3, { fail: true }), echo('d', 4, { delayMs: 20 })];
    const outcomes = await replyRunner({ onRun: (x) => summaries.push(x) }).run(jobs, { requestId: 'req-reply', deadline: Date.now() + 8000 });
    expect([...outcomes.keys()]).toEqual(['a', 'b', 'c', 'd']);
    expect(outcomes.get('a')).toMatchObject({ ok: true, result: { value: 1 } });
    expect(outcomes.get('c')).toMatchObject({ ok: false, error: 'echo job asked to fail' });
    expect(summaries[0]).toMatchObject({ pickup: 'reply-queue', done: 3, failed: 1, late: 0 });
    expect(summaries[0].resultDelayMs).toHaveLength(4);
    expect(inbox.requests.ReceiveMessage - before).toBeLessThanOrEqual(jobs.length);
    expect(await stored('req-reply')).toEqual([]);
    // The messages named the reply queue.
    const bodies = poller.events.flatMap((e) => e.Records.map((r) => JSON.parse(r.body))).filter((b) => b.requestId === 'req-reply');
    expect(new Set(bodies.map((b) => b.replyTo))).toEqual(new Set([await inbox.address()]));
  });

  test("one request's replies in one invocation go out together once the last is ready: one SendMessageBatch, one receive", async () => {
    const sent: string[] = [];
    const counting = {
      send: (cmd: { constructor: { name: string } }) => {
        sent.push(cmd.constructor.name);
        return em.sqs.send(cmd as never);
      },
    };
    poller = startPoller(em, replyWorker({ sqs: counting as unknown as typeof em.sqs }));
    const before = inbox.requests.ReceiveMessage;
    const jobs = [echo('card', 1), echo('slow', 2, { delayMs: 300 }), echo('icon', 3)];
    const outcomes = await replyRunner().run(jobs, { requestId: 'req-grouped', deadline: Date.now() + 8000 });
    expect([...outcomes.values()].map((o) => o.ok)).toEqual([true, true, true]);
    // The three messages came in one event (one SendMessageBatch from the runner).
    expect(poller.events.filter((e) => e.Records.some((r) => JSON.parse(r.body).requestId === 'req-grouped'))).toHaveLength(1);
    expect(sent).toEqual(['SendMessageBatchCommand']);
    expect(inbox.requests.ReceiveMessage - before).toBe(1);
  });

  test('a slow worker: what is late at the deadline is reported late, and its reply, when it comes, goes to nobody', async () => {
    poller = startPoller(em, replyWorker());
    const deadline = Date.now() + 1500;
    const outcomes = await replyRunner().run([echo('quick', 1), echo('slow', 2, { delayMs: 4000 })], { requestId: 'req-slow', deadline });
    // (Its failure may also come from S3, when a worker of an earlier test without a reply queue took the message.)
    expect(outcomes.get('quick')).toMatchObject({ ok: true });
    expect(outcomes.get('slow')).toMatchObject({ ok: false, error: 'deadline exceeded' });
    // The next run of the container gets its own result, not the late one of the last.
    const next = await replyRunner().run([echo('slow', 'next')], { requestId: 'req-after-slow', deadline: Date.now() + 8000 });
    expect(next.get('slow')).toMatchObject({ ok: true, result: { value: 'next' } });
  });

  test('a failing worker: a job that throws is a failed reply at once; a worker that never answers ends the wait at the deadline', async () => {
    poller = startPoller(
      em,
      replyWorker({
        runJob: async (_kind, input) => {
          if ((input as { value: string }).value === 'throw') throw new Error('the job broke');
          return new Promise(() => {}); // never answers
        },
      }),
    );
    const summaries: RunSummary[] = [];
    const outcomes = await replyRunner({ onRun: (x) => summaries.push(x) }).run([echo('boom', 'throw'), echo('hang', 'hang')], {
      requestId: 'req-failing',
      deadline: Date.now() + 1200,
    });
    expect(outcomes.get('boom')).toMatchObject({ ok: false, error: 'the job broke' });
    expect(outcomes.get('hang')).toMatchObject({ ok: false, error: 'deadline exceeded' });
    expect(summaries[0]).toMatchObject({ pickup: 'reply-queue', done: 0, failed: 2, late: 1 });
  });

  test('a result too large for a message is stored in S3 and the reply says where', async () => {
    poller = startPoller(em, replyWorker());
    const big = Buffer.alloc(1100 * 1024, 3);
    const outcomes = await replyRunner().run([echo('huge', { big })], { requestId: 'req-huge', deadline: Date.now() + 8000 });
    const o = outcomes.get('huge') as any;
    expect(o.ok).toBe(true);
    expect(o.result.value.big.length).toBe(big.length);
    // Its input went to S3 too (over 1 MiB), and the result object is there.
    expect((await stored('req-huge')).sort()).toEqual(['jobs/req-huge/huge.input.json', 'jobs/req-huge/huge.json']);
  });

  test("a reply queue that is gone (its container's queue swept): the result is dropped with a warning, the record is done, not retried", async () => {
    const log = recordingLog();
    const counted: string[] = [];
    const w = replyWorker({ log, count: (n: string) => void counted.push(n) });
    const own = await inbox.address();
    const gone = own!.replace(/[^/]+$/, `${PREFIX}mx3f2a-0123456789ab`);
    expect(isReplyQueueUrl(gone, PREFIX)).toBe(true);
    const out = await w({ Records: [replyRecord('req-gone', 'a', gone), replyRecord('req-gone', 'b', gone)] });
    expect(out.outcomes).toEqual({ a: 'done', b: 'done' });
    expect(out.batchItemFailures).toEqual([]);
    expect(counted.filter((n) => n === 'JobReplyDropped')).toHaveLength(2);
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(log.lines.filter((l) => l.message === 'reply queue gone: result dropped')).toHaveLength(2);
  });

  test('a reply that cannot be sent: logged as an error, the result stored in S3, where the waiting runner finds it before its deadline', async () => {
    const log = recordingLog();
    const runnerLog = recordingLog();
    const counted: string[] = [];
    // The worker's SQS client refuses every reply (a throttled or unreachable SQS); all else works.
    const failingSqs = {
      send: (command: { constructor: { name: string } }) =>
        command.constructor.name === 'SendMessageBatchCommand'
          ? Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
          : em.sqs.send(command as never),
    } as unknown as typeof em.sqs;
    poller = startPoller(em, replyWorker({ log, sqs: failingSqs, count: (n: string) => void counted.push(n) }));
    const summaries: RunSummary[] = [];
    const outcomes = await replyRunner({ log: runnerLog, onRun: (x) => summaries.push(x) }).run([echo('lost', 'reply')], {
      requestId: 'req-noreply',
      // Long enough that the worker has stored the result by the first look (half-way), however busy the machine.
      deadline: Date.now() + 10_000,
    });
    expect(outcomes.get('lost')).toMatchObject({ ok: true, result: { value: 'reply' } });
    expect(summaries[0]).toMatchObject({ pickup: 'reply-queue', done: 1, late: 0 });
    expect(await stored('req-noreply')).toEqual(['jobs/req-noreply/lost.json']);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['reply not sent: result stored in S3']);
    expect(counted).toContain('JobReplyFailed');
    expect(runnerLog.lines.map((l) => l.message)).toContain('job result found in S3: its reply never came');
  });

  test('a worker sends results only to reply queues of its prefix: a foreign one gets nothing, the result goes to S3', async () => {
    const w = replyWorker();
    const out = await w({ Records: [replyRecord('req-foreign', 'j', em.queueUrl)] });
    expect(out.outcomes).toEqual({ j: 'done' });
    expect(await stored('req-foreign')).toEqual(['jobs/req-foreign/j.json']);
    expect(isReplyQueueUrl(em.queueUrl, PREFIX)).toBe(false);
    expect(isReplyQueueUrl(`https://sqs.us-east-1.amazonaws.com/1/${PREFIX}mx3f2a-0123456789ab`, PREFIX)).toBe(true);
    expect(isReplyQueueUrl(`https://sqs.us-east-1.amazonaws.com/1/${PREFIX}mx3f2a-0123456789ab-more`, PREFIX)).toBe(false);
  });

  test("a new container deletes the prefix's stale queues (their names carry their age), never a fresh one", async () => {
    const prefix = 'linklens-reply-sweep-';
    const old = Math.floor((Date.now() - 2 * 24 * 3600_000) / 1000).toString(36);
    const fresh = Math.floor(Date.now() / 1000).toString(36);
    await em.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}${old}-aaaaaaaaaaaa` }));
    await em.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}${fresh}-bbbbbbbbbbbb` }));
    const sweeper = new ReplyInbox({ sqs: em.sqs, namePrefix: prefix });
    const own = await sweeper.address();
    expect(own).toBeDefined();
    for (let i = 0; i < 50 && sweeper.requests.DeleteQueue === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const names = ((await em.sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix }))).QueueUrls ?? []).map((u) => u.split('/').pop());
    expect(names).not.toContain(`${prefix}${old}-aaaaaaaaaaaa`);
    expect(names).toContain(`${prefix}${fresh}-bbbbbbbbbbbb`);
    expect(names).toContain(own!.split('/').pop());
  });
});

describe('worker handler', () => {
  const record = (messageId: string, body: string, receiveCount = '1'): SQSEvent['Records'][number] => ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: receiveCount, SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q',
    awsRegion: 'us-east-1',
  });
  const msg = (requestId: string, jobId: string, extra: Record<string, unknown> = {}) =>
    encodeJson({ version: 1, requestId, jobId, kind: 'echo', input: { value: jobId }, deadline: Date.now() + 5000, ...extra });

  test('the card first: a batch of slow extras leaves the card job a slot, and it runs at once', async () => {
    // Two slots, one for extras: the second extra waits, the card job does not.
    const cfg = { ...config, jobConcurrency: 2 };
    const registry = withJobKind(JOB_REGISTRY, 'slow-extra', { ...JOB_SPECS.echo, priority: 'extra' }, JOB_REGISTRY.handler('echo')!);
    const events: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const w = createWorkerHandler({
      config: cfg,
      fetch: buildFetcher(cfg),
      blobs,
      log: silentLog,
      registry,
      runJob: async (kind, input) => {
        const id = (input as { value: string }).value;
        events.push(`start ${id}`);
        if (kind === 'slow-extra') await released;
        else release(); // the card job lets the extras go: it started while they held their slot
        events.push(`end ${id}`);
        return { value: id };
      },
    });
    const out = await w({
      Records: [
        record('x1', msg('req-prio', 'x1', { kind: 'slow-extra' })),
        record('x2', msg('req-prio', 'x2', { kind: 'slow-extra' })),
        record('card', msg('req-prio', 'card')),
      ],
    });
    expect(out.outcomes).toEqual({ x1: 'done', x2: 'done', card: 'done' });
    // The card job started while the extras' one slot was held (x1 waits for the card to end), before x2 could start.
    expect(events.indexOf('start card')).toBeLessThan(events.indexOf('end x1'));
    expect(events.indexOf('start card')).toBeLessThan(events.indexOf('start x2'));
    expect(events.indexOf('start x2')).toBeGreaterThan(events.indexOf('end x1'));
  });

  test('is idempotent: a second delivery of a done job is skipped', async () => {
    const w = worker();
    const first = await w({ Records: [record('m1', msg('req-dup', 'j1'))] });
    const second = await w({ Records: [record('m1', msg('req-dup', 'j1'), '2')] });
    expect(first.outcomes).toEqual({ m1: 'done' });
    expect(second.outcomes).toEqual({ m1: 'duplicate' });
    expect(second.batchItemFailures).toEqual([]);
  });

  test('reports only the malformed records as batch item failures; expired and unknown jobs are acknowledged', async () => {
    const w = worker();
    const out = await w({
      Records: [
        record('ok', msg('req-mix', 'ok')),
        record('junk', 'not json'),
        record('v9', msg('req-mix', 'v9', { version: 9 })),
        record('late', msg('req-mix', 'late', { deadline: Date.now() - 1 })),
        record('unknown', msg('req-mix', 'unknown', { kind: 'no-such-kind' })),
      ],
    });
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'junk' }, { itemIdentifier: 'v9' }]);
    expect(out.outcomes).toMatchObject({ ok: 'done', late: 'expired', unknown: 'failed' });
    expect(await blobs.has(resultKey('req-mix', 'late'))).toBe(false);
    const unknown = JSON.parse((await blobs.get(resultKey('req-mix', 'unknown')))!.toString());
    expect(unknown).toMatchObject({ ok: false, error: 'Unknown job kind: no-such-kind' });
  });

  test('an S3 write failure is retried through SQS (batch item failure)', async () => {
    const broken = Object.create(blobs, {
      put: {
        value: async () => {
          throw new Error('S3 down');
        },
      },
    });
    const w = createWorkerHandler({ config, fetch: buildFetcher(config), blobs: broken, log: silentLog });
    const out = await w({ Records: [record('m', msg('req-s3down', 'j'))] });
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm' }]);
  });

  test('counts each outcome as before: a malformed message is JobMessageInvalid, an S3 failure JobRetry (logged), and a batch where every record failed is answered, not thrown', async () => {
    const counted: string[] = [];
    const log = recordingLog();
    const count = (name: string) => {
      counted.push(name);
    };
    const w = createWorkerHandler({ config, fetch: buildFetcher(config), blobs, log, count });
    // JobMemoryWait (a job that waited for memory at all) depends on timing: left out.
    const counts = () => counted.filter((n) => n !== 'JobMemoryWait').sort();
    const out = await w({
      Records: [
        record('good', msg('req-metrics', 'good')),
        record('junk', 'not json'),
        record('late', msg('req-metrics', 'late', { deadline: Date.now() - 1 })),
      ],
    });
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'junk' }]);
    expect(counts()).toEqual(['JobExpired', 'JobMessageInvalid', 'JobSucceeded']);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['invalid job message']);

    counted.length = 0;
    const broken = Object.create(blobs, {
      put: {
        value: async () => {
          throw new Error('S3 down');
        },
      },
    });
    const failing = createWorkerHandler({ config, fetch: buildFetcher(config), blobs: broken, log, count });
    const all = await failing({ Records: [record('a', msg('req-metrics-down', 'a')), record('b', 'not json')] });
    expect(all.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['a', 'b']);
    expect(all.outcomes).toEqual({ a: 'retry', b: 'retry' });
    expect(counts()).toEqual(['JobMessageInvalid', 'JobRetry']);
    expect(log.lines.find((l) => l.message === 'job record failed, will be retried')?.extra).toMatchObject({ messageId: 'a', error: 'S3 down' });
  });

  test('ids cannot walk out of their prefix', () => {
    expect(resultKey('../x', 'a/b')).toBe('jobs/~2e~2e~2fx/a~2fb.json');
  });
});
