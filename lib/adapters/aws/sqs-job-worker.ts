/**
 * The job worker's protocol, as the worker Lambdas run it (functions/worker.ts and
 * functions/browser-worker.ts only wire it): an SQS batch of job messages, each run with the same
 * job code as the local runner (lib/jobs/registry.ts), its result sent back to the waiting preview
 * function (SqsJobRunner, beside this file) on that container's reply queue (`replyTo`,
 * lib/adapters/aws/reply-queue.ts). S3 (`jobs/<requestId>/<jobId>.json`, lib/adapters/aws/job-message.ts)
 * carries only a result too large for a message (the reply says where), the result of a job
 * without a usable reply queue (none named, a foreign one, no SQS client), which the preview then
 * polls for, and the result of a reply that could not be sent (logged as an error), which the
 * preview finds there when the reply is late.
 *
 * Each record goes through three steps, module-level functions over the state the worker shares
 * between records (Worker): `admit` (a duplicate is skipped, an expired job dropped, the job waits
 * for memory), `run` (the job under its deadline) and `reply` (the result delivered, counted and
 * logged); `runRecord` chains them and then finishes the job's deferred work.
 *
 * - Replies: those of one request's jobs in the invocation go out together, in one
 *   SendMessageBatch, once the last of them is ready (lib/adapters/aws/reply-group.ts: the preview
 *   waits for all of them anyway).
 * - Idempotent: SQS may deliver a message twice. A job that this container already answered
 *   (replies), or whose result object exists (S3 results), is skipped; a duplicate run elsewhere
 *   only repeats a reply nobody waits for, and assets are content-addressed, so a repeated job
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
import { routedFetcher } from '../../fetch/safe-fetch.js';
import type { Fetcher } from '../../fetch/types.js';
import { PriorityGate } from '../../jobs/concurrency-gate.js';
import { type JobContext, partsRecorder } from '../../jobs/context.js';
import { untilDeadline } from '../../jobs/deadline.js';
import { MemoryGate, workerMemoryBudgetMb } from '../../jobs/memory.js';
import { JOB_REGISTRY, type JobRegistry } from '../../jobs/registry.js';
import { jobMemoryMb } from '../../jobs/specs.js';
import type { Log } from '../../log.js';
import type { BlobStore } from '../../ports.js';
import { resultKey } from '../../storage-keys.js';
import { decodeJson, encodeJson, JOB_MESSAGE_VERSION, type JobMessage, type JobResultObject, parseJobMessage, SQS_MAX_MESSAGE_BYTES } from './job-message.js';
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
  const worker = workerState(deps);
  return function handler(event: SQSEvent): Promise<SQSBatchResponse & { outcomes: Record<string, RecordOutcome> }> {
    return handleBatch(worker, event);
  };
}

/** What the worker's steps share across the records of its container: its deps with their defaults, and the jobs it answered. */
interface Worker {
  deps: WorkerDeps;
  now: () => number;
  count: (name: string, value?: number) => void;
  registry: JobRegistry;
  /** The result keys of the jobs answered lately (at most ANSWERED_MAX). */
  answered: Set<string>;
  batcher?: MessageBatcher;
  gate: MemoryGate;
  runJob: (kind: string, input: unknown, ctx: JobContext) => Promise<unknown>;
}

function workerState(deps: WorkerDeps): Worker {
  const registry = deps.registry ?? JOB_REGISTRY;
  return {
    deps,
    now: deps.now ?? Date.now,
    count: deps.count ?? (() => {}),
    registry,
    answered: new Set<string>(),
    // The replies go out in SendMessageBatch requests, a request's together (./reply-group.ts). Its
    // failures are logged by `deliver` (a swept reply queue is only a warning), not by the batcher.
    batcher: deps.sqs ? new MessageBatcher(deps.sqs) : undefined,
    // One gate per container: Lambda runs one invocation at a time in it.
    gate: deps.gate ?? new MemoryGate(workerMemoryBudgetMb(deps.config)),
    runJob:
      deps.runJob ??
      ((kind: string, input: unknown, ctx: JobContext) => {
        const handler = registry.handler(kind);
        if (!handler) throw new Error(`Unknown job kind: ${kind}`);
        return handler(input as never, ctx);
      }),
  };
}

