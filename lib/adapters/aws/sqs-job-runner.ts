import { setTimeout } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { required } from '../../errors.js';
import type { RouteHint } from '../../fetch/proxy-route.js';
import { validParts } from '../../jobs/context.js';
import type { JobKind } from '../../jobs/kinds.js';
import { type JobSpecs, type JobWorker, jobSpec } from '../../jobs/specs.js';
import type { Log } from '../../log.js';
import type { BlobStore, Job, JobOutcome, JobRunner, RunOptions } from '../../ports.js';
import { inputKey, resultKey } from '../../storage-keys.js';
import { encodeJson, JOB_MESSAGE_VERSION, type JobMessage, type JobResultObject, parseJobResult, SQS_MAX_MESSAGE_BYTES } from './job-message.js';
import { MESSAGE_MARGIN, MessageBatcher } from './message-batcher.js';
import type { ReplyInbox } from './reply-queue.js';

export interface SqsJobRunnerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** The queue of each worker other than the job worker (the browser worker's), by worker; a kind goes to its spec's worker (lib/jobs/specs.ts), else to `queueUrl`. */
  queueUrlByWorker?: Partial<Record<JobWorker, string>>;
  /** The kinds' descriptors (default: the service's); a test adds its own kind. */
  specs?: JobSpecs;
  /** Where the worker writes results (`jobs/<requestId>/<jobId>.json`) and large inputs are stored. */
  blobs: BlobStore;
  /**
   * The latest moment (epoch ms) this invocation may wait until, whatever RunOptions.deadline says:
   * the invocation budget inside API Gateway's 29 s limit (see functions/preview.ts).
   */
  hardDeadline?: () => number | undefined;
  /**
   * This container's reply queue (lib/adapters/aws/reply-queue.ts): the workers send each result
   * there and this runner long-polls it. Without one (or while it cannot be made), results are
   * polled in S3 (PollSchedule).
   */
  replies?: ReplyInbox;
  /** How each job's result is polled for in S3 when there is no reply queue (ms): see PollSchedule. */
  poll?: PollSchedule;
  /** Inputs whose message would be larger than this go to S3 (SQS allows 1 MiB per message and per batch). */
  maxInlineBytes?: number;
  log?: Log;
  /** Called once per run with what happened (metrics in the Lambda). */
  onRun?: (summary: RunSummary) => void;
}

export interface RunSummary {
  requestId: string;
  jobs: number;
  done: number;
  failed: number;
  late: number;
  notQueued: number;
  /** From the first send to the last result (or the deadline). */
  waitMs: number;
  /**
   * For each result read: how long after the worker finished the job (its `finishedAt`) this
   * runner read it, in ms: the worker's SendMessage (or S3 PUT) and the receive (or the wait for
   * the next poll and the GET). The clocks are the two Lambdas' (kept in sync by AWS's time service).
   */
  resultDelayMs: number[];
  /** How the results came: from the reply queue, or polled in S3. */
  pickup: 'reply-queue' | 's3';
}

/**
 * When a job's result is looked for: first `firstPollMs[kind]`, else its kind's `firstPollMs`
 * (lib/jobs/specs.ts), else `initialMs` after the jobs are
 * sent, then after each miss a delay that grows by `factor` up to `maxMs`. A result is seen on
 * average half a poll interval after it is written (plus the GET), so the cap sets the delay; each
 * poll is one S3 GET ($0.0004 per 1,000): a job of 2 s costs about 50 GETs at the 40 ms cap.
 */
export interface PollSchedule {
  initialMs?: number;
  factor?: number;
  maxMs?: number;
  /** The first poll of a kind that never finishes sooner (a screenshot: a browser page load), over its spec's `firstPollMs`. */
  firstPollMs?: Partial<Record<JobKind, number>>;
}

