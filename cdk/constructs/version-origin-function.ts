import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { VERSION_ORIGIN } from '../../lib/asset-metadata.js';
import { ENV } from '../../lib/core-settings.js';
import { ASSETS_PREFIX, memoPrefix } from '../../lib/storage-keys.js';
import { VERSION_ORIGIN_BUNDLE } from './bundle-specs.js';
import { LinklensFunction } from './linklens-function.js';

/** The page memos, which say whether a record named a version and until when its job runs (lib/page/page-memo.ts). */
/** The page memos it reads (the preview's and the page-content job's), and writes when it stores stand-ins. */
const PAGE_MEMOS = [memoPrefix('page'), memoPrefix('page-content')];

export interface VersionOriginFunctionProps {
  bucket: s3.IBucket;
  /** Default 256 MB: it mostly waits. */
  memorySize?: number;
  logRetention?: logs.RetentionDays;
}

/**
 * The page versions' origin (functions/version-origin.ts): CloudFront's second origin for a
 * version asked for before its job stored it. It reads the page memos and the versions, and writes
 * a version's stand-in and the memos that forget it: `jobs/page/`, `jobs/page-content/` and
 * `assets/` only. Its own
 * environment names the bucket, not the distribution (which names it: no cycle).
 */
export class VersionOriginFunction extends LinklensFunction {
  constructor(scope: Construct, id: string, props: VersionOriginFunctionProps) {
    super(scope, id, {
      bundle: VERSION_ORIGIN_BUNDLE,
      serviceName: 'linklens-version-origin',
      description: 'linklens: answers a page version asked for before it is stored, once it is (CloudFront origin group)',
      timeout: Duration.seconds(VERSION_ORIGIN.timeoutS),
      memorySize: props.memorySize ?? 256,
      logRetention: props.logRetention,
      environment: { [ENV.bucket]: props.bucket.bucketName },
    });
    const { bucket } = props;
    const prefixes = [ASSETS_PREFIX, ...PAGE_MEMOS];
    const objects = prefixes.map((p) => bucket.arnForObjects(`${p}*`));
    this.fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: objects }));
    // A missing key is then a 404, not a 403.
    this.fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
      }),
    );
  }
}