/** One SQS batch: each record run in its lane, a record that could not be handled reported for SQS to deliver again. */
async function handleBatch(w: Worker, event: SQSEvent): Promise<SQSBatchResponse & { outcomes: Record<string, RecordOutcome> }> {
  const outcomes: Record<string, RecordOutcome> = {};
  // Powertools starts every record at once; at most jobConcurrency of them run, the card's jobs
  // first and the extras in at most half of the slots (lib/jobs/concurrency-gate.ts).
  const lanes = new PriorityGate(Math.max(1, w.deps.config.jobConcurrency));
  // Every job that will reply joins its request's group first: a card's reply waits for its card siblings'.
  const records = event.Records ?? [];
  const messages = new Map(records.map((r) => [r, readRecord(w, r)] as const));
  const groups = w.batcher && new ReplyGroups(w.batcher, w.now);
  const members = new Map<SQSRecord, ReplyMember>();
  for (const [record, msg] of messages) {
    const replyTo = msg instanceof RetryRecord ? undefined : replyQueue(w, msg);
    if (groups && replyTo && !(msg instanceof RetryRecord)) members.set(record, groups.join(replyTo, msg.requestId, w.registry.spec(msg.kind)?.priority));
  }
  const processRecord = async (record: SQSRecord): Promise<RecordOutcome> => {
    const member = members.get(record);
    try {
      const msg = messages.get(record) ?? readRecord(w, record);
      if (msg instanceof RetryRecord) throw msg;
      const priority = w.registry.spec(msg.kind)?.priority ?? 'card';
      const { outcome, sent } = await lanes.run(priority, () => runRecord(w, record, msg, member));
      if (sent) await sent;
      else member?.leave();
      outcomes[record.messageId] = outcome;
      return outcome;
    } catch (err) {
      member?.leave();
      outcomes[record.messageId] = 'retry';
      if (!(err instanceof RetryRecord)) {
        w.deps.log.error('job record failed, will be retried', { messageId: record.messageId, error: (err as Error).message });
        w.count('JobRetry');
      }
      throw err; // a batch item failure
    }
  };
  // A batch where every record failed is answered like any other (all of them in batchItemFailures), not thrown.
  const { batchItemFailures } = await processPartialResponse({ Records: records }, processRecord, new BatchProcessor(EventType.SQS), {
    throwOnFullBatchFailure: false,
  });
  return { batchItemFailures: [...batchItemFailures], outcomes };
}

/** The record's job message, or a RetryRecord for one this worker cannot read. */
function readRecord(w: Worker, record: SQSRecord): JobMessage | RetryRecord {
  try {
    return parseJobMessage(record.body);
  } catch (err) {
    w.deps.log.error('invalid job message', { messageId: record.messageId, error: (err as Error).message });
    w.count('JobMessageInvalid');
    return new RetryRecord((err as Error).message); // poison: retried, then parked in the DLQ for a human to look at
  }
}

/** One record's job, as its steps see it. */
interface RecordJob {
  msg: JobMessage;
  /** What its log lines name it by. */
  ids: { requestId: string; jobId: string; kind: string; messageId: string; receiveCount: number };
  /** Its result's key in S3, also what it is remembered by once answered. */
  key: string;
  /** Its reply queue, when its result goes there (replyQueue). */
  replyTo: string | undefined;
}

type Lease = Awaited<ReturnType<MemoryGate['admit']>>;

/**
 * Runs the job and hands its result over: to S3 at once, or as a reply that goes out with those
 * of its siblings (`sent`, awaited outside the job's lane, so a held reply holds no slot).
 */
async function runRecord(w: Worker, record: SQSRecord, msg: JobMessage, member?: ReplyMember): Promise<{ outcome: RecordOutcome; sent?: Promise<void> }> {
  const job: RecordJob = {
    msg,
    ids: {
      requestId: msg.requestId,
      jobId: msg.jobId,
      kind: msg.kind,
      messageId: record.messageId,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    },
    key: resultKey(msg.requestId, msg.jobId),
    replyTo: replyQueue(w, msg),
  };
  const admitted = await admit(w, job);
  if ('outcome' in admitted) return admitted;
  const ran = await run(w, msg, admitted.lease);
  const sent = reply(w, job, ran, { waitMs: admitted.waitMs, member });
  // The invocation ends only after the deferred work (a frozen Lambda would run none of it).
  if (ran.deferred.length) await finishDeferred(w, ran.deferred, job.ids).finally(() => admitted.lease.release());
  return { outcome: ran.body.ok ? 'done' : 'failed', sent };
}

