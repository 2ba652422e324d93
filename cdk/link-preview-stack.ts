import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ENV } from '../lib/core-settings.js';
import { ASSETS_PREFIX, AssetStore, JOBS_PREFIX } from './constructs/asset-store.js';
import { JobQueue } from './constructs/job-queue.js';
import { MediaLayers } from './constructs/media-layers.js';
import { PreviewApi } from './constructs/preview-api.js';
import { PreviewFunction } from './constructs/preview-function.js';
import { WorkerFunction } from './constructs/worker-function.js';
import { BrowserLayer } from './constructs/browser-layer.js';
import { ScreenshotWorkerFunction } from './constructs/screenshot-worker-function.js';
import { Alarms } from './constructs/alarms.js';

export interface LinkPreviewStackProps extends StackProps {
  /** SHA-256 hex digests of the bearer keys (`npm run keygen`). Empty: every API call is refused. */
  apiKeyHashes: string[];
  corsOrigins?: string[];
  throttle?: { rateLimit: number; burstLimit: number };
  workerReservedConcurrency?: number;
  workerBatchSize?: number;
  /** Retain (default) or destroy the asset bucket on `cdk destroy`. */
  bucketRemovalPolicy?: RemovalPolicy;
  /** Replaces the built layer contents (tests). */
  layerCode?: { ffmpeg: lambda.Code; sharp: lambda.Code; chromium?: lambda.Code };
  /** Page screenshots in their own worker with a browser layer (default true). */
  screenshots?: boolean;
  screenshotWorkerReservedConcurrency?: number;
  /** An existing SNS topic the alarms notify (alarm and OK). */
  alarmTopicArn?: string;
  /** Or: a topic is created with this address subscribed. Neither: the alarms have no actions. */
  alarmEmail?: string;
}

/**
 * linklens on AWS: API Gateway (HTTP API) -> preview Lambda -> SQS -> worker Lambdas -> S3, with
 * the preview waiting for the results; assets served by CloudFront.
 */
export class LinkPreviewStack extends Stack {
  readonly api: PreviewApi;
  readonly preview: PreviewFunction;
  readonly worker: WorkerFunction;
  readonly jobs: JobQueue;
  readonly store: AssetStore;
  readonly screenshotWorker?: ScreenshotWorkerFunction;
  readonly screenshotJobs?: JobQueue;
  readonly alarms: Alarms;

  constructor(scope: Construct, id: string, props: LinkPreviewStackProps) {
    super(scope, id, props);
    for (const h of props.apiKeyHashes) {
      if (!/^[0-9a-f]{64}$/.test(h)) throw new Error(`apiKeyHashes: "${h.slice(0, 12)}..." is not a SHA-256 hex digest (use npm run keygen; never pass a plain key)`);
    }

    this.store = new AssetStore(this, 'Assets', { removalPolicy: props.bucketRemovalPolicy });
    const layers = new MediaLayers(this, 'Layers', { code: props.layerCode });
    this.worker = new WorkerFunction(this, 'Worker', { layers, reservedConcurrency: props.workerReservedConcurrency, timeout: Duration.seconds(60) });
    this.jobs = new JobQueue(this, 'Jobs', { workerTimeout: this.worker.timeout });
    this.preview = new PreviewFunction(this, 'Preview', { apiKeyHashes: props.apiKeyHashes });
    this.api = new PreviewApi(this, 'Api', { handler: this.preview.fn, throttle: props.throttle, corsOrigins: props.corsOrigins });

    // Each grant sets its env var with it.
    this.jobs.grantSendTo(this.preview.fn);
    // The preview reads job results and stores large job inputs (jobs/); it writes no assets.
    this.store.grantTo(this.preview.fn, { read: [JOBS_PREFIX], write: [JOBS_PREFIX] });
    // The worker reads inputs and existing renditions, writes renditions and results.
    this.store.grantTo(this.worker.fn, { read: [ASSETS_PREFIX, JOBS_PREFIX], write: [ASSETS_PREFIX, JOBS_PREFIX] });
    this.jobs.attachWorker(this.worker.fn, { batchSize: props.workerBatchSize });

    // Screenshots: the same fan-out (the preview sends, a worker writes the result to jobs/, the
    // preview waits), on a queue of their own whose worker has the browser layer and the memory.
    if (props.screenshots ?? true) {
      const browser = new BrowserLayer(this, 'Browser', { code: props.layerCode?.chromium });
      this.screenshotWorker = new ScreenshotWorkerFunction(this, 'ScreenshotWorker', {
        sharpLayer: layers.sharp,
        browserLayer: browser.layer,
        reservedConcurrency: props.screenshotWorkerReservedConcurrency,
        timeout: Duration.seconds(60),
      });
      this.screenshotJobs = new JobQueue(this, 'ScreenshotJobs', { workerTimeout: this.screenshotWorker.timeout, deadLetterQueue: this.jobs.deadLetterQueue });
      this.screenshotJobs.grantSendTo(this.preview.fn, ENV.screenshotQueueUrl);
      this.preview.fn.addEnvironment(ENV.screenshots, 'on');
      this.store.grantTo(this.screenshotWorker.fn, { read: [ASSETS_PREFIX, JOBS_PREFIX], write: [ASSETS_PREFIX, JOBS_PREFIX] });
      this.screenshotJobs.attachWorker(this.screenshotWorker.fn, { batchSize: 1 });
    } else {
      this.preview.fn.addEnvironment(ENV.screenshots, 'off');
    }

    this.alarms = new Alarms(this, 'Alarms', {
      deadLetterQueue: this.jobs.deadLetterQueue,
      preview: this.preview,
      workers: { Worker: this.worker.fn, ...(this.screenshotWorker && { ScreenshotWorker: this.screenshotWorker.fn }) },
      topicArn: props.alarmTopicArn,
      email: props.alarmEmail,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'POST here with "Authorization: Bearer <key>"' });
    this.store.addOutputs(this);
    new CfnOutput(this, 'PreviewFunctionName', { value: this.preview.fn.functionName, description: 'For direct invocation from other Lambdas' });
    new CfnOutput(this, 'PreviewFunctionArn', { value: this.preview.fn.functionArn, description: 'Grant lambda:InvokeFunction on this ARN to callers' });
    new CfnOutput(this, 'JobQueueUrl', { value: this.jobs.queue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.jobs.deadLetterQueue.queueUrl });
    if (this.screenshotJobs) new CfnOutput(this, 'ScreenshotQueueUrl', { value: this.screenshotJobs.queue.queueUrl });
    if (this.alarms.topic) new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn });
  }
}
