/**
 * S3- and SQS-protocol servers on loopback for the AWS adapter tests: s3rver and fauxqs (started
 * through buildApp() and bound to 127.0.0.1, never 0.0.0.0), with SDK v3 clients pointed at them
 * with fake credentials. Also a small poller that plays the Lambda SQS event source: it receives
 * messages, hands them to a worker handler as a real SQS event, and deletes what succeeded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

const REGION = 'us-east-1';
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface Emulators {
  s3: S3Client;
  sqs: SQSClient;
  bucket: string;
  queueUrl: string;
  queueArn: string;
  close(): Promise<void>;
}

export async function startEmulators(bucket = 'linklens-test'): Promise<Emulators> {
  process.env.AWS_REGION ??= REGION;
  process.env.AWS_ACCESS_KEY_ID ??= credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= credentials.secretAccessKey;
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-s3rver-'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('s3rver');
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
  const s3Address = (await s3rver.run()) as AddressInfo;
  const s3 = new S3Client({ endpoint: `http://127.0.0.1:${s3Address.port}`, forcePathStyle: true, region: REGION, credentials });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));

  const { buildApp } = await import('fauxqs');
  // `host` makes the queue URLs `http://sqs.<region>.127.0.0.1:<port>/…`, which no URL parser takes (a last
  // label that is a number is an IPv4 address). That is on purpose: the SQS client's queue-URL-as-endpoint
  // step cannot parse it and keeps the client's own endpoint (each function's meter proxy in the rehearsal).
  // A valid host (`localhost`) would send every call to `sqs.<region>.localhost`, which does not resolve.
  // Real SQS names `https://sqs.<region>.amazonaws.com/…`; our code matches queue URLs, never parses them.
  const app = buildApp({ logger: false, host: '127.0.0.1', defaultRegion: REGION });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const sqsPort = (app.server.address() as AddressInfo).port;
  const sqs = new SQSClient({ endpoint: `http://127.0.0.1:${sqsPort}`, region: REGION, credentials });
  const q = await sqs.send(new CreateQueueCommand({ QueueName: 'linklens-jobs', Attributes: { VisibilityTimeout: '30' } }));
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.QueueUrl, AttributeNames: ['QueueArn'] }));

  return {
    s3,
    sqs,
    bucket,
    queueUrl: q.QueueUrl!,
    queueArn: attrs.Attributes?.QueueArn ?? `arn:aws:sqs:${REGION}:000000000000:linklens-jobs`,
    async close() {
      s3.destroy();
      sqs.destroy();
      await app.close();
      await s3rver.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The event Lambda's SQS event source hands a function for received messages. */
export function sqsEvent(messages: Message[], queueArn: string, region = REGION): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: m.Attributes?.SenderId ?? 'AIDAEXAMPLE',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: region,
    })),
  };
}

export type WorkerFn = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface Poller {
  /** Messages received so far (each delivery counts). */
  readonly received: number;
  /** Events handed to the worker. */
  readonly events: SQSEvent[];
  stop(): Promise<void>;
}

/** Plays the Lambda event source mapping: receive (long poll), invoke the worker, delete what succeeded. */
export function startPoller(em: Emulators, worker: WorkerFn, options: { batchSize?: number } = {}): Poller {
  let running = true;
  let received = 0;
  const events: SQSEvent[] = [];
  const loop = (async () => {
    while (running) {
      const out = await em.sqs
        .send(
          new ReceiveMessageCommand({
            QueueUrl: em.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
          }),
        )
        .catch(() => ({ Messages: [] }));
      const messages = out.Messages ?? [];
      if (!running || messages.length === 0) continue;
      received += messages.length;
      const event = sqsEvent(messages, em.queueArn);
      events.push(event);
      const res = await worker(event);
      const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
      const done = messages.filter((m) => !failed.has(m.MessageId!));
      if (done.length) {
        await em.sqs.send(
          new DeleteMessageBatchCommand({ QueueUrl: em.queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
        );
      }
    }
  })();
  return {
    get received() {
      return received;
    },
    events,
    /** Stops receiving; waits for the batch in hand, but not for a worker that never answers (a "killed" one). */
    async stop() {
      running = false;
      await Promise.race([loop, new Promise((r) => setTimeout(r, 2500).unref())]);
    },
  };
}
