import { Annotations, Duration, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** The p95 duration alarm fires above this share of the preview's timeout. */
export const DURATION_ALARM_RATIO = 0.8;
/** Every alarm looks at 5-minute periods (Lambda's and SQS's metrics are per minute). */
export const ALARM_PERIOD = Duration.minutes(5);

const SNS_ARN = /^arn:aws[a-z-]*:sns:([a-z0-9-]+):(\d{12}):[A-Za-z0-9_-]{1,256}$/;
const EMAIL = /^[^@\s,]+@[^@\s,]+\.[^@\s,]+$/;

export interface AlarmsProps {
  /** The alarms are named `<namePrefix>-<alarm>`. Default: the stack's name. */
  namePrefix?: string;
  /** The jobs' dead-letter queue (the browser queue parks its failures there too). */
  deadLetterQueue: sqs.IQueue;
  /** The preview function and its timeout (PreviewFunction.fn / .timeout): the duration alarm is a share of it. */
  preview: { fn: lambda.IFunction; timeout: Duration; serviceName: string; metricsNamespace: string };
  /** The SQS workers, by the name their alarm gets (e.g. { Worker: fn, BrowserWorker: fn }). */
  workers: Record<string, lambda.IFunction>;
  /** The page versions' origin (functions/version-origin.ts: CloudFront's second origin for the versions). */
  versionOrigin?: lambda.IFunction;
  /** The batches' dead-letter queues and the webhook function (its `WebhooksDead` metric): when the service has batches. */
  batches?: {
    itemsDeadLetterQueue: sqs.IQueue;
    webhooksDeadLetterQueue: sqs.IQueue;
    webhookFunction: { fn: lambda.IFunction; serviceName: string; metricsNamespace: string };
  };
  /** An existing SNS topic (ARN): alarm and OK actions go there. */
  topicArn?: string;
  /** Create a topic with this email subscribed (the address must confirm the subscription). */
  email?: string;
}

/**
 * The production alarms: the dead-letter queue holds a message; the preview fails, is throttled or
 * runs close to its timeout; a worker invocation fails; the page versions' origin fails. Missing data is healthy for all of them (no
 * traffic: no errors, an idle empty queue sends no metrics). Alarm and OK notifications go to
 * `topicArn` or to a topic created for `email`; with neither the alarms exist without actions.
 */
export class Alarms extends Construct {
  readonly deadLetterQueue: cloudwatch.Alarm;
  readonly previewErrors: cloudwatch.Alarm;
  readonly previewThrottles: cloudwatch.Alarm;
  readonly previewDuration: cloudwatch.Alarm;
  /** Errors of each worker, keyed like `props.workers`. */
  readonly workerErrors: Record<string, cloudwatch.Alarm>;
  /** Errors of the page versions' origin (when the stack has one). */
  readonly versionOriginErrors?: cloudwatch.Alarm;
  /** A batch item or a webhook parked in its dead-letter queue, and a webhook dead after its last try (when the service has batches). */
  readonly batchItemsDeadLetterQueue?: cloudwatch.Alarm;
  readonly webhooksDeadLetterQueue?: cloudwatch.Alarm;
  readonly webhooksDead?: cloudwatch.Alarm;
  readonly webhookErrors?: cloudwatch.Alarm;
  readonly all: cloudwatch.Alarm[];
  /** Where the alarms notify (imported or created); undefined: no actions. */
  readonly topic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = notificationTopic(this, notificationTarget(this, props));
    const prefix = props.namePrefix ?? Stack.of(this).stackName;
    const name: AlarmName = (suffix) => `${prefix}-${suffix}`;
    const queued = props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: ALARM_PERIOD });
    this.deadLetterQueue = atLeastOneAlarm(this, 'DeadLetterQueueDepth', {
      alarmName: name('dead-letter-queue'),
      alarmDescription: DESCRIPTIONS.deadLetterQueue,
      metric: queued,
    });
    const errors = previewErrorsMetric(props.preview);
    this.previewErrors = atLeastOneAlarm(this, 'PreviewErrors', {
      alarmName: name('preview-errors'),
      alarmDescription: DESCRIPTIONS.previewErrors,
      metric: errors,
    });
    const throttles = props.preview.fn.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: ALARM_PERIOD });
    this.previewThrottles = atLeastOneAlarm(this, 'PreviewThrottles', {
      alarmName: name('preview-throttles'),
      alarmDescription: DESCRIPTIONS.previewThrottles,
      metric: throttles,
    });
    this.previewDuration = previewDurationAlarm(this, name, props.preview);
    this.workerErrors = workerErrorsAlarms(this, name, props.workers);
    if (props.versionOrigin) {
      this.versionOriginErrors = atLeastOneAlarm(this, 'VersionOriginErrors', {
        alarmName: name('version-origin-errors'),
        alarmDescription: DESCRIPTIONS.versionOriginErrors,
        metric: props.versionOrigin.metricErrors({ statistic: cloudwatch.Stats.SUM, period: ALARM_PERIOD }),
      });
    }
    if (props.batches) {
      const depth = (q: sqs.IQueue) => q.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: ALARM_PERIOD });
      this.batchItemsDeadLetterQueue = atLeastOneAlarm(this, 'BatchItemsDeadLetterQueueDepth', {
        alarmName: name('batch-items-dead-letter-queue'),
        alarmDescription: DESCRIPTIONS.batchItemsDeadLetterQueue,
        metric: depth(props.batches.itemsDeadLetterQueue),
      });
      this.webhooksDeadLetterQueue = atLeastOneAlarm(this, 'WebhooksDeadLetterQueueDepth', {
        alarmName: name('webhooks-dead-letter-queue'),
        alarmDescription: DESCRIPTIONS.webhooksDeadLetterQueue,
        metric: depth(props.batches.webhooksDeadLetterQueue),
      });
      const fn = props.batches.webhookFunction;
      this.webhookErrors = atLeastOneAlarm(this, 'WebhookErrors', {
        alarmName: name('webhook-errors'),
        alarmDescription: DESCRIPTIONS.webhookErrors,
        metric: fn.fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period: ALARM_PERIOD }),
      });
      this.webhooksDead = atLeastOneAlarm(this, 'WebhooksDead', {
        alarmName: name('webhooks-dead'),
        alarmDescription: DESCRIPTIONS.webhooksDead,
        metric: ownMetric(fn, 'WebhooksDead'),
      });
    }
    this.all = [
      this.deadLetterQueue,
      this.previewErrors,
      this.previewThrottles,
      this.previewDuration,
      ...Object.values(this.workerErrors),
      ...(this.versionOriginErrors ? [this.versionOriginErrors] : []),
      ...[this.batchItemsDeadLetterQueue, this.webhooksDeadLetterQueue, this.webhookErrors, this.webhooksDead].filter(
        (a): a is cloudwatch.Alarm => a !== undefined,
      ),
    ];
    if (this.topic) notifyTopic(this.topic, this.all);
  }
}

