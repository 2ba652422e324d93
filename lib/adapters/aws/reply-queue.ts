/**
 * Where a preview container picks its job results up on AWS: an SQS queue of its own, created on
 * first use, that the workers send each result to (`replyTo` in the job message). One long-polled
 * ReceiveMessage gives the results as soon as they are sent (up to ten at once), so a result costs
 * the worker's SendMessage and at most one ReceiveMessage, where polling S3 every 20–40 ms cost
 * one GET per poll (about 145 for one page preview).
 *
 * - The queue is the container's alone (Lambda runs one invocation at a time in it; locally, the
 *   runs of one process share it): the replies of every run go through one receive loop that
 *   hands each to the run waiting for it, and drops the late replies of runs gone by.
 * - A received reply is never deleted (that would be one request more): the queue hides it for
 *   12 hours (its visibility timeout) and drops it after a minute (its retention).
 * - Orphans: a container ends without notice, so its queue stays behind. The queue's name carries
 *   its creation time; each new container deletes up to ten queues of its prefix older than
 *   `staleAfterMs` (one ListQueues per container). A live queue deleted that way (a container
 *   older than that) is made again on the next run.
 * - A result too large for a message (1 MiB) is stored in S3 and the reply says where.
 */
import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, ListQueuesCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Log } from '../../log.js';
import { decodeJson, JOB_MESSAGE_VERSION, type JobResultObject } from './job-message.js';

/** A reply: the result itself, or where the worker stored a result too large for a message. */
export type JobReply = JobResultObject | { version: typeof JOB_MESSAGE_VERSION; requestId: string; jobId: string; kind: string; resultKey: string };

export function parseJobReply(text: string): JobReply | undefined {
  try {
    const r = decodeJson<JobReply>(text);
    if (!r || r.version !== JOB_MESSAGE_VERSION || typeof r.requestId !== 'string' || typeof r.jobId !== 'string') return undefined;
    if ('resultKey' in r ? typeof r.resultKey === 'string' : typeof r.ok === 'boolean') return r;
  } catch {
    /* not ours */
  }
  return undefined;
}

