import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ASSET_CONTENT_SECURITY_POLICY, ASSET_METADATA, VERSION_ORIGIN } from '../../lib/asset-metadata.js';
import { DEFAULTS, ENV, JOBS_EXPIRE_DAYS } from '../../lib/core-settings.js';
import { ASSETS_PREFIX, BATCHES_PREFIX, JOBS_PREFIX } from '../../lib/storage-keys.js';
import { VersionOriginFunction } from './version-origin-function.js';

export interface AssetStoreProps {
  /** Days job results and inputs are kept (`jobs/`). Default JOBS_EXPIRE_DAYS (lib/core-settings.ts), which the memos' settings are capped by. */
  jobsExpireDays?: number;
  /** What `cdk destroy` does with the bucket. Default RETAIN (empty and delete it yourself). */
  removalPolicy?: RemovalPolicy;
  /** Days the batches' records are kept (`batches/`): a day past LINKPREVIEW_BATCH_TTL_DAYS, after which the service answers 404 for them. Default: the setting's default and one. */
  batchesExpireDays?: number;
}

export type BucketAccess = 'read' | 'write' | 'delete';

/**
 * One private bucket: `assets/` (rendered images, page versions; public only through CloudFront
 * with Origin Access Control and a year-long cache policy) and `jobs/` (job inputs and results,
 * expired after a day). No public access, S3-managed encryption, TLS only. A page version asked
 * for before its job stored it is answered by a function once it is (VersionOriginFunction, the
 * distribution's second origin for `assets/*\/page.*`).
 */
export class AssetStore extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly cachePolicy: cloudfront.CachePolicy;
  readonly responseHeadersPolicy: cloudfront.ResponseHeadersPolicy;
  /** The page versions' origin: reached only when S3 has no object yet for a version's address. */
  readonly versionOrigin: VersionOriginFunction;

  constructor(scope: Construct, id: string, props: AssetStoreProps = {}) {
    super(scope, id);
    this.bucket = privateBucket(this, props);
    this.cachePolicy = immutableCachePolicy(this);
    this.responseHeadersPolicy = assetResponseHeadersPolicy(this);
    this.versionOrigin = new VersionOriginFunction(this, 'VersionOrigin', { bucket: this.bucket });
    this.distribution = assetDistribution(this, {
      bucket: this.bucket,
      cachePolicy: this.cachePolicy,
      responseHeadersPolicy: this.responseHeadersPolicy,
      versionOrigin: this.versionOrigin.fn,
    });
    this.bucket.addToResourcePolicy(cloudFrontReadsAssets(this.bucket, this.distribution));
  }

  /** The https base URL of the distribution (asset URLs are `<base>/assets/...`). */
  get publicUrl(): string {
    return `https://${this.distribution.distributionDomainName}`;
  }

  /**
   * Lets a function use the bucket: sets LINKPREVIEW_BUCKET and LINKPREVIEW_PUBLIC_URL, and grants
   * exactly the object actions on exactly the prefixes given. Reads also get s3:ListBucket limited
   * to those prefixes, so a missing key is a 404 rather than a 403.
   */
  grantTo(fn: lambda.Function, access: Partial<Record<BucketAccess, string[]>>): void {
    fn.addEnvironment(ENV.bucket, this.bucket.bucketName);
    fn.addEnvironment(ENV.publicUrl, this.publicUrl);
    const objects = (prefixes: string[]) => prefixes.map((p) => this.bucket.arnForObjects(`${p}*`));
    if (access.read?.length) {
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: objects(access.read) }));
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [this.bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': access.read.map((p) => `${p}*`) } },
        }),
      );
    }
    if (access.write?.length) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: objects(access.write) }));
    if (access.delete?.length) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: objects(access.delete) }));
  }

  addOutputs(scope: Construct): void {
    new CfnOutput(scope, 'AssetsDomain', { value: this.distribution.distributionDomainName, description: 'CloudFront domain serving /assets/...' });
    new CfnOutput(scope, 'AssetsBucketName', { value: this.bucket.bucketName, description: 'Private bucket (assets/ and jobs/)' });
  }
}

/** The bucket: private, S3-managed encryption, TLS only; `jobs/` and `batches/` expire, incomplete uploads are aborted. */
function privateBucket(scope: Construct, props: AssetStoreProps): s3.Bucket {
  return new s3.Bucket(scope, 'Bucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    lifecycleRules: [
      { id: 'expire-job-results', prefix: JOBS_PREFIX, expiration: Duration.days(props.jobsExpireDays ?? JOBS_EXPIRE_DAYS) },
      { id: 'expire-batches', prefix: BATCHES_PREFIX, expiration: Duration.days(props.batchesExpireDays ?? DEFAULTS.batchTtlDays + 1) },
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ],
  });
}

/**
 * Assets never change once built (content-addressed, or a page version at its page's address):
 * each is stored `immutable` for a year, and cached for as long as it says. The minimum is 0, so
 * that a page version's stand-in (`no-cache`: lib/page/page-versions.ts) is not kept, and the
 * version built over it later is what a viewer gets.
 */
