/**
 * The webhook Lambda: an SQS event source hands it the batches' webhook deliveries
 * (LINKPREVIEW_WEBHOOK_QUEUE_URL), each one attempt (lib/batch/work.ts `deliverOne`): a failed
 * attempt is handed out again on the retry schedule (the record's visibility set to the wait), and
 * after its last try it is dead (kept in its item, logged, counted in `WebhooksDead`, which an
 * alarm watches). A crashed invocation loses nothing: its records come back after the queue's
 * visibility timeout, and after maxReceiveCount crashes they wait in the dead-letter queue.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsQueueConsumer } from '../lib/adapters/aws/sqs-work-queue.js';
import type { DeliveryMessage } from '../lib/batch/types.js';
import { deliverOne } from '../lib/batch/work.js';
import { configWarnings, loadConfig } from '../lib/config.js';
import { openGuardWarning } from '../lib/fetch/address-guard.js';
import { buildAwsWebhookDeps, S3_CLIENT_CONFIG } from './aws-deps.js';
import { createObservability } from './observability.js';

/** The metric each attempt's outcome adds one to (namespace linklens, dimension service). */
export const DELIVERY_METRICS = { delivered: 'WebhooksDelivered', gone: 'WebhooksGone', retry: 'WebhookRetries', dead: 'WebhooksDead' } as const;

type Handler = (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;

function build(): Handler {
  const config = loadConfig(process.env);
  const obs = createObservability('linklens-webhooks', config);
  const opened = openGuardWarning(config);
  if (opened) obs.log.warn(opened);
  for (const line of configWarnings(process.env)) obs.log.warn(line);
  const sqs = obs.tracer.captureAWSv3Client(new SQSClient({}));
  const deps = buildAwsWebhookDeps({
    config,
    log: obs.log,
    s3: obs.tracer.captureAWSv3Client(new S3Client(S3_CLIENT_CONFIG)),
    sqs,
    secrets: obs.tracer.captureAWSv3Client(new SecretsManagerClient({})),
    onDelivery: (outcome) => obs.count(DELIVERY_METRICS[outcome]),
  });
  const consume = sqsQueueConsumer<DeliveryMessage>({ sqs, queueUrl: config.webhookQueueUrl, log: obs.log, handler: (m) => deliverOne(deps, m) });
  return middy(consume)
    .use(captureLambdaHandler(obs.tracer, { captureResponse: false }))
    .use(injectLambdaContext(obs.logger))
    .use(logMetrics(obs.metrics)) as unknown as Handler;
}

let built: Handler | undefined;

/** The Lambda entry (functions/webhooks.handler); the deps are built on the first event of a container. */
export const handler: Handler = async (event, context) => {
  built ??= build();
  return built(event, context);
};
