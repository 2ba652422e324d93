/**
 * The AWS composition root: the ports of the two Lambdas (functions/preview.ts, functions/worker.ts).
 * S3 for blobs (assets through CloudFront, job results), SQS for the job fan-out and the replies,
 * SSM or Secrets Manager for key digests that change without a redeploy and for the proxy's URL.
 * The local composition root is functions/wiring.ts; the two are kept apart so the preview bundle
 * does not carry the job code (sharp, ffprobe), and the local server and the CLI do not load the
 * AWS SDK.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { secretKeyHashSource, ssmKeyHashSource } from '../lib/adapters/aws/key-hash-source.js';
import { awsProxyEndpoint } from '../lib/adapters/aws/proxy-source.js';
import { ReplyInbox } from '../lib/adapters/aws/reply-queue.js';
import { S3BlobStore } from '../lib/adapters/aws/s3-blob-store.js';
import { type RunSummary, SqsJobRunner } from '../lib/adapters/aws/sqs-job-runner.js';
import { SqsWorkQueue } from '../lib/adapters/aws/sqs-work-queue.js';
import { secretWebhookSigner } from '../lib/adapters/aws/webhook-secret.js';
import { createKeyStore } from '../lib/auth/key-store.js';
import { BatchStore } from '../lib/batch/store.js';
import type { BatchDeps } from '../lib/batch/work.js';
import type { Config } from '../lib/config.js';
import { ENV } from '../lib/core-settings.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import { proxyPolicyFrom } from '../lib/fetch/proxy-route.js';
import { fetcherFromConfig } from '../lib/fetch/safe-fetch.js';
import type { Fetcher } from '../lib/fetch/types.js';
import { blobWallMemo } from '../lib/fetch/wall-memo.js';
import { type BatchRoutesDeps, batchRoutesDeps } from '../lib/http/batches.js';
import type { HandlerDeps } from '../lib/http/preview-handler.js';
import type { Log } from '../lib/log.js';
import type { BlobStore, KeyStore } from '../lib/ports.js';
import { ConfigError } from '../lib/settings.js';

/**
 * The functions' S3 client settings: a connection not made in 3 s, or a response silent for 10 s,
 * fails (and the SDK retries it) rather than holding the invocation to its timeout. The SDK's
 * default is to wait forever; the deploy rehearsal once saw a preview invocation run into its 28 s
 * timeout with no request of a test failing (test/cdk/rehearsal.test.ts records what it was asked).
 */
export const S3_CLIENT_CONFIG = { requestHandler: { connectionTimeout: 3_000, socketTimeout: 10_000 } } as const;

/** True when the environment names a bucket and a queue: the preview Lambda then uses S3 + SQS. */
export function awsConfigured(config: Config): boolean {
  return config.bucket !== '' && config.jobQueueUrl !== '';
}

export interface AwsDepsOptions {
  config: Config;
  log: Log;
  /** Clients (tests point them at s3rver and fauxqs on loopback); default: from the Lambda environment. */
  s3?: S3Client;
  sqs?: SQSClient;
  /** The key digests' parameter or secret (LINKPREVIEW_API_KEY_PARAMETER / _SECRET): their clients. */
  ssm?: SSMClient;
  secrets?: SecretsManagerClient;
  resolver?: Resolver;
  /** The latest moment the current invocation may wait for jobs: its InvocationBudget's deadline (functions/preview.ts). */
  hardDeadline?: () => number | undefined;
  onAuthFailure?: () => void;
  onRoute?: HandlerDeps['onRoute'];
  onRender?: HandlerDeps['onRender'];
  onFlight?: HandlerDeps['onFlight'];
  onJobsSettled?: (summary: RunSummary) => void;
  poll?: { initialMs?: number; factor?: number; maxMs?: number };
}

/**
 * The fetcher of a Lambda: its proxy route's URL from the secret or parameter when one is named
 * (LINKPREVIEW_PROXY_SECRET / _PARAMETER), else LINKPREVIEW_PROXY_URL; walled hosts remembered in S3.
 */
