import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULTS, ENV } from '../../lib/core-settings.js';
import type { BundleSpec } from './bundle-specs.js';
import { functionCode } from './bundling.js';
import { LAMBDA_RUNTIME } from './lambda-runtime.js';

export interface LinklensFunctionProps {
  /** The function's code: its entry and what ships beside it. */
  bundle: BundleSpec;
  /** Powertools' service name: its logs and traces carry it, and its own metrics are under it (the alarms read them there). */
  serviceName: string;
  description: string;
  timeout: Duration;
  memorySize: number;
  /** Caps how many instances run at once; unset: unreserved. */
  reservedConcurrency?: number;
  layers?: lambda.ILayerVersion[];
  /** The function's own settings, by variable (`ENV`). */
  environment?: Record<string, string>;
  /** Default one month. */
  logRetention?: logs.RetentionDays;
}

/**
 * What every linklens function is: its bundle (bundling.ts) on nodejs24.x (LAMBDA_RUNTIME), x86_64
 * (the layers are linux-x64 glibc builds, and @sparticuz/chromium's binary is x86_64), active
 * tracing, its own log group with a retention, and Powertools' service name and metrics namespace
 * in its environment. PreviewFunction, WorkerFunction and BrowserWorkerFunction add their bundle,
 * size and settings.
 */
export class LinklensFunction extends Construct {
  readonly fn: lambda.Function;
  readonly timeout: Duration;
  readonly serviceName: string;
  /** Powertools' metrics namespace: the settings' default (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string = DEFAULTS.metricsNamespace;

  constructor(scope: Construct, id: string, props: LinklensFunctionProps) {
    super(scope, id);
    this.timeout = props.timeout;
    this.serviceName = props.serviceName;
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.fn = new lambda.Function(this, 'Function', {
      code: functionCode(props.bundle),
      handler: 'index.handler',
      runtime: LAMBDA_RUNTIME,
      architecture: lambda.Architecture.X86_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      layers: props.layers,
      description: props.description,
      environment: {
        POWERTOOLS_SERVICE_NAME: this.serviceName,
        [ENV.metricsNamespace]: this.metricsNamespace,
        ...props.environment,
      },
    });
  }
}
