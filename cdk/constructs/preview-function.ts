import { Duration } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { API_GATEWAY_LIMIT_MS, DEFAULTS, ENV } from '../../lib/core-settings.js';
import { PREVIEW_BUNDLE } from './bundle-specs.js';
import { LinklensFunction } from './linklens-function.js';

/** API Gateway's hard limit on an integration (the record must be out before it). */
export const API_LIMIT = Duration.seconds(API_GATEWAY_LIMIT_MS / 1000);

/**
 * The preview Lambda's fetch timeout and job wait, shorter than the settings' defaults
 * (LINKPREVIEW_FETCH_TIMEOUT_MS, LINKPREVIEW_JOB_WAIT_MS) on purpose: together they fit in its
 * request budget, so a page that takes its whole fetch timeout still leaves its jobs their whole
 * wait before the budget ends. The defaults do not fit (a fast fetch gives the jobs more time, and
 * the budget cuts the rest). test/cdk/stack.test.ts checks both.
 */
export const LAMBDA_FETCH_TIMEOUT = Duration.seconds(8);
export const LAMBDA_JOB_WAIT = Duration.seconds(15);

export interface PreviewFunctionProps {
  timeout?: Duration;
  /** The whole request's time budget, from the start of the invocation (< timeout). Default: the setting's. */
  requestBudget?: Duration;
  /** The jobs' deadline, counted from when they start (after the page fetch); jobs still running then are left out. */
  jobWait?: Duration;
  fetchTimeout?: Duration;
  memorySize?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The thin preview function (functions/preview.ts): validates the request and key, fetches and
 * extracts the page, fans the heavy jobs out and assembles the record. Bundled small: no job code
 * (sharp, ffprobe) and no AWS SDK (the runtime has it). Its keys are set by ApiKeys.bind.
 */
export class PreviewFunction extends LinklensFunction {
  readonly requestBudget: Duration;

  constructor(scope: Construct, id: string, props: PreviewFunctionProps = {}) {
    const timeout = props.timeout ?? Duration.seconds(28);
    const requestBudget = props.requestBudget ?? Duration.millis(DEFAULTS.requestBudgetMs);
    const jobWait = props.jobWait ?? LAMBDA_JOB_WAIT;
    const fetchTimeout = props.fetchTimeout ?? LAMBDA_FETCH_TIMEOUT;
    if (requestBudget.toMilliseconds() >= timeout.toMilliseconds()) throw new Error('The request budget must be shorter than the preview timeout');
    if (timeout.toMilliseconds() >= API_LIMIT.toMilliseconds() + 1)
      throw new Error(`The preview timeout must be within the ${API_LIMIT.toSeconds()} s API Gateway limit`);
    super(scope, id, {
      // AWS adapters only: the local fallback (and with it the job code) is left out of the bundle.
      bundle: PREVIEW_BUNDLE,
      serviceName: 'linklens-preview',
      description: 'linklens: POST / -> Link record (API Gateway and direct invocation)',
      timeout,
      memorySize: props.memorySize ?? 1024,
      logRetention: props.logRetention,
      environment: {
        [ENV.requestBudgetMs]: String(requestBudget.toMilliseconds()),
        [ENV.jobWaitMs]: String(jobWait.toMilliseconds()),
        [ENV.fetchTimeoutMs]: String(fetchTimeout.toMilliseconds()),
      },
    });
    this.requestBudget = requestBudget;
  }
}