/**
 * With a reply queue, the S3 fallback (a reply the worker could not send: its result is in S3)
 * looks for late results once half-way to the deadline and once this long before it; not at all
 * in a wait shorter than REPLY_FALLBACK_MIN_MS.
 */
export const REPLY_FALLBACK_LEAD_MS = 750;
const REPLY_FALLBACK_MIN_MS = 500;

export const DEFAULT_POLL: Required<PollSchedule> = {
  initialMs: 20,
  factor: 1.5,
  maxMs: 40,
  firstPollMs: {},
};

/**
 * The JobRunner on AWS: a fan-out with a synchronous wait. Jobs go to SQS with SendMessageBatch
 * (one versioned JSON message each; the messages of runs started together share batches:
 * lib/adapters/aws/message-batcher.ts); the worker Lambdas run them with the same job code as the
 * local runner and send each result to this container's reply queue (or write it to S3, where
 * this runner polls for it: PollSchedule) until they are all there or the deadline passes. A job
 * that failed, could not be queued or is late is reported as failed, and the record goes out
 * without it.
 */
export class SqsJobRunner implements JobRunner {
  private readonly poll: Required<PollSchedule>;
  private readonly maxInlineBytes: number;
  private readonly specs: JobSpecs;
  private readonly batcher: MessageBatcher;

  constructor(private readonly options: SqsJobRunnerOptions) {
    this.batcher = new MessageBatcher(options.sqs, options.log);
    this.poll = { ...DEFAULT_POLL, ...options.poll };
    this.specs = options.specs ?? jobSpec;
    this.maxInlineBytes = Math.min(options.maxInlineBytes ?? SQS_MAX_MESSAGE_BYTES - MESSAGE_MARGIN, SQS_MAX_MESSAGE_BYTES - MESSAGE_MARGIN);
  }

  async run<K extends JobKind>(jobs: Job<K>[], runOptions: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    const outcomes = new Map<string, JobOutcome<K>>();
    if (jobs.length === 0) return outcomes;
    const t0 = performance.now();
    const hard = this.options.hardDeadline?.();
    const deadline = Math.min(runOptions.deadline, hard ?? Infinity);
    const { requestId } = runOptions;
    const fail = (id: string, error: string) => outcomes.set(id, { id, ok: false, error, ms: performance.now() - t0 });

    const seen = new Set<string>();
    for (const job of jobs) {
      if (seen.has(job.id)) throw new Error(`Duplicate job id in one run: ${job.id}`);
      seen.add(job.id);
    }

    // 1. Send, each message naming this container's reply queue when it has one.
    const queued = new Set<string>();
    const replyTo = Date.now() < deadline ? await this.options.replies?.address() : undefined;
    if (Date.now() < deadline) {
      const messages = await Promise.all(
        jobs.map((job) =>
          this.message(job, { requestId, deadline, route: runOptions.route?.hint(), replyTo }).catch((err: Error) => {
            fail(job.id, `not queued: ${err.message}`);
            return undefined;
          }),
        ),
      );
      const ready = messages.filter((m): m is { job: Job; body: string } => m !== undefined);
      // Each to its worker's queue (most jobs go to the job queue; browser jobs to the browser worker's).
      await Promise.all(
        ready.map(({ job, body }) => {
          const worker = this.specs(job.kind)?.worker;
          const url = (worker && this.options.queueUrlByWorker?.[worker]) || this.options.queueUrl;
          return this.batcher.send(url, body, job.id).then(
            () => void queued.add(job.id),
            (err: Error) => fail(job.id, `not queued: ${err.message}`),
          );
        }),
      );
    }
    for (const job of jobs) if (!queued.has(job.id) && !outcomes.has(job.id)) fail(job.id, 'deadline exceeded before queueing');

    // 2. Wait: for the replies, or poll S3 for each result on its own schedule (PollSchedule), up to the deadline.
    const kinds = new Map(jobs.map((j) => [j.id, j.kind]));
    const resultDelayMs: number[] = [];
    const settle = (id: string, r: JobResultObject) => {
      const finished = Date.parse(r.finishedAt);
      if (Number.isFinite(finished)) resultDelayMs.push(Math.max(0, Date.now() - finished));
      const ms = performance.now() - t0;
      // The worker stored the result of the job's own kind (its handler's, lib/jobs/registry.ts).
      const parts = r.ok ? validParts(r.parts) : undefined;
      outcomes.set(
        id,
        r.ok
          ? ({ id, kind: kinds.get(id), ok: true, result: r.result, ms, ...(parts ? { parts } : {}) } as JobOutcome<K>)
          : { id, ok: false, error: r.error, ms },
      );
    };
    const waiting = jobs.filter((j) => queued.has(j.id) && !outcomes.has(j.id));
    const pending = replyTo ? await this.collectReplies(requestId, waiting, deadline, settle) : await this.pollResults(requestId, waiting, deadline, settle);
    for (const id of pending.keys()) fail(id, 'deadline exceeded');

    const summary: RunSummary = {
      requestId,
      jobs: jobs.length,
      done: [...outcomes.values()].filter((o) => o.ok).length,
      failed: [...outcomes.values()].filter((o) => !o.ok).length,
      late: pending.size,
      pickup: replyTo ? 'reply-queue' : 's3',
      notQueued: jobs.length - queued.size,
      waitMs: Math.round(performance.now() - t0),
      resultDelayMs,
    };
    this.options.log?.info('jobs settled', { ...summary });
    this.options.onRun?.(summary);
    // Keep the caller's order.
    return new Map(jobs.map((j) => [j.id, required(outcomes.get(j.id), `the outcome of job ${j.id}`)]));
  }

