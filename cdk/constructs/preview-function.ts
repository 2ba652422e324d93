import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';
import { functionCode, PREVIEW_BUNDLE } from './bundling.js';

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
export class PreviewFunction extends Construct {
  readonly fn: lambda.Function;
  readonly timeout: Duration;
  readonly jobDeadline: Duration;
  /** Powertools' service name and metrics namespace (the function's own metrics are under them). */
  readonly serviceName = 'linklens-preview';
  readonly metricsNamespace = 'linklens';

  constructor(scope: Construct, id: string, props: PreviewFunctionProps = {}) {
    super(scope, id);
    this.timeout = props.timeout ?? Duration.seconds(28);
    this.jobDeadline = props.jobDeadline ?? Duration.seconds(25);
    const recordDeadline = props.recordDeadline ?? Duration.seconds(15);
    const fetchTimeout = props.fetchTimeout ?? Duration.seconds(8);
    if (this.jobDeadline.toMilliseconds() >= this.timeout.toMilliseconds()) throw new Error('The job deadline must be shorter than the preview timeout');
    if (this.timeout.toMilliseconds() >= API_LIMIT.toMilliseconds() + 1) throw new Error('The preview timeout must be within the 29 s API Gateway limit');

    const logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.fn = new lambda.Function(this, 'Function', {
      // AWS adapters only: the local fallback (and with it the job code) is left out of the bundle.
      code: functionCode(PREVIEW_BUNDLE),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.X86_64,
      memorySize: props.memorySize ?? 1024,
      timeout: this.timeout,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      description: 'linklens: POST / -> Link record (API Gateway and direct invocation)',
      environment: {
        POWERTOOLS_SERVICE_NAME: this.serviceName,
        [ENV.metricsNamespace]: this.metricsNamespace,
        [ENV.requestBudgetMs]: String(this.jobDeadline.toMilliseconds()),
        [ENV.jobWaitMs]: String(recordDeadline.toMilliseconds()),
        [ENV.fetchTimeoutMs]: String(fetchTimeout.toMilliseconds()),
      },
    });
  }
}
