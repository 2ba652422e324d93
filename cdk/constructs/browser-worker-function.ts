import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';
import { BROWSER_WORKER_BUNDLE } from './bundle-specs.js';
import { LinklensFunction } from './linklens-function.js';
import { LAMBDA_JOB_WAIT } from './preview-function.js';

/**
 * A screenshot's time cap in the browser worker: the preview Lambda's job wait, over the setting's
 * default (LINKPREVIEW_SCREENSHOT_TIMEOUT_MS) on purpose. The job is stopped at its deadline anyway
 * (the job wait, counted from the preview's fan-out), so that deadline, not a shorter cap of its
 * own, ends a slow capture, one that launches Chromium in a cold container included.
 * test/cdk/stack.test.ts checks that it ends within the worker's timeout.
 */
export const LAMBDA_SCREENSHOT_TIMEOUT = LAMBDA_JOB_WAIT;

export interface BrowserWorkerFunctionProps {
  /** sharp (a screenshot is hosted as the four image sizes) and the browser. */
  sharpLayer: lambda.ILayerVersion;
  browserLayer: lambda.ILayerVersion;
  timeout?: Duration;
  /** Chromium wants memory (and gets CPU with it): 2048 MB by default. */
  memorySize?: number;
  reservedConcurrency?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The browser worker (functions/browser-worker.ts): the job worker with a headless Chromium, fed
 * by its own queue so the browser's memory is paid only for the jobs that need it (screenshots, renders).
 * playwright-core is shipped beside the bundle (it does not bundle well); @sparticuz/chromium
 * comes from the layer. Chromium unpacks to /tmp: about 200 MB of the default 512 MB of ephemeral
 * storage.
 */
export class BrowserWorkerFunction extends LinklensFunction {
  constructor(scope: Construct, id: string, props: BrowserWorkerFunctionProps) {
    super(scope, id, {
      bundle: BROWSER_WORKER_BUNDLE,
      serviceName: 'linklens-browser-worker',
      description: 'linklens: jobs in headless Chromium (page screenshots and renders), from SQS',
      timeout: props.timeout ?? Duration.seconds(60),
      memorySize: props.memorySize ?? 2048,
      reservedConcurrency: props.reservedConcurrency,
      layers: [props.sharpLayer, props.browserLayer],
      logRetention: props.logRetention,
      environment: {
        [ENV.screenshots]: 'on',
        // One page at a time: a Chromium tab per job would compete for the same memory.
        [ENV.jobConcurrency]: '1',
        [ENV.screenshotTimeoutMs]: String(LAMBDA_SCREENSHOT_TIMEOUT.toMilliseconds()),
      },
    });
  }
}