function fetcher(options: { config: Config; log: Log; resolver?: Resolver; ssm?: SSMClient; secrets?: SecretsManagerClient }, blobs: BlobStore): Fetcher {
  const { config, log } = options;
  if (config.proxyParameter && config.proxySecret)
    throw new ConfigError(`Invalid configuration: ${ENV.proxyParameter} and ${ENV.proxySecret} are both set (set one)`);
  const endpoint =
    config.proxyParameter || config.proxySecret
      ? awsProxyEndpoint({
          parameter: config.proxyParameter || undefined,
          secret: config.proxySecret || undefined,
          maxAgeSeconds: config.proxyCacheSeconds,
          log,
          ssm: options.ssm,
          secrets: options.secrets,
        })
      : undefined;
  const memo = blobWallMemo(blobs, config.proxyMemoTtlMs);
  return fetcherFromConfig(config, options.resolver, log, proxyPolicyFrom(config, { memo, endpoint }));
}

function buildAwsBlobStore(config: Config, s3: S3Client = new S3Client(S3_CLIENT_CONFIG)): S3BlobStore {
  if (!config.bucket) throw new Error('LINKPREVIEW_BUCKET is not set');
  if (!config.publicUrl) throw new Error('LINKPREVIEW_PUBLIC_URL (the CloudFront URL) is not set');
  return new S3BlobStore({ client: s3, bucket: config.bucket, publicBaseUrl: config.publicUrl });
}

/** The preview function's ports on AWS: S3 blobs, the SQS fan-out with a synchronous wait. */
export function buildAwsDeps(options: AwsDepsOptions): HandlerDeps & { blobs: S3BlobStore; jobs: SqsJobRunner; sqs: SQSClient } {
  const { config, log } = options;
  if (!config.jobQueueUrl) throw new Error('LINKPREVIEW_JOB_QUEUE_URL is not set');
  const blobs = buildAwsBlobStore(config, options.s3);
  const sqs = options.sqs ?? new SQSClient({});
  const jobs = new SqsJobRunner({
    sqs,
    // This container's reply queue, where the workers send the results (else they are polled in S3).
    replies: config.replyQueuePrefix ? new ReplyInbox({ sqs, namePrefix: config.replyQueuePrefix, log }) : undefined,
    queueUrl: config.jobQueueUrl,
    // Browser jobs (lib/jobs/specs.ts) run in their own worker (a browser layer, more memory) behind its own queue.
    queueUrlByWorker: config.browserQueueUrl ? { browser: config.browserQueueUrl } : undefined,
    blobs,
    hardDeadline: options.hardDeadline,
    log,
    onRun: options.onJobsSettled,
    poll: options.poll,
  });
  const keys = buildAwsKeyStore(options);
  return {
    config,
    log,
    fetch: fetcher(options, blobs),
    blobs,
    jobs,
    sqs,
    keys,
    onAuthFailure: options.onAuthFailure,
    onRoute: options.onRoute,
    onRender: options.onRender,
    onFlight: options.onFlight,
  };
}

/**
 * The batches on AWS (docs/batches.md): their records in S3 (`batches/`), their items on their SQS
 * queue (LINKPREVIEW_BATCH_QUEUE_URL: the preview function sends and consumes them) and their
 * webhooks on theirs (LINKPREVIEW_WEBHOOK_QUEUE_URL: the webhook function consumes them), signed
 * with the secrets of LINKPREVIEW_WEBHOOK_SECRET_ID (read only where a webhook is signed).
 * Undefined when the stack made no batch queue: `POST /previews` is then 404.
 */
