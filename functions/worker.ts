/**
 * The worker Lambda: an SQS event source runs the jobs the preview function fanned out. The job
 * protocol (idempotency, deadlines, memory admission, results as replies or in S3) is
 * lib/adapters/aws/sqs-job-worker.ts; this entry wires it to the AWS adapters and Powertools.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createWorkerHandler } from '../lib/adapters/aws/sqs-job-worker.js';
import { type Config, configWarnings, loadConfig } from '../lib/config.js';
import { openGuardWarning } from '../lib/fetch/address-guard.js';
import { buildAwsWorkerDeps, S3_CLIENT_CONFIG } from './aws-deps.js';
import { createObservability } from './observability.js';

let built: ((event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>) | undefined;

/** The worker handler on the AWS adapters with Powertools (logs, metrics, traces); shared by the browser worker. `env`: what `config` was read from. */
export function instrumentedWorker(service: string, config: Config, env: Record<string, string | undefined> = process.env) {
  const obs = createObservability(service, config);
  const opened = openGuardWarning(config);
  if (opened) obs.log.warn(opened);
  // A former host list (LINKPREVIEW_PROXY_HOSTS, LINKPREVIEW_RENDER_HOSTS): the host rules to write instead.
  for (const line of configWarnings(env)) obs.log.warn(line);
  const s3 = obs.tracer.captureAWSv3Client(new S3Client(S3_CLIENT_CONFIG));
  const sqs = config.replyQueuePrefix ? obs.tracer.captureAWSv3Client(new SQSClient({})) : undefined;
  const deps = buildAwsWorkerDeps({ config, log: obs.log, s3, sqs });
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
export const handler = async (event: SQSEvent, context: unknown): Promise<SQSBatchResponse> => {
  built ??= build();
  return built(event, context);
};
