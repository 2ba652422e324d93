import { Duration } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEFAULTS, ENV, LAMBDA_MB_PER_VCPU } from '../../lib/core-settings.js';
import { WORKER_BUNDLE } from './bundle-specs.js';
import { LinklensFunction } from './linklens-function.js';
import type { MediaLayers } from './media-layers.js';

/**
 * The worker's memory: one full vCPU (Lambda gives 1 vCPU per 1769 MB, and the jobs are CPU-bound,
 * so a job costs about the same GB-seconds at any size up to here while finishing sooner). Less
 * the idle process (300 MB) and headroom (64 MB) it leaves 1405 MB for jobs: the largest single
 * job (1118 MB: audio whose cover is a 50 MP picture with alpha) fits alone; four 50 MP JPEGs
 * (349 MB each), or a PDF (740 MB) beside an 8K video (471 MB), run together; the rest wait their
 * turn (lib/jobs/memory.ts; docs/deploy-aws.md, "Worker memory").
 */
export const WORKER_MEMORY_MB = LAMBDA_MB_PER_VCPU;

/** Records of a batch running at once, at most (the memory admission may run fewer): the setting's default (LINKPREVIEW_JOB_CONCURRENCY). */
export const WORKER_JOB_CONCURRENCY = DEFAULTS.jobConcurrency;

export interface WorkerFunctionProps {
  layers: MediaLayers;
  timeout?: Duration;
  /** Default WORKER_MEMORY_MB; the job admission follows whatever is set (AWS_LAMBDA_FUNCTION_MEMORY_SIZE). */
  memorySize?: number;
  /** Caps how many workers run at once (protects the account's concurrency); unset: unreserved. */
  reservedConcurrency?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The worker (functions/worker.ts): runs image/media jobs from SQS with the shared job code.
 * sharp comes from its layer (external in the bundle), ffprobe/ffmpeg from /opt/bin.
 */
export class WorkerFunction extends LinklensFunction {
  constructor(scope: Construct, id: string, props: WorkerFunctionProps) {
    super(scope, id, {
      // pdf.js runs in a worker thread from files shipped beside the bundle (WORKER_BUNDLE).
      bundle: WORKER_BUNDLE,
      serviceName: 'linklens-worker',
      description: 'linklens: runs preview jobs (images, media) from SQS',
      timeout: props.timeout ?? Duration.seconds(60),
      memorySize: props.memorySize ?? WORKER_MEMORY_MB,
      reservedConcurrency: props.reservedConcurrency,
      layers: [props.layers.ffmpeg, props.layers.sharp],
      logRetention: props.logRetention,
      environment: {
        [ENV.ffprobePath]: '/opt/bin/ffprobe',
        [ENV.ffmpegPath]: '/opt/bin/ffmpeg',
        [ENV.jobConcurrency]: String(WORKER_JOB_CONCURRENCY),
      },
    });
  }
}
