/**
 * On AWS, screenshot jobs go to the browser worker's queue and every other job to the job
 * queue, in one run with one wait (lib/adapters/aws/sqs-job-runner.ts); the browser worker
 * takes its browser from the @sparticuz/chromium layer (functions/browser-worker.ts).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { lambdaBrowser } from '../../functions/browser-worker';
import { SqsJobRunner } from '../../lib/adapters/aws/sqs-job-runner';
import { loadConfig } from '../../lib/config';
import type { BlobStore } from '../../lib/ports';

test('screenshot jobs are sent to the browser queue, the rest to the job queue; one wait collects the results of both', async () => {
  const sent: { queue: string; kinds: string[] }[] = [];
  // What each fake worker stores, by result key; the browser worker is slower: its result
  // appears only after the runner has looked for it three times.
  const stored = new Map<string, { result: string; visibleAfterReads: number }>();
  const reads: string[] = [];
  const BROWSER = 'https://sqs.test/1/browser';
  const sqs = {
    send: async (cmd: { input: { QueueUrl: string; Entries: { Id: string; MessageBody: string }[] } }) => {
      const kinds = cmd.input.Entries.map((e) => JSON.parse(e.MessageBody).kind as string);
      sent.push({ queue: cmd.input.QueueUrl, kinds });
      for (const e of cmd.input.Entries) {
        const m = JSON.parse(e.MessageBody);
        const result = {
          version: m.version,
          requestId: m.requestId,
          jobId: m.jobId,
          kind: m.kind,
          ok: true,
          result: { worker: cmd.input.QueueUrl, job: m.jobId },
          ms: 1,
          finishedAt: new Date().toISOString(),
        };
        stored.set(`jobs/${m.requestId}/${m.jobId}.json`, { result: JSON.stringify(result), visibleAfterReads: cmd.input.QueueUrl === BROWSER ? 3 : 0 });
      }
      return { Successful: cmd.input.Entries.map((e) => ({ Id: e.Id })) };
    },
  } as unknown as SQSClient;
  const blobs = {
    get: async (k: string) => {
      reads.push(k);
      const s = stored.get(k);
      return s && reads.filter((r) => r === k).length > s.visibleAfterReads ? Buffer.from(s.result) : undefined;
    },
    put: async () => {},
    has: async () => false,
    publicUrl: (k: string) => k,
  } as unknown as BlobStore;
  const runner = new SqsJobRunner({
    sqs,
    queueUrl: 'https://sqs.test/1/jobs',
    queueUrlByWorker: { browser: BROWSER },
    blobs,
    poll: { initialMs: 1, maxMs: 5 },
  });
  const out = await runner.run(
    [
      { id: 'page-content', kind: 'page-content', input: { url: 'https://a.example/', bytesBase64: '' } },
      { id: 'screenshot', kind: 'screenshot', input: { url: 'https://a.example/' } },
      { id: 'image', kind: 'image', input: { url: 'https://a.example/i.png' } },
    ],
    { requestId: 'r1', deadline: Date.now() + 30_000 },
  );
  expect(sent.sort((a, b) => a.queue.localeCompare(b.queue))).toEqual([
    { queue: BROWSER, kinds: ['screenshot'] },
    { queue: 'https://sqs.test/1/jobs', kinds: ['page-content', 'image'] },
  ]);
  // One wait for both queues: the job queue's results were in at the first look, and the run
  // kept polling for the screenshot alone until its result appeared (the fourth look), then returned.
  const count = (id: string) => reads.filter((k) => k === `jobs/r1/${id}.json`).length;
  expect([count('page-content'), count('image'), count('screenshot')]).toEqual([1, 1, 4]);
  expect(reads.at(-1)).toBe('jobs/r1/screenshot.json');
  // Each job's outcome is the result stored under its own key, in the order the jobs were given.
  expect([...out.keys()]).toEqual(['page-content', 'screenshot', 'image']);
  expect(out.get('screenshot')).toMatchObject({ ok: true, result: { worker: BROWSER, job: 'screenshot' } });
  expect(out.get('page-content')).toMatchObject({ ok: true, result: { worker: 'https://sqs.test/1/jobs', job: 'page-content' } });
  expect(out.get('image')).toMatchObject({ ok: true, result: { worker: 'https://sqs.test/1/jobs', job: 'image' } });
});

test('LINKPREVIEW_BROWSER_QUEUE_URL, LINKPREVIEW_SCREENSHOTS and the browser settings are read and checked', () => {
  expect(loadConfig({})).toMatchObject({
    screenshots: 'auto',
    browserPath: '/usr/bin/chromium',
    screenshotTimeoutMs: 10_000,
    screenshotQuietMs: 100,
    screenshotWaitMs: 250,
    screenshotMemoTtlMs: 3_600_000,
    browserQueueUrl: '',
  });
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'on' }).screenshots).toBe('on');
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'OFF' }).screenshots).toBe('off');
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'false' }).screenshots).toBe('off');
  expect(() => loadConfig({ LINKPREVIEW_SCREENSHOTS: 'sometimes' })).toThrow(/LINKPREVIEW_SCREENSHOTS must be on, off or auto/);
  expect(() => loadConfig({ LINKPREVIEW_SCREENSHOT_TIMEOUT_MS: '10' })).toThrow(/LINKPREVIEW_SCREENSHOT_TIMEOUT_MS must be at least 1000/);
  expect(() => loadConfig({ LINKPREVIEW_BROWSER_QUEUE_URL: 'nope' })).toThrow(/LINKPREVIEW_BROWSER_QUEUE_URL/);
  expect(loadConfig({ LINKPREVIEW_BROWSER_PATH: '/opt/chrome/chrome' }).browserPath).toBe('/opt/chrome/chrome');
});

test('the browser worker takes the executable and flags from @sparticuz/chromium (never loaded outside Lambda)', async () => {
  const fake = { default: { args: ['--single-process'], executablePath: async () => '/tmp/chromium' } };
  await expect(lambdaBrowser(async () => fake)).resolves.toEqual({ executablePath: '/tmp/chromium', args: ['--single-process'] });
});