  /**
   * The replies of `jobs` from the reply queue; a result too large for a message is read from S3
   * where the worker stored it. Returns the ids still without a result at the deadline.
   */
  private async collectReplies(requestId: string, jobs: Job[], deadline: number, settle: (id: string, r: JobResultObject) => void): Promise<Set<string>> {
    const pending = new Set(jobs.map((j) => j.id));
    const reads: Promise<void>[] = [];
    const inbox = required(this.options.replies, 'the reply queue');
    // A worker whose reply could not be sent stores the result in S3 instead: looked for there too,
    // for the jobs still without a reply, half-way to the deadline and just before it.
    const stop = new AbortController();
    const fallback = this.s3Fallback({ requestId, pending, deadline, settle, stop });
    await inbox.wait(requestId, pending, { deadline, signal: stop.signal }, (reply) => {
      if (!pending.has(reply.jobId)) return; // found in S3 already
      if (!('resultKey' in reply)) {
        pending.delete(reply.jobId);
        settle(reply.jobId, reply);
        return;
      }
      reads.push(
        this.options.blobs
          .get(resultKey(requestId, reply.jobId))
          .then((text) => {
            const r = text && parseJobResult(text.toString('utf8'));
            if (!r) throw new Error('stored result missing');
            pending.delete(reply.jobId);
            settle(reply.jobId, r);
          })
          .catch((err: Error) => this.options.log?.warn('job result read failed', { requestId, jobId: reply.jobId, error: err.message })),
      );
    });
    stop.abort();
    await Promise.all([fallback, ...reads]);
    return pending;
  }