/** Step one: the job's memory lease once its turn comes, or why it does not run (a duplicate, past its deadline). */
async function admit(w: Worker, job: RecordJob): Promise<{ outcome: RecordOutcome } | { lease: Lease; waitMs: number }> {
  const { msg, ids, key } = job;
  if (job.replyTo ? w.answered.has(key) : await w.deps.blobs.has(key)) {
    w.deps.log.info('job already done, skipped', ids);
    w.count('JobDuplicate');
    return { outcome: 'duplicate' };
  }
  // Past its deadline, or too close to it for its kind to be worth starting (a browser job's page
  // load): dropped at once, and so is one whose wait for memory lasts until then.
  const left = msg.deadline - w.now() - (w.registry.spec(msg.kind)?.minRunMs ?? 0);
  if (left <= 0) {
    w.deps.log.warn('job past its deadline, dropped', { ...ids, lateMs: -left });
    w.count('JobExpired');
    return { outcome: 'expired' };
  }
  // Its turn: what the kind holds from its start must fit beside the running jobs.
  const waitStart = performance.now();
  const admission = new AbortController();
  const timer = setTimeout(() => admission.abort(), left);
  let lease: Lease;
  try {
    lease = await w.gate.admit(jobMemoryMb(msg.kind, w.deps.config, w.registry.spec), admission.signal);
  } catch {
    w.deps.log.warn('job past its deadline while waiting for memory, dropped', { ...ids, waitMs: Math.round(performance.now() - waitStart) });
    w.count('JobExpired');
    return { outcome: 'expired' };
  } finally {
    clearTimeout(timer);
  }
  const waitMs = Math.round(performance.now() - waitStart);
  if (waitMs > 0) w.count('JobMemoryWait'); // jobs that waited for memory; the wait is in the log line
  return { lease, waitMs };
}

/** A job run: its result, the route its fetches took, and the work it left for after its result. */
interface JobRun {
  body: JobResultObject;
  route: RouteSummary;
  deferred: (() => Promise<void>)[];
}

/** Step two: the job under its deadline (the lease is released here unless work was deferred). */
async function run(w: Worker, msg: JobMessage, lease: Lease): Promise<JobRun> {
  const t0 = performance.now();
  // The job's own route, starting from the hosts the preview sent through the proxy.
  const route = new RouteState(msg.route);
  // What the job leaves for after its result (the page versions' build): run by
  // runRecord, after the reply, within this invocation and the job's memory lease.
  const deferred: (() => Promise<void>)[] = [];
  const { mark, parts } = partsRecorder();
  const outcome = await untilDeadline(
    msg.deadline,
    async (signal) => {
      try {
        if (!w.registry.spec(msg.kind)) throw new Error(`Unknown job kind: ${msg.kind}`);
        const input = msg.inputKey !== undefined ? await loadInput(w, msg.inputKey) : msg.input;
        const defer = (work: () => Promise<void>) => void deferred.push(work);
        return await w.runJob(msg.kind, input, {
          mark,
          fetch: routedFetcher(w.deps.fetch, route),
          blobs: w.deps.blobs,
          config: w.deps.config,
          signal,
          memory: lease,
          defer,
        });
      } finally {
        if (deferred.length === 0) lease.release();
      }
    },
    { now: w.now, waitForWork: true },
  );
  const base = { version: JOB_MESSAGE_VERSION, requestId: msg.requestId, jobId: msg.jobId, kind: msg.kind } as const;
  const ms = Math.round(performance.now() - t0);
  const finishedAt = new Date().toISOString();
  const marked = parts();
  const body: JobResultObject = outcome.ok
    ? { ...base, ok: true, result: outcome.value, ms, finishedAt, ...(marked ? { parts: marked } : {}) }
    : { ...base, ok: false, error: outcome.error, ms, finishedAt };
  return { body, route: route.summary(), deferred };
}

/**
 * Step three: the result delivered (deliver), then counted and logged. A failure to deliver it is
 * an infrastructure failure: retried by SQS (handleBatch awaits the promise), and counted as a
 * JobRetry instead.
 */