/** What the alarms that fire at one or more tell the operator: what happened, and what to do. */
const DESCRIPTIONS = {
  deadLetterQueue:
    'A job failed all its deliveries and was parked in the dead-letter queue (from the job queue or the browser queue). Read the message, fix the cause, purge or redrive.',
  previewErrors:
    'A preview invocation failed (timeout, out of memory, init failure such as a bad setting), or the preview answered a 500 (a bug it caught). See its log group.',
  previewThrottles:
    'The preview function was throttled (account or reserved concurrency): those requests failed. Raise the concurrency quota or lower the API throttle.',
  batchItemsDeadLetterQueue:
    "A batch item was handed to the preview function five times without an end (its invocations crashed or timed out) and was parked in the batch items' dead-letter queue: its batch never completes. Read the message, fix the cause, redrive.",
  webhooksDeadLetterQueue:
    "A webhook delivery's invocations crashed again and again (not the receiver's failures: those are retried on the schedule) and it was parked in the webhooks' dead-letter queue. See the webhook function's log group, fix the cause, redrive.",
  webhookErrors:
    "The webhook function crashed (timeout, out of memory, unhandled error, a bad setting): its deliveries come back after the webhooks queue's visibility timeout and are tried again; after repeated crashes they wait in the webhooks' dead-letter queue. See its log group.",
  webhooksDead:
    'A webhook was not delivered after its last try (LINKPREVIEW_WEBHOOK_RETRIES): the receiver answered no 2xx for about a day. Its item says so (GET /previews/{batchId}: delivery.state dead); the record is still there for the caller to fetch.',
  versionOriginErrors:
    "The page versions' origin failed (timeout, out of memory, unhandled error): a viewer who asked for a page version before it was stored got CloudFront's 5xx instead of the version. See its log group.",
};

/** An alarm's full name from its own (`<namePrefix>-<alarm>`). */
type AlarmName = (suffix: string) => string;

/** What an alarm is called, says and watches. */
type AlarmText = Pick<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription' | 'metric'>;

/** An alarm that fires on one or more in a period; missing data is healthy. */
function atLeastOneAlarm(scope: Construct, id: string, text: AlarmText): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    ...text,
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}

