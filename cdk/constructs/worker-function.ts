import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { functionCode, WORKER_BUNDLE } from './bundling.js';
import type { MediaLayers } from './media-layers.js';

export interface WorkerFunctionProps {
  layers: MediaLayers;
  timeout?: Duration;
  memorySize?: number;
  /** Caps how many workers run at once (protects the account's concurrency); unset: unreserved. */
  reservedConcurrency?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The worker (functions/worker.ts): runs image/media jobs from SQS with the shared job code.
 * sharp comes from its layer (external in the bundle), ffprobe/ffmpeg from /opt/bin.
 */
export class WorkerFunction extends Construct {
  readonly fn: lambda.Function;
  readonly timeout: Duration;

  constructor(scope: Construct, id: string, props: WorkerFunctionProps) {
    super(scope, id);
    this.timeout = props.timeout ?? Duration.seconds(60);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.fn = new lambda.Function(this, 'Function', {
      // pdf.js runs in a worker thread from files shipped beside the bundle (WORKER_BUNDLE).
      code: functionCode(WORKER_BUNDLE),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.X86_64, // the layers are linux-x64 (glibc)
      memorySize: props.memorySize ?? 1536,
      timeout: this.timeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      layers: [props.layers.ffmpeg, props.layers.sharp],
      description: 'linklens: runs preview jobs (images, media) from SQS',
      environment: {
        POWERTOOLS_SERVICE_NAME: 'linklens-worker',
        POWERTOOLS_METRICS_NAMESPACE: 'linklens',
        LINKPREVIEW_FFPROBE_PATH: '/opt/bin/ffprobe',
        LINKPREVIEW_FFMPEG_PATH: '/opt/bin/ffmpeg',
        LINKPREVIEW_JOB_CONCURRENCY: '4',
      },
    });
  }
}
