/**
 * The worker Lambda: an SQS event source runs the jobs the preview function fanned out, with the
 * same job code as the local runner (lib/jobs/registry.ts), and writes each result to
 * `jobs/<requestId>/<jobId>.json` in S3, where the waiting preview function picks it up.
 *
 * - Idempotent: SQS may deliver a message twice. A job whose result object exists is skipped;
 *   assets are content-addressed, so a repeated job overwrites nothing that differs.
 * - A job past its deadline is dropped (nobody waits for it any more).
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
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import {
  decodeJson,
  encodeJson,
  InvalidJobMessage,
  JOB_MESSAGE_VERSION,
  type JobMessage,
  type JobResultObject,
  parseJobMessage,
  resultKey,
} from '../lib/adapters/aws/job-message.js';
import { type Config, loadConfig } from '../lib/config.js';
import { openGuardWarning } from '../lib/fetch/address-guard.js';
import { RouteState, type RouteSummary } from '../lib/fetch/proxy-route.js';
import { type Fetcher, routedFetcher } from '../lib/fetch/safe-fetch.js';
import { ConcurrencyGate } from '../lib/http/overload.js';
import type { JobContext } from '../lib/jobs/context.js';
import { jobMemoryMb, MemoryGate, workerMemoryBudgetMb } from '../lib/jobs/memory.js';
import { isJobKind, jobHandler } from '../lib/jobs/registry.js';
import type { Log } from '../lib/log.js';
import type { BlobStore } from '../lib/ports.js';
import { buildAwsWorkerDeps } from './aws-deps.js';
import { createObservability } from './observability.js';

export interface WorkerDeps {
  config: Config;
  fetch: Fetcher;
  blobs: BlobStore;
  log: Log;
  /** Metrics (Powertools in the Lambda). */
  count?: (name: string, value?: number) => void;
  now?: () => number;
  /** The memory admission; default: a gate over `config.functionMemoryMb` (lib/jobs/memory.ts). */
  gate?: MemoryGate;
  /** Runs one job (default: its handler in lib/jobs/registry.ts); tests put stand-ins here. */
  runJob?: (kind: string, input: unknown, ctx: JobContext) => Promise<unknown>;
}

export type RecordOutcome = 'done' | 'failed' | 'duplicate' | 'expired' | 'retry';

/** A record SQS must deliver again, its cause already logged and counted (a malformed message). */
class RetryRecord extends Error {}

