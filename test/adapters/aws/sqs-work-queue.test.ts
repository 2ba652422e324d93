/**
 * The batches' AWS adapters against S3- and SQS-protocol servers on loopback (s3rver, fauxqs):
 * SqsWorkQueue and its consumer (lib/adapters/aws/sqs-work-queue.ts), and S3BlobStore's list and
 * delete, which count a key's open batches (lib/batch/store.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { S3BlobStore } from '../../../lib/adapters/aws/s3-blob-store';
import { SqsWorkQueue, sqsQueueConsumer } from '../../../lib/adapters/aws/sqs-work-queue';
import { FsBlobStore } from '../../../lib/adapters/local/fs-blob-store';
import { BatchStore } from '../../../lib/batch/store';
import type { BatchMeta } from '../../../lib/batch/types';
import type { BlobStore, MessageOutcome, ReceivedMessage } from '../../../lib/ports';
import { recordingLog } from '../../helpers/service';
import { type Emulators, sqsEvent, startEmulators } from './emulators';

let em: Emulators;
beforeAll(async () => {
  em = await startEmulators();
});
afterAll(() => em.close());

/** What the queue holds and is visible now (one receive of up to 10, then nothing is deleted). */
async function receive(wait = 0): Promise<Message[]> {
  const out = await em.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: em.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait, MessageSystemAttributeNames: ['All'] }),
  );
  return out.Messages ?? [];
}

/** Receives until `n` messages came (each receive hides what it got for the queue's 30 s). */
async function receiveAll(n: number): Promise<Message[]> {
  const got: Message[] = [];
  for (let i = 0; i < 20 && got.length < n; i++) got.push(...(await receive(1)));
  return got;
}

test('send: every message arrives whole, ten to a SendMessageBatch, its group and id in its body', async () => {
  const q = new SqsWorkQueue<{ n: number }>({ sqs: em.sqs, queueUrl: em.queueUrl });
  await q.send(Array.from({ length: 23 }, (_, n) => ({ id: `m${n}`, group: n % 2 ? 'key_a' : 'key_b', body: { n } })));
  const got = await receiveAll(23);
  expect(got.map((m) => JSON.parse(m.Body!).body.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, n) => n));
  const first = got.map((m) => JSON.parse(m.Body!)).find((b) => b.id === 'm1');
  expect(first).toEqual({ id: 'm1', group: 'key_a', body: { n: 1 } });
});

test('the consumer: done is deleted by the caller; a retry hides the message for its wait and is reported; a throw is reported; an unreadable body is dropped', async () => {
  const q = new SqsWorkQueue<{ what: string }>({ sqs: em.sqs, queueUrl: em.queueUrl });
  await q.send(['done', 'retry', 'throw'].map((what) => ({ id: what, group: 'key_a', body: { what } })));
  const messages = await receiveAll(3);
  expect(messages).toHaveLength(3);
  const seen: ReceivedMessage<{ what: string }>[] = [];
  const log = recordingLog();
  const consume = sqsQueueConsumer<{ what: string }>({
    sqs: em.sqs,
    queueUrl: em.queueUrl,
    log,
    handler: async (m): Promise<MessageOutcome> => {
      seen.push(m);
      if (m.body.what === 'throw') throw new Error('S3 is down');
      return m.body.what === 'retry' ? { retryInMs: 1500 } : 'done';
    },
  });
  const event = sqsEvent(messages, em.queueArn);
  event.Records.push({ ...event.Records[0], messageId: 'garbled', body: 'not json' });
  const res = await consume(event);
  const idOf = (what: string) => messages.find((m) => JSON.parse(m.Body!).id === what)!.MessageId;
  expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([idOf('retry'), idOf('throw')].sort());
  expect(seen.map((m) => [m.id, m.group, m.attempt]).sort()).toEqual([
    ['done', 'key_a', 1],
    ['retry', 'key_a', 1],
    ['throw', 'key_a', 1],
  ]);
  expect(log.lines.some((e) => e.level === 'error' && e.message === 'queue message unreadable, dropped')).toBe(true);
  // The retry comes back once its wait (1.5 s) is over, as its second attempt; the thrown one stays hidden for the queue's 30 s.
  let again: Message[] = [];
  for (let i = 0; i < 20 && again.length === 0; i++) again = await receive(1);
  expect(again.map((m) => JSON.parse(m.Body!).id)).toEqual(['retry']);
  expect(again[0].Attributes?.ApproximateReceiveCount).toBe('2');
});

describe("a key's open batches, counted with list and delete", () => {
  const meta = (id: string, keyId: string): BatchMeta => ({
    id,
    keyId,
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    items: [],
  });
  const stores: [string, () => { blobs: BlobStore & Required<Pick<BlobStore, 'list' | 'delete'>>; done: () => void }][] = [
    ['S3', () => ({ blobs: new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: 'https://cdn.test' }), done: () => {} })],
    [
      'the local disk',
      () => {
        const dir = mkdtempSync(path.join(tmpdir(), 'linklens-open-'));
        return { blobs: new FsBlobStore(dir, () => 'http://local.test', { writeBehind: true }), done: () => rmSync(dir, { recursive: true, force: true }) };
      },
    ],
  ];
  test.each(stores)('%s: the items of each open batch add up, a closed one is gone, another key is apart, a nested key is not listed', async (_name, make) => {
    const { blobs, done } = make();
    try {
      const store = new BatchStore(blobs);
      const a1 = meta('bat_AAAAAAAAAAAAAAAAAAAAAA', 'key_0123456789abcdef');
      const a2 = meta('bat_BBBBBBBBBBBBBBBBBBBBBB', 'key_0123456789abcdef');
      await store.markOpen(a1, 100);
      await store.markOpen(a2, 7);
      await store.markOpen(meta('bat_CCCCCCCCCCCCCCCCCCCCCC', 'key_fedcba9876543210'), 3);
      await blobs.put('batches/open/key_0123456789abcdef/deeper/bat_D.5', '', { contentType: 'text/plain' });
      expect(await store.outstanding('key_0123456789abcdef')).toBe(107);
      await store.markClosed(a1);
      expect(await store.outstanding('key_0123456789abcdef')).toBe(7);
      expect(await store.outstanding('key_fedcba9876543210')).toBe(3);
      expect(await store.outstanding('key_nobody')).toBe(0);
      await blobs.delete('batches/open/key_0123456789abcdef/missing.1'); // no error
      await expect(blobs.list('batches/open')).rejects.toThrow(/ending with \//);
    } finally {
      done();
    }
  });
});