/** Where the alarms notify, checked: a topic ARN or an email address (not both), or neither. */
function notificationTarget(scope: Construct, props: AlarmsProps): { topicArn?: string; email?: string } {
  const stack = Stack.of(scope);
  const topicArn = props.topicArn?.trim() || undefined;
  const email = props.email?.trim() || undefined;
  if (topicArn !== undefined && email !== undefined) {
    throw new Error('alarmTopicArn and alarmEmail: give one (subscribe the address to your topic instead)');
  }
  if (topicArn !== undefined && !Token.isUnresolved(topicArn)) {
    const m = SNS_ARN.exec(topicArn);
    if (!m) throw new Error(`alarmTopicArn: "${topicArn}" is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)`);
    if (!Token.isUnresolved(stack.region) && m[1] !== stack.region) {
      Annotations.of(scope).addWarningV2(
        'linklens:alarmTopicRegion',
        `alarmTopicArn is in ${m[1]} but the stack in ${stack.region}: CloudWatch alarms notify topics of their own region`,
      );
    }
  }
  if (email !== undefined && !Token.isUnresolved(email) && !EMAIL.test(email)) {
    throw new Error(`alarmEmail: "${email}" is not an email address`);
  }
  return { topicArn, email };
}

/** The topic the alarms notify: the one given, or one created for the email address; undefined with neither. */
function notificationTopic(scope: Construct, { topicArn, email }: { topicArn?: string; email?: string }): sns.ITopic | undefined {
  if (topicArn !== undefined) return sns.Topic.fromTopicArn(scope, 'Topic', topicArn);
  if (email === undefined) return undefined;
  // The default topic policy (account owner) lets CloudWatch publish. No enforceSSL: it writes a
  // topic policy that replaces the default one (CloudWatch is then refused unless allowed
  // explicitly). No KMS key: CloudWatch would need a key policy to publish to it.
  const topic = new sns.Topic(scope, 'Topic', { displayName: `${Stack.of(scope).stackName} alarms` });
  topic.addSubscription(new EmailSubscription(email));
  return topic;
}

/** A count a function adds to itself (Powertools: its namespace, dimension `service`), summed per period. */
function ownMetric(fn: { serviceName: string; metricsNamespace: string }, metricName: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: fn.metricsNamespace,
    metricName,
    dimensionsMap: { service: fn.serviceName },
    statistic: cloudwatch.Stats.SUM,
    period: ALARM_PERIOD,
  });
}

/**
 * The preview's errors: an invocation error (timeout, out of memory, init failure) counts in
 * Lambda's Errors; a bug the handler catches is a 500 answer, which the function counts itself
 * (ServerErrors).
 */
function previewErrorsMetric(preview: AlarmsProps['preview']): cloudwatch.IMetric {
  return new cloudwatch.MathExpression({
    label: 'preview errors',
    expression: 'FILL(invocationErrors, 0) + FILL(serverErrors, 0)',
    period: ALARM_PERIOD,
    usingMetrics: {
      invocationErrors: preview.fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period: ALARM_PERIOD }),
      serverErrors: ownMetric(preview, 'ServerErrors'),
    },
  });
}

function previewDurationAlarm(scope: Construct, name: AlarmName, preview: AlarmsProps['preview']): cloudwatch.Alarm {
  const timeoutMs = preview.timeout.toMilliseconds();
  const durationThreshold = Math.round(timeoutMs * DURATION_ALARM_RATIO);
  return new cloudwatch.Alarm(scope, 'PreviewDuration', {
    alarmName: name('preview-duration-p95'),
    alarmDescription: `The preview's p95 duration is above ${durationThreshold} ms, ${DURATION_ALARM_RATIO * 100}% of its ${timeoutMs} ms timeout, in 2 of 3 periods: slow origins or slow jobs; timeouts follow.`,
    metric: preview.fn.metricDuration({ statistic: cloudwatch.Stats.p(95), period: ALARM_PERIOD }),
    threshold: durationThreshold,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}

/**
 * One alarm per worker on its Errors. A job that fails is reported as a batch item failure, not an
 * error: Errors counts crashed invocations (timeout, out of memory, unhandled), whose whole batch
 * is redelivered long after the waiting previews gave up on it.
 */
function workerErrorsAlarms(scope: Construct, name: AlarmName, workers: AlarmsProps['workers']): Record<string, cloudwatch.Alarm> {
  const alarms: Record<string, cloudwatch.Alarm> = {};
  for (const [workerName, worker] of Object.entries(workers)) {
    const kebab = workerName.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
    alarms[workerName] = atLeastOneAlarm(scope, `${workerName}Errors`, {
      alarmName: name(`${kebab}-errors`),
      alarmDescription: `The ${kebab} function crashed (timeout, out of memory, unhandled error): its batch is redelivered, its previews went without those results.`,
      metric: worker.metricErrors({ statistic: cloudwatch.Stats.SUM, period: ALARM_PERIOD }),
    });
  }
  return alarms;
}

/** Alarm and OK notifications of every alarm to the topic. */
function notifyTopic(topic: sns.ITopic, alarms: cloudwatch.Alarm[]): void {
  const action = new SnsAction(topic);
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
}
