/**
 * SendMessageBatch for messages sent at about the same moment. A preview submits its jobs in a
 * few runs that start together (the card's image, its icon candidates and the page's versions:
 * lib/preview/preview-link.ts), each once its own inputs are ready. Sent one run at a time they take one
 * SendMessageBatch each, and the event source mapping hands each batch to its own worker
 * invocation. Here the messages of every run that reaches the send in the same turn of the event
 * loop (before `setImmediate`) go out together, per queue, in batches of at most ten messages and
 * 1 MiB: one request, and one worker invocation that runs them side by side. A run whose inputs
 * needed I/O first (a large input stored in S3) simply comes in a later turn.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Log } from '../../log.js';
import { SQS_MAX_MESSAGE_BYTES } from './job-message.js';

/** At most ten messages in a batch (SQS's limit). */
const BATCH = 10;
/** Room left in a batch for what SQS counts beside the bodies. */
export const MESSAGE_MARGIN = 1024;

interface Pending {
  body: string;
  /** For the log: which job the message carries. */
  label: string;
  resolve(): void;
  reject(err: Error): void;
}

export class MessageBatcher {
  private pending = new Map<string, Pending[]>();
  private scheduled = false;

  constructor(
    private readonly sqs: SQSClient,
    private readonly log?: Log,
  ) {}

  /** Resolves once the message is queued; rejects with why it was not. */
  send(queueUrl: string, body: string, label: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.pending.get(queueUrl) ?? [];
      list.push({ body, label, resolve, reject });
      this.pending.set(queueUrl, list);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    for (const [url, list] of all) for (const batch of batches(list)) void this.sendBatch(url, batch);
  }

  private async sendBatch(queueUrl: string, batch: Pending[]): Promise<void> {
    try {
      const out = await this.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((m, i) => ({ Id: String(i), MessageBody: m.body })) }),
      );
      const answered = new Set<number>();
      for (const ok of out.Successful ?? []) {
        answered.add(Number(ok.Id));
        batch[Number(ok.Id)]?.resolve();
      }
      for (const bad of out.Failed ?? []) {
        answered.add(Number(bad.Id));
        batch[Number(bad.Id)]?.reject(new Error(`${bad.Code ?? 'error'} ${bad.Message ?? ''}`.trim()));
      }
      batch.forEach((m, i) => {
        if (!answered.has(i)) m.reject(new Error('no answer for the message'));
      });
    } catch (err) {
      this.log?.error('SendMessageBatch failed', { error: (err as Error).message, jobs: batch.map((m) => m.label) });
      for (const m of batch) m.reject(err as Error);
    }
  }
}

/** The messages in order, cut into batches of at most BATCH messages and SQS's 1 MiB. */
function batches(list: Pending[]): Pending[][] {
  const out: Pending[][] = [];
  let batch: Pending[] = [];
  let bytes = 0;
  for (const m of list) {
    const size = Buffer.byteLength(m.body);
    if (batch.length === BATCH || (batch.length > 0 && bytes + size > SQS_MAX_MESSAGE_BYTES - MESSAGE_MARGIN)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(m);
    bytes += size;
  }
  if (batch.length) out.push(batch);
  return out;
}