  /**
   * Looks in S3 for the results of the jobs still `pending` at two times: half-way to the
   * deadline, and REPLY_FALLBACK_LEAD_MS before it (at most two GETs per late job, none for a job
   * that replied). Settles what it finds; when nothing is pending any more it stops the wait.
   */
  private async s3Fallback(late: {
    requestId: string;
    pending: Set<string>;
    deadline: number;
    settle: (id: string, r: JobResultObject) => void;
    stop: AbortController;
  }): Promise<void> {
    const { requestId, pending, deadline, settle, stop } = late;
    const start = Date.now();
    const times = [start + (deadline - start) / 2, deadline - REPLY_FALLBACK_LEAD_MS].filter((t) => t - start >= REPLY_FALLBACK_MIN_MS);
    for (const at of times) {
      try {
        await sleep(Math.max(0, at - Date.now()), stop.signal);
      } catch {
        return; // the wait ended
      }
      await Promise.all(
        [...pending].map(async (id) => {
          const text = await this.options.blobs.get(resultKey(requestId, id)).catch(() => undefined);
          const r = text && parseJobResult(text.toString('utf8'));
          if (!r || !pending.has(id)) return;
          pending.delete(id);
          this.options.log?.warn('job result found in S3: its reply never came', { requestId, jobId: id });
          settle(id, r);
        }),
      );
      if (pending.size === 0) {
        stop.abort();
        return;
      }
    }
  }

  /** Polls S3 for each result of `jobs` on its own schedule until the deadline; returns the ids still without one. */
  private async pollResults(requestId: string, jobs: Job[], deadline: number, settle: (id: string, r: JobResultObject) => void): Promise<Set<string>> {
    const sent = Date.now();
    const pending = new Map(
      jobs.map((j) => {
        const first = this.poll.firstPollMs[j.kind] ?? this.specs(j.kind)?.firstPollMs ?? this.poll.initialMs;
        return [j.id, { key: resultKey(requestId, j.id), at: sent + first, delay: Math.min(first, this.poll.maxMs) }];
      }),
    );
    while (pending.size > 0) {
      const next = Math.min(...[...pending.values()].map((p) => p.at));
      const wait = Math.min(next, deadline) - Date.now();
      if (wait > 0) await sleep(wait);
      const now = Date.now();
      // At the deadline, one last look for every result still missing.
      const last = now >= deadline;
      await Promise.all(
        [...pending]
          .filter(([, p]) => last || p.at <= now)
          .map(async ([id, p]) => {
            p.delay = Math.min(p.delay * this.poll.factor, this.poll.maxMs);
            p.at = now + p.delay;
            let text: Buffer | undefined;
            try {
              text = await this.options.blobs.get(p.key);
            } catch (err) {
              this.options.log?.warn('job result read failed', { requestId, jobId: id, error: (err as Error).message });
              return;
            }
            const r = text && parseJobResult(text.toString('utf8'));
            if (!r) return;
            pending.delete(id);
            settle(id, r);
          }),
      );
      if (last) break;
    }
    return new Set(pending.keys());
  }

  /** The message of `job`: its input inline, or stored in S3 (`inputKey`) when the message would be too large. */
  private async message(job: Job, { requestId, deadline, route, replyTo }: MessageOptions): Promise<{ job: Job; body: string }> {
    const base = {
      version: JOB_MESSAGE_VERSION,
      requestId,
      jobId: job.id,
      kind: job.kind,
      deadline,
      // The hosts the preview sent through the proxy, so the worker's fetches to them go there too.
      ...(route?.proxyHosts.length ? { route } : {}),
      // Where the worker sends the result: this container's reply queue.
      ...(replyTo ? { replyTo } : {}),
    } satisfies Omit<JobMessage, 'input'>;
    const body = encodeJson({ ...base, input: job.input });
    if (Buffer.byteLength(body) <= this.maxInlineBytes) return { job, body };
    const key = inputKey(requestId, job.id);
    await this.options.blobs.put(key, encodeJson(job.input), { contentType: 'application/json', cacheControl: 'no-store' });
    return { job, body: encodeJson({ ...base, inputKey: key }) };
  }
}

/** What a job's message carries beside the job. */
interface MessageOptions {
  requestId: string;
  deadline: number;
  /** The hosts the preview sent through the proxy. */
  route?: RouteHint;
  /** This container's reply queue. */
  replyTo?: string;
}

/** `ms` later; rejects when `signal` aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return setTimeout(ms, undefined, signal ? { signal } : undefined);
}