export function createWorkerHandler(deps: WorkerDeps) {
  const now = deps.now ?? Date.now;
  const count = deps.count ?? (() => {});
  // One gate per container: Lambda runs one invocation at a time in it.
  const gate = deps.gate ?? new MemoryGate(workerMemoryBudgetMb(deps.config));
  const runJob = deps.runJob ?? ((kind: string, input: unknown, ctx: JobContext) => jobHandler(kind as never)(input as never, ctx));

  async function runRecord(record: SQSRecord): Promise<RecordOutcome> {
    let msg: JobMessage;
    try {
      msg = parseJobMessage(record.body);
    } catch (err) {
      deps.log.error('invalid job message', { messageId: record.messageId, error: (err as Error).message });
      count('JobMessageInvalid');
      throw new RetryRecord((err as Error).message); // poison: retried, then parked in the DLQ for a human to look at
    }
    const ids = {
      requestId: msg.requestId,
      jobId: msg.jobId,
      kind: msg.kind,
      messageId: record.messageId,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    };
    const key = resultKey(msg.requestId, msg.jobId);
    if (await deps.blobs.has(key)) {
      deps.log.info('job already done, skipped', ids);
      count('JobDuplicate');
      return 'duplicate';
    }
    const left = msg.deadline - now();
    if (left <= 0) {
      deps.log.warn('job past its deadline, dropped', { ...ids, lateMs: -left });
      count('JobExpired');
      return 'expired';
    }

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), left);
    // Its turn: what the kind holds from its start must fit beside the running jobs.
    const waitStart = performance.now();
    let lease: Awaited<ReturnType<MemoryGate['admit']>>;
    try {
      lease = await gate.admit(isJobKind(msg.kind) ? jobMemoryMb(msg.kind, deps.config) : 0, controller.signal);
    } catch {
      clearTimeout(timer);
      deps.log.warn('job past its deadline while waiting for memory, dropped', { ...ids, waitMs: Math.round(performance.now() - waitStart) });
      count('JobExpired');
      return 'expired';
    }
    const waitMs = Math.round(performance.now() - waitStart);
    if (waitMs > 0) count('JobMemoryWait'); // jobs that waited for memory; the wait is in the log line

    const t0 = performance.now();
    let body: JobResultObject;
    let routed: RouteSummary | undefined;
    const base = { version: JOB_MESSAGE_VERSION, requestId: msg.requestId, jobId: msg.jobId, kind: msg.kind } as const;
    try {
      if (!isJobKind(msg.kind)) throw new Error(`Unknown job kind: ${msg.kind}`);
      const input = msg.inputKey !== undefined ? await loadInput(msg.inputKey) : msg.input;
      // The job's own route, starting from the hosts the preview sent through the proxy.
      const route = new RouteState(msg.route);
      const fetch = routedFetcher(deps.fetch, route);
      const result = await runJob(msg.kind, input, { fetch, blobs: deps.blobs, config: deps.config, signal: controller.signal, memory: lease });
      body = { ...base, ok: true, result, ms: Math.round(performance.now() - t0), finishedAt: new Date().toISOString() };
      routed = route.summary();
    } catch (err) {
      if (err instanceof InvalidJobMessage) throw err;
      body = {
        ...base,
        ok: false,
        // The controller aborts only at the job's deadline: say so, as the preview's runner does.
        error: controller.signal.aborted ? 'deadline exceeded' : (err as Error).message || 'job failed',
        ms: Math.round(performance.now() - t0),
        finishedAt: new Date().toISOString(),
      };
    } finally {
      clearTimeout(timer);
      lease.release();
    }
    // A failure to write the result is an infrastructure failure: retried by SQS.
    await deps.blobs.put(key, encodeJson(body), { contentType: 'application/json', cacheControl: 'no-store' });
    const proxy = routed?.proxied ? { proxied: routed.proxied, walls: routed.walls } : {};
    if (routed?.proxied) count('ProxyFetches', routed.proxied);
    if (routed?.walls.length) count('WallsSeen', routed.walls.length);
    if (body.ok) deps.log.info('job done', { ...ids, ms: body.ms, waitMs, ...proxy });
    else deps.log.warn('job failed', { ...ids, ms: body.ms, waitMs, error: body.error });
    count(body.ok ? 'JobSucceeded' : 'JobFailed');
    return body.ok ? 'done' : 'failed';
  }

  async function loadInput(key: string): Promise<unknown> {
    const bytes = await deps.blobs.get(key);
    if (!bytes) throw new Error(`job input ${key} is missing`);
    return decodeJson(bytes.toString('utf8'));
  }

  return async function handler(event: SQSEvent): Promise<SQSBatchResponse & { outcomes: Record<string, RecordOutcome> }> {
    const outcomes: Record<string, RecordOutcome> = {};
    // Powertools starts every record at once; at most jobConcurrency of them run, in their order.
    const lanes = new ConcurrencyGate(Math.max(1, deps.config.jobConcurrency), Number.POSITIVE_INFINITY);
    const processRecord = async (record: SQSRecord): Promise<RecordOutcome> => {
      try {
        outcomes[record.messageId] = await lanes.run(() => runRecord(record));
        return outcomes[record.messageId];
      } catch (err) {
        outcomes[record.messageId] = 'retry';
        if (!(err instanceof RetryRecord)) {
          deps.log.error('job record failed, will be retried', { messageId: record.messageId, error: (err as Error).message });
          count('JobRetry');
        }
        throw err; // a batch item failure
      }
    };
    // A batch where every record failed is answered like any other (all of them in batchItemFailures), not thrown.
    const { batchItemFailures } = await processPartialResponse({ Records: event.Records ?? [] }, processRecord, new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
    });
    return { batchItemFailures: [...batchItemFailures], outcomes };
  };
}

let built: ((event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>) | undefined;

/** The worker handler on the AWS adapters with Powertools (logs, metrics, traces); shared by the screenshot worker. */
export function instrumentedWorker(service: string, config: Config) {
  const obs = createObservability(service, config);
  const opened = openGuardWarning(config);
  if (opened) obs.log.warn(opened);
  const s3 = obs.tracer.captureAWSv3Client(new S3Client({}));
  const deps = buildAwsWorkerDeps({ config, log: obs.log, s3 });
  const inner = createWorkerHandler({ ...deps, count: obs.count });
  return middy(async (event: SQSEvent) => {
    const { batchItemFailures } = await inner(event);
    return { batchItemFailures };
  })
    .use(captureLambdaHandler(obs.tracer))
    .use(injectLambdaContext(obs.logger))
    .use(logMetrics(obs.metrics)) as unknown as (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;
}

function build() {
  return instrumentedWorker('linklens-worker', loadConfig(process.env));
}

/** The Lambda entry (functions.worker.handler); the deps are built on the first event of a container. */
export const handler = (event: SQSEvent, context: unknown): Promise<SQSBatchResponse> => {
  built ??= build();
  return built(event, context);
};
