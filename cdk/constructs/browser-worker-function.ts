import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { AWS_BROWSER_LANES, browserWorkerMemoryMb } from '../../lib/browser/lanes.js';
import { DEFAULTS, ENV } from '../../lib/core-settings.js';
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

/**
 * The browser worker's memory, from the browser's figures (lib/browser/lanes.ts): the worker
 * process, Chromium's own memory and one page at its cap (LINKPREVIEW_BROWSER_PAGE_MB's default),
 * at least one vCPU's worth. Its lanes: AWS_BROWSER_LANES (one page at a time, one job a batch).
 */
export const BROWSER_WORKER_MEMORY_MB = browserWorkerMemoryMb(DEFAULTS.browserPageMb, AWS_BROWSER_LANES);

export interface BrowserWorkerFunctionProps {
  /** sharp (a screenshot is hosted as the four image sizes) and the browser. */
  sharpLayer: lambda.ILayerVersion;
  browserLayer: lambda.ILayerVersion;
  timeout?: Duration;
  /** Chromium wants memory (and gets CPU with it): BROWSER_WORKER_MEMORY_MB by default. */
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
      memorySize: props.memorySize ?? BROWSER_WORKER_MEMORY_MB,
      reservedConcurrency: props.reservedConcurrency,
      layers: [props.sharpLayer, props.browserLayer],
      logRetention: props.logRetention,
      environment: {
        [ENV.screenshots]: 'on',
        // One page at a time (its Chromium is a single process, where pages share one renderer
        // thread): the worker's instances are the lanes.
        [ENV.jobConcurrency]: String(AWS_BROWSER_LANES),
        [ENV.browserConcurrency]: String(AWS_BROWSER_LANES),
        [ENV.screenshotTimeoutMs]: String(LAMBDA_SCREENSHOT_TIMEOUT.toMilliseconds()),
      },
    });
  }
}
