import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';
import { functionCode, SCREENSHOT_WORKER_BUNDLE } from './bundling.js';

export interface ScreenshotWorkerFunctionProps {
  /** sharp (the screenshot is hosted as the four image sizes) and the browser. */
  sharpLayer: lambda.ILayerVersion;
  browserLayer: lambda.ILayerVersion;
  timeout?: Duration;
  /** Chromium wants memory (and gets CPU with it): 2048 MB by default. */
  memorySize?: number;
  reservedConcurrency?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The screenshot worker (functions/screenshot-worker.ts): the job worker with a headless Chromium,
 * fed by its own queue so the browser's memory is paid only for screenshots. playwright-core is
 * shipped beside the bundle (it does not bundle well); @sparticuz/chromium comes from the layer.
 */
export class ScreenshotWorkerFunction extends Construct {
  readonly fn: lambda.Function;
  readonly timeout: Duration;

  constructor(scope: Construct, id: string, props: ScreenshotWorkerFunctionProps) {
    super(scope, id);
    this.timeout = props.timeout ?? Duration.seconds(60);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.fn = new lambda.Function(this, 'Function', {
      code: functionCode(SCREENSHOT_WORKER_BUNDLE),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.X86_64, // @sparticuz/chromium's binary is x86_64
      memorySize: props.memorySize ?? 2048,
      ephemeralStorageSize: undefined, // Chromium unpacks to /tmp (about 200 MB of the default 512 MB)
      timeout: this.timeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      layers: [props.sharpLayer, props.browserLayer],
      description: 'linklens: page screenshots in headless Chromium, from SQS',
      environment: {
        POWERTOOLS_SERVICE_NAME: 'linklens-screenshot-worker',
        [ENV.metricsNamespace]: 'linklens',
        [ENV.screenshots]: 'on',
        // One page at a time: a Chromium tab per job would compete for the same memory.
        [ENV.jobConcurrency]: '1',
        [ENV.screenshotTimeoutMs]: '15000',
      },
    });
  }
}
