import { Duration } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';
import { PREVIEW_BUNDLE } from './bundling.js';
import { LinklensFunction } from './linklens-function.js';

/** API Gateway's hard limit on an integration (the record must be out before it). */
export const API_LIMIT = Duration.seconds(29);

export interface PreviewFunctionProps {
  timeout?: Duration;
  /** The budget of the synchronous wait for jobs, from the start of the invocation (< timeout). */
  jobDeadline?: Duration;
  /** The record deadline counted after the page fetch (jobs still running then are left out). */
  recordDeadline?: Duration;
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
  readonly jobDeadline: Duration;

  constructor(scope: Construct, id: string, props: PreviewFunctionProps = {}) {
    const timeout = props.timeout ?? Duration.seconds(28);
    const jobDeadline = props.jobDeadline ?? Duration.seconds(25);
    const recordDeadline = props.recordDeadline ?? Duration.seconds(15);
    const fetchTimeout = props.fetchTimeout ?? Duration.seconds(8);
    if (jobDeadline.toMilliseconds() >= timeout.toMilliseconds()) throw new Error('The job deadline must be shorter than the preview timeout');
    if (timeout.toMilliseconds() >= API_LIMIT.toMilliseconds() + 1) throw new Error('The preview timeout must be within the 29 s API Gateway limit');
    super(scope, id, {
      // AWS adapters only: the local fallback (and with it the job code) is left out of the bundle.
      bundle: PREVIEW_BUNDLE,
      serviceName: 'linklens-preview',
      description: 'linklens: POST / -> Link record (API Gateway and direct invocation)',
      timeout,
      memorySize: props.memorySize ?? 1024,
      logRetention: props.logRetention,
      environment: {
        [ENV.requestBudgetMs]: String(jobDeadline.toMilliseconds()),
        [ENV.jobWaitMs]: String(recordDeadline.toMilliseconds()),
        [ENV.fetchTimeoutMs]: String(fetchTimeout.toMilliseconds()),
      },
    });
    this.jobDeadline = jobDeadline;
  }
}
