import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULTS, ENV } from '../../lib/core-settings.js';
import { BATCHES_PREFIX } from '../../lib/storage-keys.js';
import type { AssetStore } from './asset-store.js';
import { WEBHOOK_BUNDLE } from './bundle-specs.js';
import { LinklensFunction } from './linklens-function.js';
import { bindSecretRead } from './readable-values.js';

/** Batch items previewed at once by default: instances of the preview function the items' event source may use (SQS's least is 2). */
export const DEFAULT_BATCH_CONCURRENCY = 5;
/** The webhook function's timeout: one delivery waits 15 s at most (lib/batch/webhooks.ts), and a record's delivery reads and writes its item. */
export const WEBHOOK_TIMEOUT = Duration.seconds(20);
/**
 * A delivery whose invocation crashed comes back after this: twice the function's timeout, so
 * it is not handed out while a slow invocation may still deliver it, and a crashed one is
 * delivered again within a minute. A failed attempt sets its own wait (the retry schedule).
 */
export const WEBHOOK_VISIBILITY = Duration.seconds(WEBHOOK_TIMEOUT.toSeconds() * 2);
/** Records per webhook invocation, delivered at once. */
export const WEBHOOK_BATCH_SIZE = 10;
/**
 * Receives of a delivery before SQS parks it in the webhooks' dead-letter queue: its attempts
 * (one and the retries of LINKPREVIEW_WEBHOOK_RETRIES's default) and three crashes. A delivery
 * that failed all its attempts is dead before that (kept in its item, counted in `WebhooksDead`).
 */
export const WEBHOOK_MAX_RECEIVES = DEFAULTS.webhookRetries.length + 1 + 3;
/** Receives of a batch item: the three tries of a preview that failed for a reason of ours (lib/batch/work.ts), and two crashes. */
export const ITEM_MAX_RECEIVES = 5;
/** How long a queued item or delivery is kept: past the retry schedule's whole length (about 28 h). */
const RETENTION = Duration.days(4);

export interface BatchesProps {
  /** The preview function and its timeout: it submits batches (POST /previews) and previews their items from their queue. */
  preview: { fn: lambda.Function; timeout: Duration };
  store: AssetStore;
  /** Items previewed at once (the items' event source's maximum concurrency, 2 to 1000). Default DEFAULT_BATCH_CONCURRENCY. */
  concurrency?: number;
  /** The webhooks' secret: an existing Secrets Manager secret, or its name or ARN (its value `whsec_…`, or several while rotating). Default: one generated. */
  webhookSecret?: secretsmanager.ISecret | string;
  logRetention?: logs.RetentionDays;
}

/**
 * Batches (`POST /previews`, docs/batches.md): the items' queue, which the preview function sends
 * to and consumes with a concurrency of its own (a batch never takes more of the function than
 * that, so `POST /` keeps the rest), each message grouped by its key (SQS fair queues: one key's
 * backlog does not hold back another's link); the webhooks' queue and the webhook function
 * (functions/webhooks.ts), whose failed attempts wait on the queue for their retry; a dead-letter
 * queue for each; the webhooks' secret; and the records under `batches/` of the bucket, which
 * expire after LINKPREVIEW_BATCH_TTL_DAYS (the bucket's lifecycle rule, AssetStore).
 */
export class Batches extends Construct {
  readonly items: sqs.Queue;
  readonly itemsDeadLetterQueue: sqs.Queue;
  readonly webhooks: sqs.Queue;
  readonly webhooksDeadLetterQueue: sqs.Queue;
  readonly webhookFunction: LinklensFunction;
  readonly secret: secretsmanager.ISecret;
  readonly concurrency: number;

  constructor(scope: Construct, id: string, props: BatchesProps) {
    super(scope, id);
    this.concurrency = props.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 2 || this.concurrency > 1000)
      throw new Error(`batches concurrency: ${this.concurrency} is not a whole number from 2 to 1000 (an SQS event source's maximum concurrency)`);
    const queue = (name: string, deadLetterQueue: sqs.Queue, visibilityTimeout: Duration, maxReceiveCount: number) =>
      new sqs.Queue(this, name, {
        visibilityTimeout,
        retentionPeriod: RETENTION,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount },
      });
    const deadLetters = (name: string) =>
      new sqs.Queue(this, name, { retentionPeriod: Duration.days(14), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });

    // The items: six times the preview's timeout, as AWS advises for an event source's queue.
    this.itemsDeadLetterQueue = deadLetters('ItemsDeadLetterQueue');
    this.items = queue('Items', this.itemsDeadLetterQueue, Duration.seconds(props.preview.timeout.toSeconds() * 6), ITEM_MAX_RECEIVES);
    this.webhooksDeadLetterQueue = deadLetters('WebhooksDeadLetterQueue');
    this.webhooks = queue('Webhooks', this.webhooksDeadLetterQueue, WEBHOOK_VISIBILITY, WEBHOOK_MAX_RECEIVES);

    const preview = props.preview.fn;
    preview.addEnvironment(ENV.batchQueueUrl, this.items.queueUrl);
    preview.addEnvironment(ENV.webhookQueueUrl, this.webhooks.queueUrl);
    this.items.grantSendMessages(preview);
    this.webhooks.grantSendMessages(preview);
    // One item per invocation: each preview has the invocation's whole time, as a POST / has.
    preview.addEventSource(new SqsEventSource(this.items, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: this.concurrency }));
    // Its records, and the marks of each key's open batches (listed, and deleted once a batch is complete).
    props.store.grantTo(preview, { read: [BATCHES_PREFIX], write: [BATCHES_PREFIX], delete: [BATCHES_PREFIX] });

    const given = props.webhookSecret;
    this.secret =
      typeof given === 'string'
        ? given.startsWith('arn:')
          ? secretsmanager.Secret.fromSecretCompleteArn(this, 'WebhookSecret', given)
          : secretsmanager.Secret.fromSecretNameV2(this, 'WebhookSecret', given)
        : (given ??
          new secretsmanager.Secret(this, 'WebhookSecret', {
            description: 'linklens: the webhooks signing secret (Standard Webhooks); receivers verify with whsec_ and this value',
            // 44 base64 characters: 33 random bytes (alphanumerics are base64's own).
            generateSecretString: { passwordLength: 44, excludePunctuation: true, includeSpace: false },
          }));
    // The preview function only needs to know there is one (a callbackUrl is then taken); it never reads it.
    preview.addEnvironment(ENV.webhookSecretId, this.secret.secretFullArn ?? this.secret.secretName);

    this.webhookFunction = new LinklensFunction(this, 'WebhookFunction', {
      bundle: WEBHOOK_BUNDLE,
      serviceName: 'linklens-webhooks',
      description: "linklens: delivers the batches' webhooks (signed, retried on a schedule) from SQS",
      timeout: WEBHOOK_TIMEOUT,
      memorySize: 256,
      logRetention: props.logRetention,
      environment: { [ENV.batchQueueUrl]: this.items.queueUrl, [ENV.webhookQueueUrl]: this.webhooks.queueUrl },
    });
    const webhooks = this.webhookFunction.fn;
    bindSecretRead(webhooks, this.secret, { env: ENV.webhookSecretId, id: 'WebhookSecretRead' });
    props.store.grantTo(webhooks, { read: [BATCHES_PREFIX], write: [BATCHES_PREFIX] });
    webhooks.addEventSource(new SqsEventSource(this.webhooks, { batchSize: WEBHOOK_BATCH_SIZE, reportBatchItemFailures: true }));
  }
}
