import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';

export interface JobQueueProps {
  /** The worker's timeout: the queue's visibility timeout is a multiple of it (AWS advises six). */
  workerTimeout: Duration;
  /** Deliveries before a message is parked in the DLQ. */
  maxReceiveCount?: number;
  /** Park failures in this dead-letter queue instead of a new one (the browser queue shares the job queue's). */
  deadLetterQueue?: sqs.Queue;
}

/**
 * The work queue between the preview function and the workers, with its dead-letter queue.
 * The visibility timeout is six times the worker's timeout, so a message is never handed to a
 * second worker while the first may still be running it.
 */
export class JobQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly maxReceiveCount: number;

  constructor(scope: Construct, id: string, props: JobQueueProps) {
    super(scope, id);
    this.maxReceiveCount = props.maxReceiveCount ?? 3;
    this.deadLetterQueue =
      props.deadLetterQueue ??
      new sqs.Queue(this, 'DeadLetterQueue', {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
    const visibilityTimeout = Duration.seconds(props.workerTimeout.toSeconds() * 6);
    this.queue = new sqs.Queue(this, 'Queue', {
      visibilityTimeout,
      // A job is worth nothing after its request's deadline; an hour leaves room for the retries.
      retentionPeriod: Duration.seconds(Math.max(3600, visibilityTimeout.toSeconds() * (this.maxReceiveCount + 1))),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: this.maxReceiveCount },
    });
  }

  /** Lets a function send jobs: sets LINKPREVIEW_JOB_QUEUE_URL (or `envName`) and grants sqs:SendMessage on this queue. */
  grantSendTo(fn: lambda.Function, envName: string = ENV.jobQueueUrl): void {
    fn.addEnvironment(envName, this.queue.queueUrl);
    this.queue.grantSendMessages(fn);
  }

  /** Makes a function the queue's consumer, with partial batch failures (reportBatchItemFailures). */
  attachWorker(fn: lambda.Function, options: { batchSize?: number; maxConcurrency?: number } = {}): SqsEventSource {
    const source = new SqsEventSource(this.queue, {
      batchSize: options.batchSize ?? 4,
      maxBatchingWindow: undefined, // latency matters: a job is handed over as soon as it arrives
      reportBatchItemFailures: true,
      maxConcurrency: options.maxConcurrency,
    });
    fn.addEventSource(source);
    return source;
  }
}