export function buildAwsBatches(options: {
  config: Config;
  log: Log;
  blobs: S3BlobStore;
  sqs: SQSClient;
  fetch: Fetcher;
  preview: BatchDeps['preview'];
  secrets?: SecretsManagerClient;
  resolver?: Resolver;
  onDelivery?: BatchDeps['onDelivery'];
}): BatchRoutesDeps | undefined {
  const { config, sqs } = options;
  if (!config.batchQueueUrl) return undefined;
  if (!config.webhookQueueUrl) throw new ConfigError(`Invalid configuration: ${ENV.batchQueueUrl} is set without ${ENV.webhookQueueUrl}`);
  return batchRoutesDeps(config, {
    store: new BatchStore(options.blobs),
    items: new SqsWorkQueue({ sqs, queueUrl: config.batchQueueUrl }),
    deliveries: new SqsWorkQueue({ sqs, queueUrl: config.webhookQueueUrl }),
    preview: options.preview,
    fetch: options.fetch,
    signer: config.webhookSecretId ? secretWebhookSigner({ name: config.webhookSecretId, client: options.secrets }) : undefined,
    log: options.log,
    resolver: options.resolver,
    onDelivery: options.onDelivery,
  });
}

/** The webhook function's ports: S3 (the batches' records), the fetcher the webhooks go through, the secret's client. */
export function buildAwsWebhookDeps(options: {
  config: Config;
  log: Log;
  s3?: S3Client;
  sqs?: SQSClient;
  secrets?: SecretsManagerClient;
  ssm?: SSMClient;
  resolver?: Resolver;
  onDelivery?: BatchDeps['onDelivery'];
}): BatchRoutesDeps {
  const blobs = buildAwsBlobStore(options.config, options.s3);
  const sqs = options.sqs ?? new SQSClient({});
  const batches = buildAwsBatches({
    ...options,
    blobs,
    sqs,
    fetch: fetcher(options, blobs),
    // This function delivers webhooks only: an item is previewed by the preview function.
    preview: async () => {
      throw new Error('the webhook function previews nothing');
    },
  });
  if (!batches) throw new ConfigError(`Invalid configuration: ${ENV.batchQueueUrl} is not set`);
  if (!batches.signer) throw new ConfigError(`Invalid configuration: ${ENV.webhookSecretId} is not set`);
  return batches;
}

/**
 * The preview's keys: the configured digests (LINKPREVIEW_API_KEY_HASHES), plus those of the SSM
 * parameter or the secret when one is named, read through Powertools and cached for
 * LINKPREVIEW_API_KEY_CACHE_S (a failed read keeps the last digests as long, a minute at most).
 */
export function buildAwsKeyStore(options: { config: Config; log: Log; ssm?: SSMClient; secrets?: SecretsManagerClient }): KeyStore {
  const { config, log } = options;
  if (config.apiKeyParameter && config.apiKeySecret)
    throw new ConfigError(`Invalid configuration: ${ENV.apiKeyParameter} and ${ENV.apiKeySecret} are both set (set one)`);
  const read = { maxAgeSeconds: config.apiKeyCacheSeconds, log, retryAfterMs: Math.min(config.apiKeyCacheSeconds * 1000, 60_000) };
  const source = config.apiKeyParameter
    ? ssmKeyHashSource({ ...read, name: config.apiKeyParameter, client: options.ssm })
    : config.apiKeySecret
      ? secretKeyHashSource({ ...read, name: config.apiKeySecret, client: options.secrets })
      : undefined;
  return createKeyStore(config, source);
}

/** The worker's ports: the job context (fetcher, S3 blobs, config) and the SQS client that sends the replies. */
export function buildAwsWorkerDeps(options: {
  config: Config;
  log: Log;
  s3?: S3Client;
  sqs?: SQSClient;
  resolver?: Resolver;
  ssm?: SSMClient;
  secrets?: SecretsManagerClient;
}) {
  const blobs = buildAwsBlobStore(options.config, options.s3);
  const sqs = options.config.replyQueuePrefix ? (options.sqs ?? new SQSClient({})) : undefined;
  return { config: options.config, log: options.log, fetch: fetcher(options, blobs), blobs, sqs };
}
