/**
 * The job worker's protocol, as the worker Lambdas run it (functions/worker.ts and
 * functions/browser-worker.ts only wire it): an SQS batch of job messages, each run with the same
 * job code as the local runner (lib/jobs/registry.ts) and its result written to
 * `jobs/<requestId>/<jobId>.json` in S3, where the waiting preview function (SqsJobRunner, beside
 * this file) picks it up.
 *
 * - The result goes to the preview container's reply queue (`replyTo`, lib/adapters/aws/reply-queue.ts);
 *   the replies of one request's jobs in the invocation go out together, in one SendMessageBatch,
 *   once the last of them is ready (lib/adapters/aws/reply-group.ts: the preview waits for all of
 *   them anyway). A result larger than a message, or a job without a reply queue, is written to S3
 *   (and the reply says where).
 * - Idempotent: SQS may deliver a message twice. A job whose result object exists (S3 results), or
 *   that this container already answered (replies), is skipped; a duplicate run elsewhere only
 *   repeats a reply nobody waits for, and assets are content-addressed, so a repeated job
 *   overwrites nothing that differs.
 * - A job past its deadline is dropped (nobody waits for it any more); one still running at its
 *   deadline is stopped and its result says DEADLINE_EXCEEDED, as the local runner's does
 *   (lib/jobs/deadline.ts).
 * - A job that throws is a result too (`ok: false`), so the preview stops waiting for it at once.
 * - Only infrastructure failures (a malformed message, S3 unreachable) are reported in
 *   `batchItemFailures` (Powertools' partial batch processor collects them): SQS retries just
 *   those, and after maxReceiveCount they go to the DLQ.
 * - Memory: at most `jobConcurrency` records run at once, and a job starts (and takes the holds
 *   of its larger steps) only while what the running jobs hold fits in the function's memory
 *   (lib/jobs/memory.ts); the others wait their turn within their own deadlines. An
 *   out-of-memory kill would lose the whole batch.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { CoreConfig } from '../../core-settings.js';
import { RouteState, type RouteSummary } from '../../fetch/proxy-route.js';
import { type Fetcher, routedFetcher } from '../../fetch/safe-fetch.js';
import { PriorityGate } from '../../jobs/concurrency-gate.js';
import { type JobContext, partsRecorder } from '../../jobs/context.js';
import { untilDeadline } from '../../jobs/deadline.js';
import { MemoryGate, workerMemoryBudgetMb } from '../../jobs/memory.js';
import { JOB_REGISTRY, type JobRegistry } from '../../jobs/registry.js';
import { jobMemoryMb } from '../../jobs/specs.js';
import type { Log } from '../../log.js';
import type { BlobStore } from '../../ports.js';
import {
  decodeJson,
  encodeJson,
  JOB_MESSAGE_VERSION,
  type JobMessage,
  type JobResultObject,
  parseJobMessage,
  resultKey,
  SQS_MAX_MESSAGE_BYTES,
} from './job-message.js';
import { MessageBatcher } from './message-batcher.js';
import { ReplyGroups, type ReplyMember } from './reply-group.js';
import { isReplyQueueUrl, type JobReply } from './reply-queue.js';

/** The jobs this container answered lately (a redelivered one is skipped), at most this many. */
const ANSWERED_MAX = 2000;

export interface WorkerDeps {
  config: CoreConfig;
  /** Sends the replies (to queues named by LINKPREVIEW_REPLY_QUEUE_PREFIX only); without it every result goes to S3. */
  sqs?: SQSClient;
  fetch: Fetcher;
  blobs: BlobStore;
  log: Log;
  /** Metrics (Powertools in the Lambda). */
  count?: (name: string, value?: number) => void;
  now?: () => number;
  /** The memory admission; default: a gate over `config.functionMemoryMb` (lib/jobs/memory.ts). */
  gate?: MemoryGate;
  /** The kinds it runs (default: the service's, lib/jobs/registry.ts); a test adds its own. */
  registry?: JobRegistry;
  /** Runs one job (default: its kind's handler); tests put stand-ins here. */
  runJob?: (kind: string, input: unknown, ctx: JobContext) => Promise<unknown>;
}

export type RecordOutcome = 'done' | 'failed' | 'duplicate' | 'expired' | 'retry';

/** A record SQS must deliver again, its cause already logged and counted (a malformed message). */
class RetryRecord extends Error {}