function immutableCachePolicy(scope: Construct): cloudfront.CachePolicy {
  return new cloudfront.CachePolicy(scope, 'ImmutableCachePolicy', {
    comment: 'linklens assets: immutable for a year; a page version stand-in no-cache',
    defaultTtl: Duration.days(365),
    minTtl: Duration.seconds(0),
    maxTtl: Duration.days(365),
    cookieBehavior: cloudfront.CacheCookieBehavior.none(),
    headerBehavior: cloudfront.CacheHeaderBehavior.none(),
    queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
}

/**
 * The managed SECURITY_HEADERS policy's headers, plus the assets' own CSP (a hosted page version
 * runs nothing and shows only this origin's images: the local server sends the same,
 * functions/local-assets.ts), and without the S3 metadata the assets are stored with (an image's
 * manifest, a version's siblings): for the functions' HEADs, not for viewers.
 */
function assetResponseHeadersPolicy(scope: Construct): cloudfront.ResponseHeadersPolicy {
  return new cloudfront.ResponseHeadersPolicy(scope, 'ResponseHeadersPolicy', {
    comment: 'linklens assets: security headers, the assets CSP, no S3 metadata',
    securityHeadersBehavior: {
      contentSecurityPolicy: { contentSecurityPolicy: ASSET_CONTENT_SECURITY_POLICY, override: true },
      contentTypeOptions: { override: true },
      frameOptions: { frameOption: cloudfront.HeadersFrameOption.SAMEORIGIN, override: false },
      referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: false },
      strictTransportSecurity: { accessControlMaxAge: Duration.days(365), override: false },
      xssProtection: { protection: true, modeBlock: true, override: false },
    },
    removeHeaders: Object.values(ASSET_METADATA).map((name) => `x-amz-meta-${name}`),
  });
}

/** What the distribution serves, and how. */
interface DistributionParts {
  bucket: s3.Bucket;
  cachePolicy: cloudfront.CachePolicy;
  responseHeadersPolicy: cloudfront.ResponseHeadersPolicy;
  versionOrigin: lambda.Function;
}

/** The page versions' addresses (`assets/<digest>/page.html|page.md|page.txt`: lib/page/page-versions.ts). */
export const VERSIONS_PATH_PATTERN = `${ASSETS_PREFIX}*/page.*`;

/** Errors the distribution never keeps: an address asked for too early must not stay a 403 or 404 once it exists. */
export const UNCACHED_ERRORS = [403, 404, 500, 502, 503, 504];

/**
 * The distribution in front of the bucket, through Origin Access Control. CDK's own grant would
 * open the whole bucket to the distribution; it is given a read-only view of the bucket instead,
 * and one bucket policy statement (cloudFrontReadsAssets) opens `assets/*` only (so `jobs/` stays
 * private even through CloudFront).
 *
 * The page versions (VERSIONS_PATH_PATTERN) come from an origin group: S3 first, and when S3
 * answers 403 or 404 (a version a record named, asked for before its job stored it), the
 * versions' origin, a Lambda function URL that only CloudFront may call (Origin Access Control,
 * IAM auth), which answers once the version is stored. No error is cached (UNCACHED_ERRORS, TTL 0).
 */
function assetDistribution(scope: Construct, { bucket, cachePolicy, responseHeadersPolicy, versionOrigin }: DistributionParts): cloudfront.Distribution {
  const bucketView = s3.Bucket.fromBucketAttributes(scope, 'BucketView', {
    bucketName: bucket.bucketName,
    bucketArn: bucket.bucketArn,
    bucketRegionalDomainName: bucket.bucketRegionalDomainName,
  });
  const originAccessControl = new cloudfront.S3OriginAccessControl(scope, 'OriginAccessControl', {
    description: 'linklens assets',
    signing: cloudfront.Signing.SIGV4_ALWAYS,
  });
  const bucketOrigin = origins.S3BucketOrigin.withOriginAccessControl(bucketView, { originAccessControl });
  const url = versionOrigin.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
  const versions = new origins.OriginGroup({
    primaryOrigin: bucketOrigin,
    fallbackOrigin: origins.FunctionUrlOrigin.withOriginAccessControl(url, { readTimeout: Duration.seconds(VERSION_ORIGIN.timeoutS) }),
    fallbackStatusCodes: [403, 404],
  });
  const behavior = {
    cachePolicy,
    viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
    compress: true,
    responseHeadersPolicy,
  };
  const distribution = new cloudfront.Distribution(scope, 'Distribution', {
    comment: 'linklens assets',
    defaultBehavior: { origin: bucketOrigin, ...behavior },
    additionalBehaviors: { [VERSIONS_PATH_PATTERN]: { origin: versions, ...behavior } },
    errorResponses: UNCACHED_ERRORS.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
    priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
    httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
  });
  Annotations.of(distribution).acknowledgeWarning(
    '@aws-cdk/aws-cloudfront-origins:updateImportedBucketPolicyOac',
    'The bucket policy statement for the OAC is added by AssetStore, scoped to assets/*.',
  );
  return distribution;
}

/** The bucket policy statement that lets this distribution, and only it, read `assets/*`. */
function cloudFrontReadsAssets(bucket: s3.Bucket, distribution: cloudfront.Distribution): iam.PolicyStatement {
  const stack = Stack.of(bucket);
  return new iam.PolicyStatement({
    sid: 'CloudFrontReadsAssets',
    effect: iam.Effect.ALLOW,
    principals: [new iam.ServicePrincipal('cloudfront.amazonaws.com')],
    actions: ['s3:GetObject'],
    resources: [bucket.arnForObjects(`${ASSETS_PREFIX}*`)],
    conditions: {
      StringEquals: { 'AWS:SourceArn': `arn:${stack.partition}:cloudfront::${stack.account}:distribution/${distribution.distributionId}` },
    },
  });
}
