/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. Settings come from context (`-c key=value` or
 * cdk.json / cdk.context.json):
 *
 *   apiKeyHashes               comma-separated SHA-256 hex digests of the bearer keys (npm run keygen)
 *   corsOrigins                comma-separated origins allowed by CORS (default: CORS off)
 *   throttleRateLimit          stage requests per second (default 20)
 *   throttleBurstLimit         stage burst (default 40)
 *   workerReservedConcurrency  reserved concurrency of the worker (default: unreserved)
 *   workerBatchSize            SQS messages per worker invocation (default 4)
 *   alarmTopicArn              an existing SNS topic ARN the alarms notify (alarm and OK)
 *   alarmEmail                 or: an address; the stack creates a topic and subscribes it (confirm the email)
 *                              (neither: the alarms exist without actions; both: refused)
 *   destroyBucket              true: `cdk destroy` deletes the bucket too (it must be empty)
 *   stackName                  default LinkLens
 *
 * No account or region is needed to synthesize; deploy uses your AWS profile's.
 */
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { LinkPreviewStack } from './link-preview-stack.js';

const app = new App();
const ctx = (key: string): string | undefined => {
  const v = app.node.tryGetContext(key);
  if (v === undefined || v === null || v === '') return undefined;
  return Array.isArray(v) ? v.join(',') : String(v);
};
const list = (key: string) => (ctx(key) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const num = (key: string) => {
  const v = ctx(key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`context ${key} must be a whole number (got ${v})`);
  return n;
};

const rate = num('throttleRateLimit');
const burst = num('throttleBurstLimit');
new LinkPreviewStack(app, ctx('stackName') ?? 'LinkLens', {
  description: 'linklens: self-hosted link previews (API Gateway, Lambda, SQS, S3, CloudFront)',
  env: process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
  apiKeyHashes: list('apiKeyHashes').map((h) => h.toLowerCase()),
  corsOrigins: list('corsOrigins'),
  throttle: rate !== undefined || burst !== undefined ? { rateLimit: rate ?? 20, burstLimit: burst ?? 40 } : undefined,
  workerReservedConcurrency: num('workerReservedConcurrency'),
  workerBatchSize: num('workerBatchSize'),
  alarmTopicArn: ctx('alarmTopicArn'),
  alarmEmail: ctx('alarmEmail'),
  bucketRemovalPolicy: ctx('destroyBucket') === 'true' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
});