export function createWorkerHandler(deps: WorkerDeps) {
  const now = deps.now ?? Date.now;
  const count = deps.count ?? (() => {});
  const registry = deps.registry ?? JOB_REGISTRY;
  const answered = new Set<string>();
  // The replies go out in SendMessageBatch requests, a request's together (./reply-group.ts). Its
  // failures are logged by `deliver` (a swept reply queue is only a warning), not by the batcher.
  const batcher = deps.sqs ? new MessageBatcher(deps.sqs) : undefined;
  // One gate per container: Lambda runs one invocation at a time in it.
  const gate = deps.gate ?? new MemoryGate(workerMemoryBudgetMb(deps.config));
  const runJob =
    deps.runJob ??
    ((kind: string, input: unknown, ctx: JobContext) => {
      const handler = registry.handler(kind);
      if (!handler) throw new Error(`Unknown job kind: ${kind}`);
      return handler(input as never, ctx);
    });

  /** The record's job message, or a RetryRecord for one this worker cannot read. */
  function readRecord(record: SQSRecord): JobMessage | RetryRecord {
    try {
      return parseJobMessage(record.body);
    } catch (err) {
      deps.log.error('invalid job message', { messageId: record.messageId, error: (err as Error).message });
      count('JobMessageInvalid');
      return new RetryRecord((err as Error).message); // poison: retried, then parked in the DLQ for a human to look at
    }
  }

  /**
   * Runs the job and hands its result over: to S3 at once, or as a reply that goes out with those
   * of its siblings (`sent`, awaited outside the job's lane, so a held reply holds no slot).
   */
  async function runRecord(record: SQSRecord, msg: JobMessage, member?: ReplyMember): Promise<{ outcome: RecordOutcome; sent?: Promise<void> }> {
    const ids = {
      requestId: msg.requestId,
      jobId: msg.jobId,
      kind: msg.kind,
      messageId: record.messageId,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    };
    const key = resultKey(msg.requestId, msg.jobId);
    const replyTo = replyQueue(msg);
    if (replyTo ? answered.has(key) : await deps.blobs.has(key)) {
      deps.log.info('job already done, skipped', ids);
      count('JobDuplicate');
      return { outcome: 'duplicate' };
    }
    const left = msg.deadline - now();
    if (left <= 0) {
      deps.log.warn('job past its deadline, dropped', { ...ids, lateMs: -left });
      count('JobExpired');
      return { outcome: 'expired' };
    }

    // Its turn: what the kind holds from its start must fit beside the running jobs.
    const waitStart = performance.now();
    const admission = new AbortController();
    const timer = setTimeout(() => admission.abort(), left);
    let lease: Awaited<ReturnType<MemoryGate['admit']>>;
    try {
      lease = await gate.admit(jobMemoryMb(msg.kind, deps.config, registry.spec), admission.signal);
    } catch {
      deps.log.warn('job past its deadline while waiting for memory, dropped', { ...ids, waitMs: Math.round(performance.now() - waitStart) });
      count('JobExpired');
      return { outcome: 'expired' };
    } finally {
      clearTimeout(timer);
    }
    const waitMs = Math.round(performance.now() - waitStart);
    if (waitMs > 0) count('JobMemoryWait'); // jobs that waited for memory; the wait is in the log line

    const t0 = performance.now();
    // The job's own route, starting from the hosts the preview sent through the proxy.
    const route = new RouteState(msg.route);
    // What the job leaves for after its result (the page versions' remaining images): run below,
    // after the reply, within this invocation and the job's memory lease.
    const deferred: (() => Promise<void>)[] = [];
    const { mark, parts } = partsRecorder();
    const outcome = await untilDeadline(
      msg.deadline,
      async (signal) => {
        try {
          if (!registry.spec(msg.kind)) throw new Error(`Unknown job kind: ${msg.kind}`);
          const input = msg.inputKey !== undefined ? await loadInput(msg.inputKey) : msg.input;
          const defer = (work: () => Promise<void>) => void deferred.push(work);
          return await runJob(msg.kind, input, {
            mark,
            fetch: routedFetcher(deps.fetch, route),
            blobs: deps.blobs,
            config: deps.config,
            signal,
            memory: lease,
            defer,
          });
        } finally {
          if (deferred.length === 0) lease.release();
        }
      },
      { now, waitForWork: true },
    );
    const base = { version: JOB_MESSAGE_VERSION, requestId: msg.requestId, jobId: msg.jobId, kind: msg.kind } as const;
    const ms = Math.round(performance.now() - t0);
    const finishedAt = new Date().toISOString();
    const marked = parts();
    const body: JobResultObject = outcome.ok
      ? { ...base, ok: true, result: outcome.value, ms, finishedAt, ...(marked ? { parts: marked } : {}) }
      : { ...base, ok: false, error: outcome.error, ms, finishedAt };
    const routed: RouteSummary = route.summary();
    // A failure to deliver the result is an infrastructure failure: retried by SQS (processRecord).
    // Counted once the result is delivered (a failed delivery is a JobRetry instead).
    const sent = deliver(key, body, replyTo && member ? { queueUrl: replyTo, member, deadline: msg.deadline } : undefined).then(() => {
      const proxy = routed?.proxied ? { proxied: routed.proxied, walls: routed.walls } : {};
      if (routed?.proxied) count('ProxyFetches', routed.proxied);
      if (routed?.walls.length) count('WallsSeen', routed.walls.length);
      if (body.ok) deps.log.info('job done', { ...ids, ms: body.ms, waitMs, ...proxy });
      else deps.log.warn('job failed', { ...ids, ms: body.ms, waitMs, error: body.error });
      count(body.ok ? 'JobSucceeded' : 'JobFailed');
    });
    sent.catch(() => undefined); // awaited by processRecord
    // The invocation ends only after the deferred work (a frozen Lambda would run none of it).
    if (deferred.length) await finishDeferred(deferred, ids).finally(() => lease.release());
    return { outcome: body.ok ? 'done' : 'failed', sent };
  }

  /** Runs a job's deferred work to its end; a failure there is only logged (the result went out). */
  function finishDeferred(work: (() => Promise<void>)[], ids: { jobId: string; requestId: string }): Promise<void> {
    const t0 = performance.now();
    return Promise.all(work.map((w) => w().catch((err: Error) => deps.log.warn('deferred job work failed', { ...ids, error: err.message })))).then(() => {
      deps.log.info('deferred job work done', { ...ids, ms: Math.round(performance.now() - t0) });
    });
  }

  /** The message's reply queue when it is one of this deployment's and replies can be sent. */
  function replyQueue(msg: JobMessage): string | undefined {
    if (!msg.replyTo || !deps.sqs) return undefined;
    if (isReplyQueueUrl(msg.replyTo, deps.config.replyQueuePrefix)) return msg.replyTo;
    deps.log.warn('job message names a foreign reply queue: the result goes to S3', { requestId: msg.requestId, jobId: msg.jobId });
    return undefined;
  }

  /** The result as a reply (or, too large for one, in S3 with a reply that says where), else in S3. */
  async function deliver(key: string, body: JobResultObject, to: { queueUrl: string; member: ReplyMember; deadline: number } | undefined): Promise<void> {
    const text = encodeJson(body);
    const fits = Buffer.byteLength(text) <= SQS_MAX_MESSAGE_BYTES - 1024;
    if (!to || !fits) await deps.blobs.put(key, text, { contentType: 'application/json', cacheControl: 'no-store' });
    if (!to) return;
    const reply: JobReply = fits ? body : { version: body.version, requestId: body.requestId, jobId: body.jobId, kind: body.kind, resultKey: key };
    try {
      await to.member.reply(fits ? text : encodeJson(reply), `${body.kind} ${body.jobId}`, to.deadline);
    } catch (err) {
      const e = err as Error;
      // The preview's container is gone (its queue swept): nobody waits for this reply.
      if (/NonExistentQueue|QueueDoesNotExist/.test(e.name) || /does not exist/i.test(e.message)) {
        deps.log.warn('reply queue gone: result dropped', { requestId: body.requestId, jobId: body.jobId });
        count('JobReplyDropped');
      } else throw err;
    }
    answered.add(key);
    if (answered.size > ANSWERED_MAX) answered.delete(answered.values().next().value as string);
  }

  async function loadInput(key: string): Promise<unknown> {
    const bytes = await deps.blobs.get(key);
    if (!bytes) throw new Error(`job input ${key} is missing`);
    return decodeJson(bytes.toString('utf8'));
  }

  return async function handler(event: SQSEvent): Promise<SQSBatchResponse & { outcomes: Record<string, RecordOutcome> }> {
    const outcomes: Record<string, RecordOutcome> = {};
    // Powertools starts every record at once; at most jobConcurrency of them run, the card's jobs
    // first and the extras in at most half of the slots (lib/jobs/concurrency-gate.ts).
    const lanes = new PriorityGate(Math.max(1, deps.config.jobConcurrency));
    // Every job that will reply joins its request's group first: a reply waits for its siblings'.
    const records = event.Records ?? [];
    const messages = new Map(records.map((r) => [r, readRecord(r)] as const));
    const groups = batcher && new ReplyGroups(batcher, now);
    const members = new Map<SQSRecord, ReplyMember>();
    for (const [record, msg] of messages) {
      const replyTo = msg instanceof RetryRecord ? undefined : replyQueue(msg);
      if (groups && replyTo && !(msg instanceof RetryRecord)) members.set(record, groups.join(replyTo, msg.requestId));
    }
    const processRecord = async (record: SQSRecord): Promise<RecordOutcome> => {
      const member = members.get(record);
      try {
        const msg = messages.get(record) ?? readRecord(record);
        if (msg instanceof RetryRecord) throw msg;
        const priority = registry.spec(msg.kind)?.priority ?? 'card';
        const { outcome, sent } = await lanes.run(priority, () => runRecord(record, msg, member));
        if (sent) await sent;
        else member?.leave();
        outcomes[record.messageId] = outcome;
        return outcome;
      } catch (err) {
        member?.leave();
        outcomes[record.messageId] = 'retry';
        if (!(err instanceof RetryRecord)) {
          deps.log.error('job record failed, will be retried', { messageId: record.messageId, error: (err as Error).message });
          count('JobRetry');
        }
        throw err; // a batch item failure
      }
    };
    // A batch where every record failed is answered like any other (all of them in batchItemFailures), not thrown.
    const { batchItemFailures } = await processPartialResponse({ Records: records }, processRecord, new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
    });
    return { batchItemFailures: [...batchItemFailures], outcomes };
  };
}
