/**
 * The worker handler (functions/worker.ts) admits the records of a batch by memory: stand-in jobs
 * take their kind's declared worst case (what the kind holds from its start, then a hold for the
 * rest, as the real job code does), and the handler must never run more of them at once than the
 * function's memory allows, run small ones four at once, and run a job larger than the budget
 * alone.
 */
import type { SQSEvent } from 'aws-lambda';
import { encodeJson } from '../../lib/adapters/aws/job-message';
import { createWorkerHandler } from '../../lib/adapters/aws/sqs-job-worker';
import type { Config } from '../../lib/config';
import type { JobContext } from '../../lib/jobs/context';
import { workerMemoryBudgetMb } from '../../lib/jobs/memory';
import { JOB_SPECS, jobMemoryMb, worstCaseMb } from '../../lib/jobs/specs';
import { resultKey } from '../../lib/storage-keys';
import { memoryBlobs } from '../helpers/memory-blobs';
import { silentLog, testConfig } from '../helpers/service';

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function event(kinds: string[], deadline = Date.now() + 10_000): SQSEvent {
  return {
    Records: kinds.map((kind, i) => ({
      messageId: `m${i}`,
      receiptHandle: 'r',
      body: encodeJson({ version: 1, requestId: 'req', jobId: `job-${i}`, kind, input: { i }, deadline }),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:1:q',
      awsRegion: 'eu-west-1',
    })) as SQSEvent['Records'],
  };
}

/**
 * A worker whose jobs are stand-ins: each holds what its kind declares (the handler admits it
 * with that), then `extra(kind)` more for `ms`, like a render or the pdf.js thread. Records what
 * ran at the same time.
 */
function standInWorker(overrides: Partial<Config>, extra: (kind: string, config: Config) => number, ms = 40) {
  const config = testConfig(overrides);
  cleanups.push(config.cleanup);
  const blobs = memoryBlobs();
  const live = new Set<string>();
  let most = 0;
  let mostHeavy = 0;
  let heavy = 0;
  const overlaps: Record<string, string[]> = {};
  const runJob = async (kind: string, input: unknown, ctx: JobContext) => {
    const name = `${kind}-${(input as { i: number }).i}`;
    overlaps[name] = [...live];
    for (const other of live) overlaps[other].push(name);
    live.add(name);
    most = Math.max(most, live.size);
    try {
      const release = await ctx.memory!.hold(extra(kind, config), ctx.signal);
      mostHeavy = Math.max(mostHeavy, ++heavy);
      await new Promise((r) => setTimeout(r, ms));
      heavy--;
      release();
      return { ok: true };
    } finally {
      live.delete(name);
    }
  };
  const handler = createWorkerHandler({
    config,
    fetch: async () => {
      throw new Error('no fetch');
    },
    blobs,
    log: silentLog,
    runJob,
  });
  return { handler, config, blobs, stats: () => ({ most, mostHeavy, overlaps }) };
}

/** The rest of a kind's worst case, beyond what it declares from its start. */
const rest = (kind: string, config: Config) => worstCaseMb(kind, config) - jobMemoryMb(kind, config);

test('four PDF-sized jobs never have more pdf.js-sized steps at once than the function memory allows', async () => {
  for (const [memory, expected] of [
    [1536, 1],
    [1769, 1],
    [3008, 3],
  ] as const) {
    const w = standInWorker({ functionMemoryMb: memory, jobConcurrency: 4 }, rest);
    const out = await w.handler(event(['document', 'document', 'document', 'document']));
    expect(Object.values(out.outcomes)).toEqual(['done', 'done', 'done', 'done']);
    // All four are admitted (what a document declares from its start is small); their big steps take turns.
    const budget = workerMemoryBudgetMb(w.config)!;
    const c = w.config;
    expect(Math.floor((budget - 4 * jobMemoryMb('document', c)) / rest('document', c))).toBe(expected);
    expect(w.stats().mostHeavy).toBe(expected);
  }
});

test('small jobs still run four at once', async () => {
  // A 2 MP JPEG: the image job's declared memory plus its render estimate (about 110 MB).
  const w = standInWorker({ functionMemoryMb: 1536, jobConcurrency: 4 }, () => 40);
  const out = await w.handler(event(['image', 'image', 'image', 'image']));
  expect(Object.values(out.outcomes)).toEqual(['done', 'done', 'done', 'done']);
  expect(w.stats().most).toBe(4);
  expect(w.stats().mostHeavy).toBe(4);
});

test('a job larger than the whole budget still runs, alone', async () => {
  // 512 MB leaves 148 MB for jobs: a screenshot declares 1024 MB. The echoes fit and go first.
  const w = standInWorker({ functionMemoryMb: 512, jobConcurrency: 4 }, () => 0);
  const out = await w.handler(event(['echo', 'screenshot', 'echo', 'echo']));
  expect(Object.values(out.outcomes)).toEqual(['done', 'done', 'done', 'done']);
  expect(w.stats().overlaps['screenshot-1']).toEqual([]);
});

test('a step larger than the budget (a hold) runs while no other job runs, and the batch finishes', async () => {
  // The documents' pdf.js-sized holds (600 MB) cannot fit in 148 MB: each goes when the others wait or are done.
  const w = standInWorker({ functionMemoryMb: 512, jobConcurrency: 4 }, rest);
  const out = await w.handler(event(['document', 'document', 'document']));
  expect(Object.values(out.outcomes)).toEqual(['done', 'done', 'done']);
  expect(w.stats().mostHeavy).toBe(1);
});

test('locally (no function memory) the records run at jobConcurrency, memory unchecked', async () => {
  const w = standInWorker({ functionMemoryMb: 0, jobConcurrency: 4 }, rest);
  await w.handler(event(['document', 'document', 'document', 'document']));
  expect(w.stats().mostHeavy).toBe(4);
});

test('a job whose deadline passes while it waits for memory is dropped as expired, without a result', async () => {
  const w = standInWorker({ functionMemoryMb: 512, jobConcurrency: 4 }, () => 0, 300);
  // The first screenshot (Chromium and a page declared, more than the 512 MB) runs alone for 300 ms; the
  // second cannot start with the time a browser job needs (its kind's minRunMs) still left before its deadline.
  const out = await w.handler(event(['screenshot', 'screenshot'], Date.now() + (JOB_SPECS.screenshot.minRunMs ?? 0) + 150));
  expect(out.outcomes).toEqual({ m0: 'done', m1: 'expired' });
  expect(w.blobs.keys()).toEqual([resultKey('req', 'job-0')]);
});

test('a browser job with less than its kind needs left before its deadline is dropped at once, never started', async () => {
  const w = standInWorker({ functionMemoryMb: 4096, jobConcurrency: 4 }, () => 0, 10);
  const out = await w.handler(event(['screenshot'], Date.now() + (JOB_SPECS.screenshot.minRunMs ?? 0) - 100));
  expect(out.outcomes).toEqual({ m0: 'expired' });
  expect(w.blobs.keys()).toEqual([]);
});
