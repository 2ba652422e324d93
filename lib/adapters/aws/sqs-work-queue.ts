/**
 * A WorkQueue on SQS (lib/ports.ts), for a batch's items and its webhooks (docs/batches.md):
 *
 * - `SqsWorkQueue.send`: SendMessageBatch, ten at a time, each message with its group as its
 *   `MessageGroupId`. On a standard queue that makes it one of SQS's fair queues: a group with a
 *   backlog (one key's 10,000 links) does not hold back the messages of the others, which SQS
 *   hands out first while the backlog waits. A `delayMs` is the message's DelaySeconds (15 min at most).
 * - `sqsQueueConsumer`: the handler of an event source mapping with partial batch responses. Each
 *   record is one `ReceivedMessage` (its attempt is SQS's ApproximateReceiveCount); `done` deletes
 *   it (Lambda does, for a record not in `batchItemFailures`); a retry sets the record's visibility
 *   to the wait asked for (ChangeMessageVisibility, 12 h at most) and reports it failed, so SQS
 *   hands it out again then; a handler that throws is reported failed and comes back after the
 *   queue's visibility timeout. After the queue's maxReceiveCount, SQS parks it in the
 *   dead-letter queue.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { errorFields, type Log } from '../../log.js';
import type { QueueHandler, QueueMessage, WorkQueue } from '../../ports.js';

/** SQS's longest visibility timeout and longest message delay (seconds). */
const MAX_VISIBILITY_S = 43_200;
const MAX_DELAY_S = 900;
/** SendMessageBatch's entries at most. */
const BATCH_ENTRIES = 10;

/** What a message's body holds on the queue: the port's message, whole. */
interface Envelope<T> {
  id: string;
  group: string;
  body: T;
}

export class SqsWorkQueue<T> implements WorkQueue<T> {
  constructor(private readonly options: { sqs: SQSClient; queueUrl: string }) {}

  async send(messages: readonly QueueMessage<T>[]): Promise<void> {
    for (let i = 0; i < messages.length; i += BATCH_ENTRIES) {
      const entries = messages.slice(i, i + BATCH_ENTRIES);
      const out = await this.options.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: entries.map((m, n) => ({
            Id: String(n),
            MessageBody: JSON.stringify({ id: m.id, group: m.group, body: m.body } satisfies Envelope<T>),
            MessageGroupId: m.group,
            ...(m.delayMs ? { DelaySeconds: Math.min(MAX_DELAY_S, Math.ceil(m.delayMs / 1000)) } : {}),
          })),
        }),
      );
      // An entry refused is an error of the whole send: the caller's request fails, nothing is half-queued silently.
      if (out.Failed?.length)
        throw new Error(`SendMessageBatch refused ${out.Failed.length} of ${entries.length}: ${out.Failed[0].Code} ${out.Failed[0].Message ?? ''}`);
    }
  }
}

export interface ConsumerOptions<T> {
  sqs: SQSClient;
  /** The queue the records come from (their visibility is changed there). */
  queueUrl: string;
  handler: QueueHandler<T>;
  log: Log;
}

/** The handler of an SQS event source mapping (ReportBatchItemFailures) running `handler` on each record, all at once. */
export function sqsQueueConsumer<T>(options: ConsumerOptions<T>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const failed = await Promise.all(event.Records.map((record) => consume(options, record)));
    return { batchItemFailures: event.Records.filter((_, i) => failed[i]).map((r) => ({ itemIdentifier: r.messageId })) };
  };
}

/** One record: true when it is to be handed out again. */
async function consume<T>(options: ConsumerOptions<T>, record: SQSRecord): Promise<boolean> {
  const { log } = options;
  let envelope: Envelope<T>;
  try {
    envelope = JSON.parse(record.body) as Envelope<T>;
    if (typeof envelope?.id !== 'string' || typeof envelope.group !== 'string') throw new Error('no id or group');
  } catch (err) {
    // Nothing will make it readable: dropped, loudly (a message of another version, or not ours).
    log.error('queue message unreadable, dropped', { messageId: record.messageId, ...errorFields(err) });
    return false;
  }
  const attempt = Number(record.attributes?.ApproximateReceiveCount ?? 1);
  try {
    const outcome = await options.handler({ ...envelope, attempt });
    if (outcome === 'done') return false;
    const seconds = Math.max(0, Math.min(MAX_VISIBILITY_S, Math.ceil(outcome.retryInMs / 1000)));
    await options.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: options.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: seconds }));
    return true;
  } catch (err) {
    // Handed out again after the queue's visibility timeout (a retry whose visibility could not be set too).
    log.warn('queue message failed, handed out again later', { messageId: record.messageId, id: envelope.id, attempt, ...errorFields(err) });
    return true;
  }
}
