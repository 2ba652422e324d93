/**
 * A job kind is one descriptor (lib/jobs/specs.ts) and one handler: a kind defined here, in the
 * test, runs through both runners with nothing else changed. In process (InlineJobRunner) and on
 * the AWS adapters (SqsJobRunner -> SQS on fauxqs -> the worker's protocol -> S3 on s3rver), its
 * Server-Timing phase, its memory declaration (the worker's admission) and its worker (the
 * browser worker's queue for a browser kind) come from its descriptor.
 */
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store';
import { SqsJobRunner } from '../../lib/adapters/aws/sqs-job-runner';
import { createWorkerHandler } from '../../lib/adapters/aws/sqs-job-worker';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import { MemoryGate } from '../../lib/jobs/memory';
import { type AnyJobHandler, JOB_REGISTRY, withJobKind } from '../../lib/jobs/registry';
import type { JobKindSpec } from '../../lib/jobs/specs';
import type { Job, JobRunner } from '../../lib/ports';
import { PhaseTimer, timedJobRunner } from '../../lib/timing';
import { type Emulators, startEmulators, startPoller } from '../adapters/aws/emulators';
import { silentLog, testConfig } from '../helpers/service';

/** The extra kind: reverses a text. */
const REVERSE: JobKindSpec = { description: 'Reverses a text (a test kind).', worker: 'default', priority: 'card', phase: 'reversal', memoryMb: () => 7 };
const reverse: AnyJobHandler = async (input: { text: string }) => ({ reversed: [...input.text].reverse().join('') });
const registry = withJobKind(JOB_REGISTRY, 'reverse', REVERSE, reverse);

const config = testConfig();
const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 3 });
const job = (id: string, text: string) => ({ id, kind: 'reverse', input: { text } }) as unknown as Job;

afterAll(() => config.cleanup());

/** Runs the job through `runner` timed by the registry's descriptors; its outcome and the Server-Timing header. */
async function runTimed(runner: JobRunner) {
  const timer = new PhaseTimer();
  const outcomes = await timedJobRunner(runner, timer, registry.spec).run([job('r1', 'linklens')], { requestId: 'req-extra', deadline: Date.now() + 20_000 });
  return { outcome: outcomes.get('r1'), timing: timer.header() };
}

test('in process: the extra kind runs, its time under its own phase', async () => {
  const runner = new InlineJobRunner({ fetch, blobs: undefined as never, config }, 2, {}, registry);
  const { outcome, timing } = await runTimed(runner);
  expect(outcome).toMatchObject({ ok: true, result: { reversed: 'snelknil' } });
  expect(timing).toMatch(/reversal;dur=[\d.]+/);
  // The service's own registry does not know it.
  const plain = await new InlineJobRunner({ fetch, blobs: undefined as never, config }, 2).run([job('r2', 'x')], {
    requestId: 'r',
    deadline: Date.now() + 5000,
  });
  expect(plain.get('r2')).toMatchObject({ ok: false, error: 'Unknown job kind: reverse' });
});

describe('on the AWS adapters', () => {
  let em: Emulators;
  let blobs: S3BlobStore;
  beforeAll(async () => {
    em = await startEmulators('linklens-extra-kind');
    blobs = new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: 'https://cdn.test' });
  });
  afterAll(() => em?.close());

  test('SQS, the worker (its memory admission from the descriptor), S3: the same result and phase', async () => {
    const admitted: number[] = [];
    class RecordingGate extends MemoryGate {
      override admit(mb: number, signal?: AbortSignal) {
        admitted.push(mb);
        return super.admit(mb, signal);
      }
    }
    const worker = createWorkerHandler({ config, fetch, blobs, log: silentLog, registry, gate: new RecordingGate(1000) });
    const poller = startPoller(em, worker);
    try {
      const runner = new SqsJobRunner({ sqs: em.sqs, queueUrl: em.queueUrl, blobs, specs: registry.spec });
      const { outcome, timing } = await runTimed(runner);
      expect(outcome).toMatchObject({ ok: true, result: { reversed: 'snelknil' } });
      expect(timing).toMatch(/reversal;dur=[\d.]+/);
      expect(admitted).toEqual([7]);
    } finally {
      await poller.stop();
    }
  });

  test("a browser kind goes to the browser worker's queue, the others to the job queue", async () => {
    const sent: { queue: string; kinds: string[] }[] = [];
    const browserRegistry = withJobKind(registry, 'render-text', { ...REVERSE, worker: 'browser', phase: 'render' }, reverse);
    const sqs = {
      send: async (cmd: { input: { QueueUrl: string; Entries: { MessageBody: string }[] } }) => {
        sent.push({ queue: cmd.input.QueueUrl, kinds: cmd.input.Entries.map((e) => JSON.parse(e.MessageBody).kind) });
        return { Successful: [], Failed: cmd.input.Entries.map((e: any) => ({ Id: e.Id, SenderFault: false, Code: 'test' })) };
      },
    };
    const runner = new SqsJobRunner({
      sqs: sqs as never,
      queueUrl: 'https://sqs.test/1/jobs',
      queueUrlByWorker: { browser: 'https://sqs.test/1/browser' },
      blobs,
      specs: browserRegistry.spec,
    });
    await runner.run([job('a', 'x'), { ...job('b', 'y'), kind: 'render-text' } as unknown as Job], { requestId: 'req-route', deadline: Date.now() + 2000 });
    expect(sent.sort((x, y) => x.queue.localeCompare(y.queue))).toEqual([
      { queue: 'https://sqs.test/1/browser', kinds: ['render-text'] },
      { queue: 'https://sqs.test/1/jobs', kinds: ['reverse'] },
    ]);
  });
});
