/**
 * On AWS, screenshot jobs go to the screenshot worker's queue and every other job to the job
 * queue, in one run with one wait (lib/adapters/aws/sqs-job-runner.ts); the screenshot worker
 * takes its browser from the @sparticuz/chromium layer (functions/screenshot-worker.ts).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SqsJobRunner } from '../../lib/adapters/aws/sqs-job-runner';
import { loadConfig } from '../../lib/config';
import { lambdaBrowser } from '../../functions/screenshot-worker';
import type { BlobStore } from '../../lib/ports';

test('screenshot jobs are sent to their own queue, the rest to the job queue; the results are awaited together', async () => {
  const sent: { queue: string; kinds: string[] }[] = [];
  const results = new Map<string, string>();
  const sqs = {
    send: async (cmd: { input: { QueueUrl: string; Entries: { Id: string; MessageBody: string }[] } }) => {
      const kinds = cmd.input.Entries.map((e) => JSON.parse(e.MessageBody).kind as string);
      sent.push({ queue: cmd.input.QueueUrl, kinds });
      for (const e of cmd.input.Entries) {
        const m = JSON.parse(e.MessageBody);
        results.set(`jobs/${m.requestId}/${m.jobId}.json`, JSON.stringify({ version: m.version, requestId: m.requestId, jobId: m.jobId, kind: m.kind, ok: true, result: { from: cmd.input.QueueUrl }, ms: 1, finishedAt: new Date().toISOString() }));
      }
      return { Successful: cmd.input.Entries.map((e) => ({ Id: e.Id })) };
    },
  } as unknown as SQSClient;
  const blobs = { get: async (k: string) => (results.has(k) ? Buffer.from(results.get(k)!) : undefined), put: async () => {}, has: async () => false, publicUrl: (k: string) => k } as unknown as BlobStore;
  const runner = new SqsJobRunner({ sqs, queueUrl: 'https://sqs.test/1/jobs', queueUrlByKind: { screenshot: 'https://sqs.test/1/screenshots' }, blobs, poll: { initialMs: 1 } });
  const out = await runner.run(
    [
      { id: 'page-content', kind: 'page-content', input: { url: 'https://a.example/', bytesBase64: '' } },
      { id: 'screenshot', kind: 'screenshot', input: { url: 'https://a.example/' } },
      { id: 'image', kind: 'image', input: { url: 'https://a.example/i.png' } },
    ],
    { requestId: 'r1', deadline: Date.now() + 5000 },
  );
  expect(sent.sort((a, b) => a.queue.localeCompare(b.queue))).toEqual([
    { queue: 'https://sqs.test/1/jobs', kinds: ['page-content', 'image'] },
    { queue: 'https://sqs.test/1/screenshots', kinds: ['screenshot'] },
  ]);
  expect(out.get('screenshot')).toMatchObject({ ok: true, result: { from: 'https://sqs.test/1/screenshots' } });
  expect(out.get('page-content')).toMatchObject({ ok: true, result: { from: 'https://sqs.test/1/jobs' } });
});

test('LINKPREVIEW_SCREENSHOT_QUEUE_URL, LINKPREVIEW_SCREENSHOTS and the browser settings are read and checked', () => {
  expect(loadConfig({})).toMatchObject({ screenshots: 'auto', browserPath: '/usr/bin/chromium', screenshotTimeoutMs: 10_000, screenshotSettleMs: 500, screenshotQueueUrl: '' });
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'on' }).screenshots).toBe('on');
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'OFF' }).screenshots).toBe('off');
  expect(loadConfig({ LINKPREVIEW_SCREENSHOTS: 'false' }).screenshots).toBe('off');
  expect(() => loadConfig({ LINKPREVIEW_SCREENSHOTS: 'sometimes' })).toThrow(/LINKPREVIEW_SCREENSHOTS must be on, off or auto/);
  expect(() => loadConfig({ LINKPREVIEW_SCREENSHOT_TIMEOUT_MS: '10' })).toThrow(/LINKPREVIEW_SCREENSHOT_TIMEOUT_MS must be at least 1000/);
  expect(() => loadConfig({ LINKPREVIEW_SCREENSHOT_QUEUE_URL: 'nope' })).toThrow(/LINKPREVIEW_SCREENSHOT_QUEUE_URL/);
  expect(loadConfig({ LINKPREVIEW_BROWSER_PATH: '/opt/chrome/chrome' }).browserPath).toBe('/opt/chrome/chrome');
});

test('the screenshot worker takes the executable and flags from @sparticuz/chromium (never loaded outside Lambda)', async () => {
  const fake = { default: { args: ['--single-process'], executablePath: async () => '/tmp/chromium' } };
  await expect(lambdaBrowser(async () => fake)).resolves.toEqual({ executablePath: '/tmp/chromium', args: ['--single-process'] });
});