/** True when `queueUrl` names a reply queue of `namePrefix` (what a worker checks before replying there). */
export function isReplyQueueUrl(queueUrl: string, namePrefix: string): boolean {
  // Not parsed as a URL: an emulator's host (sqs.<region>.127.0.0.1) is none to WHATWG.
  const m = /^https?:\/\/[^/?#]+\/\d+\/([^/?#]+)$/.exec(queueUrl);
  const name = m?.[1] ?? '';
  return namePrefix !== '' && name.startsWith(namePrefix) && REPLY_NAME.test(name.slice(namePrefix.length));
}

/** `<created, base-36 seconds>-<random>` after the prefix. */
const REPLY_NAME = /^([0-9a-z]{1,10})-[0-9a-f]{12}$/;
/** SQS's longest long poll, in seconds. */
const MAX_WAIT_S = 20;

export interface ReplyInboxOptions {
  sqs: SQSClient;
  /** The names of this deployment's reply queues start with it (at most 60 characters: SQS allows 80). */
  namePrefix: string;
  log?: Log;
  now?: () => number;
  /** Another container's queue older than this is deleted by a new container (default: 12 hours). */
  staleAfterMs?: number;
  /** After a failed CreateQueue, how long the runs go without a reply queue (polling S3) before it is tried again. */
  retryAfterMs?: number;
}

interface Waiter {
  requestId: string;
  pending: Set<string>;
  deadline: number;
  onReply: (reply: JobReply) => void;
  done: () => void;
}

export class ReplyInbox {
  private url: Promise<string | undefined> | undefined;
  private failedAt = Number.NEGATIVE_INFINITY;
  private readonly waiters = new Set<Waiter>();
  private looping = false;
  private readonly now: () => number;
  /** Requests made, by action (for the tests and the cost report's cross-check). */
  readonly requests = { CreateQueue: 0, ReceiveMessage: 0, ListQueues: 0, DeleteQueue: 0 };

  constructor(private readonly options: ReplyInboxOptions) {
    if (options.namePrefix.length > 60 || !/^[A-Za-z0-9_-]+$/.test(options.namePrefix))
      throw new Error(`invalid reply queue prefix ${JSON.stringify(options.namePrefix)}`);
    this.now = options.now ?? Date.now;
  }

  /** This container's reply queue (made on first use), or undefined when it cannot be made now. */
  address(): Promise<string | undefined> {
    if (!this.url) {
      if (this.now() - this.failedAt < (this.options.retryAfterMs ?? 30_000)) return Promise.resolve(undefined);
      this.url = this.create().catch((err: Error) => {
        this.options.log?.warn('reply queue not made: results are polled in S3', { error: err.message });
        this.failedAt = this.now();
        this.url = undefined;
        return undefined;
      });
    }
    return this.url;
  }

  private async create(): Promise<string> {
    const created = Math.floor(this.now() / 1000).toString(36);
    const name = `${this.options.namePrefix}${created}-${randomBytes(6).toString('hex')}`;
    this.requests.CreateQueue++;
    const out = await this.options.sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          // Read replies are hidden until they expire: no DeleteMessage per reply.
          VisibilityTimeout: String(12 * 3600),
          MessageRetentionPeriod: '60',
          MaximumMessageSize: String(1024 * 1024),
          SqsManagedSseEnabled: 'true',
        },
        tags: { 'linklens:role': 'reply-queue' },
      }),
    );
    if (!out.QueueUrl) throw new Error('CreateQueue returned no QueueUrl');
    void this.sweep(name).catch((err: Error) => this.options.log?.warn('stale reply queues not swept', { error: err.message }));
    return out.QueueUrl;
  }

  /** Deletes up to ten reply queues of this prefix older than `staleAfterMs` (never `own`). */
  private async sweep(own: string): Promise<void> {
    this.requests.ListQueues++;
    const list = await this.options.sqs.send(new ListQueuesCommand({ QueueNamePrefix: this.options.namePrefix, MaxResults: 1000 }));
    const staleBefore = this.now() - (this.options.staleAfterMs ?? 12 * 3600_000);
    const stale = (list.QueueUrls ?? []).filter((url) => {
      const name = url.split('/').pop() ?? '';
      const m = REPLY_NAME.exec(name.slice(this.options.namePrefix.length));
      return name !== own && name.startsWith(this.options.namePrefix) && m && Number.parseInt(m[1], 36) * 1000 < staleBefore;
    });
    for (const url of stale.slice(0, 10)) {
      this.requests.DeleteQueue++;
      await this.options.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    }
    if (stale.length) this.options.log?.info('stale reply queues deleted', { deleted: Math.min(10, stale.length), found: stale.length });
  }

  /**
   * Hands each reply to `jobIds` of `requestId` to `onReply` as it arrives; resolves once every one
   * has replied, at `until.deadline`, or when `until.signal` aborts (the results came another
   * way), whichever comes first.
   */
  wait(requestId: string, jobIds: Iterable<string>, until: { deadline: number; signal?: AbortSignal }, onReply: (reply: JobReply) => void): Promise<void> {
    const { deadline, signal } = until;
    const pending = new Set(jobIds);
    if (pending.size === 0 || this.now() >= deadline || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => finish(), Math.max(0, deadline - this.now()));
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        this.waiters.delete(waiter);
        resolve();
      };
      signal?.addEventListener('abort', finish, { once: true });
      const waiter: Waiter = { requestId, pending, deadline, onReply, done: finish };
      this.waiters.add(waiter);
      void this.loop();
    });
  }

  /** One receive loop per inbox, while anyone waits. */
  private async loop(): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      while (this.waiters.size > 0) {
        const url = await this.address();
        if (!url) return; // the runner saw this before sending; nothing can arrive
        // Long-poll at most until the latest deadline of those waiting, so no poll outlives its run by more than a second.
        const latest = Math.max(...[...this.waiters].map((w) => w.deadline));
        const waitS = Math.min(MAX_WAIT_S, Math.max(1, Math.ceil((latest - this.now()) / 1000)));
        let messages: { Body?: string }[] = [];
        try {
          this.requests.ReceiveMessage++;
          const out = await this.options.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitS }));
          messages = out.Messages ?? [];
        } catch (err) {
          const e = err as Error & { name?: string };
          this.options.log?.warn('reply queue receive failed', { error: e.message });
          // The queue is gone (swept as stale): make a new one for the next run.
          if (/NonExistentQueue|QueueDoesNotExist/.test(e.name ?? '') || /does not exist/i.test(e.message)) this.url = undefined;
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        for (const m of messages) {
          const reply = m.Body ? parseJobReply(m.Body) : undefined;
          if (!reply) continue;
          for (const w of this.waiters) {
            if (w.requestId !== reply.requestId || !w.pending.delete(reply.jobId)) continue;
            w.onReply(reply);
            if (w.pending.size === 0) w.done();
            break;
          }
        }
      }
    } finally {
      this.looping = false;
    }
  }
}