function reply(w: Worker, job: RecordJob, ran: JobRun, how: { waitMs: number; member?: ReplyMember }): Promise<void> {
  const { body, route: routed } = ran;
  const { ids, replyTo } = job;
  const to = replyTo && how.member ? { queueUrl: replyTo, member: how.member, deadline: job.msg.deadline } : undefined;
  const sent = deliver(w, job.key, body, to).then(() => {
    const proxy = routed?.proxied ? { proxied: routed.proxied, walls: routed.walls } : {};
    if (routed?.proxied) w.count('ProxyFetches', routed.proxied);
    if (routed?.walls.length) w.count('WallsSeen', routed.walls.length);
    if (body.ok) w.deps.log.info('job done', { ...ids, ms: body.ms, waitMs: how.waitMs, ...proxy });
    else w.deps.log.warn('job failed', { ...ids, ms: body.ms, waitMs: how.waitMs, error: body.error });
    w.count(body.ok ? 'JobSucceeded' : 'JobFailed');
  });
  sent.catch(() => undefined); // awaited by handleBatch
  return sent;
}

/** Runs a job's deferred work to its end; a failure there is only logged (the result went out). */
function finishDeferred(w: Worker, work: (() => Promise<void>)[], ids: { jobId: string; requestId: string }): Promise<void> {
  const t0 = performance.now();
  return Promise.all(work.map((fn) => fn().catch((err: Error) => w.deps.log.warn('deferred job work failed', { ...ids, error: err.message })))).then(() => {
    w.deps.log.info('deferred job work done', { ...ids, ms: Math.round(performance.now() - t0) });
  });
}

/** The message's reply queue when it is one of this deployment's and replies can be sent. */
function replyQueue(w: Worker, msg: JobMessage): string | undefined {
  if (!msg.replyTo || !w.deps.sqs) return undefined;
  if (isReplyQueueUrl(msg.replyTo, w.deps.config.replyQueuePrefix)) return msg.replyTo;
  w.deps.log.warn('job message names a foreign reply queue: the result goes to S3', { requestId: msg.requestId, jobId: msg.jobId });
  return undefined;
}

/** The result as a reply (or, too large for one, in S3 with a reply that says where), else in S3. */
async function deliver(
  w: Worker,
  key: string,
  body: JobResultObject,
  to: { queueUrl: string; member: ReplyMember; deadline: number } | undefined,
): Promise<void> {
  const text = encodeJson(body);
  const fits = Buffer.byteLength(text) <= SQS_MAX_MESSAGE_BYTES - 1024;
  if (!to || !fits) await w.deps.blobs.put(key, text, { contentType: 'application/json', cacheControl: 'no-store' });
  if (!to) return;
  const reply: JobReply = fits ? body : { version: body.version, requestId: body.requestId, jobId: body.jobId, kind: body.kind, resultKey: key };
  try {
    await to.member.reply(fits ? text : encodeJson(reply), `${body.kind} ${body.jobId}`, to.deadline);
  } catch (err) {
    const e = err as Error;
    // The preview's container is gone (its queue swept): nobody waits for this reply.
    if (/NonExistentQueue|QueueDoesNotExist/.test(e.name) || /does not exist/i.test(e.message)) {
      w.deps.log.warn('reply queue gone: result dropped', { requestId: body.requestId, jobId: body.jobId });
      w.count('JobReplyDropped');
    } else {
      // The reply could not be sent (throttled, the network): the result goes to S3, where the
      // waiting preview looks for a job whose reply is late (SqsJobRunner's S3 fallback). Only
      // when S3 fails too is the record retried.
      w.deps.log.error('reply not sent: result stored in S3', { requestId: body.requestId, jobId: body.jobId, error: e.message, errorName: e.name });
      w.count('JobReplyFailed');
      if (fits) await w.deps.blobs.put(key, text, { contentType: 'application/json', cacheControl: 'no-store' });
    }
  }
  w.answered.add(key);
  if (w.answered.size > ANSWERED_MAX) w.answered.delete(w.answered.values().next().value as string);
}

async function loadInput(w: Worker, key: string): Promise<unknown> {
  const bytes = await w.deps.blobs.get(key);
  if (!bytes) throw new Error(`job input ${key} is missing`);
  return decodeJson(bytes.toString('utf8'));
}
