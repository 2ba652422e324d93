/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. Settings come from context (`-c key=value` or
 * cdk.json / cdk.context.json):
 *
 *   apiKeyHashes               comma-separated SHA-256 hex digests of the bearer keys (npm run keygen)
 *   apiKeyParameter            or: an SSM parameter (name or ARN) holding them, read at run time
 *   apiKeyParameterKeyArn      its customer managed KMS key, if a SecureString has one (not for aws/ssm)
 *   apiKeySecret               or: a Secrets Manager secret (name or ARN) holding them
 *   apiKeyCacheSeconds         how long the function caches the parameter's or secret's digests (default 300)
 *   proxySecret                a Secrets Manager secret (name or ARN) holding the forward proxy's URL
 *                              (http://user:password@host:port), for sites that wall datacenter addresses
 *   proxyParameter             or: an SSM SecureString (name or ARN) holding it
 *   proxyParameterKeyArn       its customer managed KMS key, if it has one (not for aws/ssm)
 *   proxyMode                  fallback (default), hosts or always
 *   proxyHosts                 comma-separated hosts that go to the proxy first (fallback) or only (hosts),
 *                              written as `<host>=proxy` host rules after hostRules
 *   hostRules                  LINKPREVIEW_HOST_RULES: `pattern=actions` rules separated by `;` (docs/configuration.md)
 *   corsOrigins                comma-separated origins allowed by CORS (default: CORS off)
 *   playground                 false: no playground page at GET / (default true; it holds no key)
 *   embeds                     off: no record carries a player (default on)
 *   embedOrigins               comma-separated https player origins added to the built-in list
 *   embedParents               comma-separated domains of the pages that show the players (Twitch's parent)
 *   throttleRateLimit          stage requests per second (default: DEFAULT_THROTTLE, cdk/constructs/preview-api.ts)
 *   throttleBurstLimit         stage burst (default: DEFAULT_THROTTLE)
 *   workerReservedConcurrency  reserved concurrency of the worker (default: unreserved)
 *   workerBatchSize            SQS messages per worker invocation (default 4)
 *   batches                    off: no POST /previews (no batch queues, webhook function or secret; default on)
 *   batchConcurrency           batch items previewed at once (2 to 1000, default 5)
 *   batchTtlDays               LINKPREVIEW_BATCH_TTL_DAYS: days a batch's records are kept (default 7)
 *   batchMaxQueued             LINKPREVIEW_BATCH_MAX_QUEUED: a key's items in batches not yet complete (default 10000)
 *   webhookSecret              an existing Secrets Manager secret (name or ARN) the webhooks are signed with
 *                              (default: one generated; rotate by putting the new and the old in its value)
 *   alarmTopicArn              an existing SNS topic ARN the alarms notify (alarm and OK)
 *   alarmEmail                 or: an address; the stack creates a topic and subscribes it (confirm the email)
 *                              (neither: the alarms exist without actions; both: refused)
 *   destroyBucket              true: `cdk destroy` deletes the bucket too (it must be empty)
 *   stackName                  default LinkLens
 *
 * No account or region is needed to synthesize; deploy uses your AWS profile's.
 */
import { App, Duration, RemovalPolicy } from 'aws-cdk-lib';
import { ApiKeys } from './constructs/api-keys.js';
import { OutboundProxy } from './constructs/outbound-proxy.js';
import { LinkPreviewStack } from './link-preview-stack.js';

const app = new App();
const ctx = (key: string): string | undefined => {
  const v = app.node.tryGetContext(key);
  if (v === undefined || v === null || v === '') return undefined;
  return Array.isArray(v) ? v.join(',') : String(v);
};
const list = (key: string) =>
  (ctx(key) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const num = (key: string) => {
  const v = ctx(key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`context ${key} must be a whole number (got ${v})`);
  return n;
};

/** One source of key digests: the hashes themselves, an SSM parameter or a secret (none: every call is refused). */
function apiKeys(): ApiKeys {
  const parameter = ctx('apiKeyParameter');
  const secret = ctx('apiKeySecret');
  const hashes = list('apiKeyHashes');
  const given = [hashes.length > 0 && 'apiKeyHashes', parameter && 'apiKeyParameter', secret && 'apiKeySecret'].filter(Boolean);
  if (given.length > 1) throw new Error(`${given.join(' and ')}: give one source of keys`);
  const cacheSeconds = num('apiKeyCacheSeconds');
  const cacheTtl = cacheSeconds === undefined ? undefined : Duration.seconds(cacheSeconds);
  if (parameter) return ApiKeys.fromParameter(parameter, { cacheTtl, encryptionKey: ctx('apiKeyParameterKeyArn') });
  if (secret) return ApiKeys.fromSecret(secret, { cacheTtl });
  return ApiKeys.fromHashes(hashes);
}

/** The forward proxy, when a secret or a parameter holds its URL. */
function proxy(): OutboundProxy | undefined {
  const secret = ctx('proxySecret');
  const parameter = ctx('proxyParameter');
  if (secret && parameter) throw new Error('proxySecret and proxyParameter: give one source of the proxy URL');
  const mode = ctx('proxyMode');
  const modes = ['fallback', 'hosts', 'always'] as const;
  const known = modes.find((m) => m === mode);
  if (mode !== undefined && !known) throw new Error(`context proxyMode must be fallback, hosts or always (got ${mode})`);
  const options = { mode: known, hosts: list('proxyHosts') };
  if (secret) return OutboundProxy.fromSecret(secret, options);
  if (parameter) return OutboundProxy.fromParameter(parameter, { ...options, encryptionKey: ctx('proxyParameterKeyArn') });
  return undefined;
}

new LinkPreviewStack(app, ctx('stackName') ?? 'LinkLens', {
  description: 'linklens: self-hosted link previews (API Gateway, Lambda, SQS, S3, CloudFront)',
  env: process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
  apiKeys: apiKeys(),
  proxy: proxy(),
  hostRules: ctx('hostRules'),
  corsOrigins: list('corsOrigins'),
  playground: ctx('playground') !== 'false',
  embeds: { enabled: ctx('embeds') !== 'off', origins: list('embedOrigins'), parents: list('embedParents') },
  throttle: { rateLimit: num('throttleRateLimit'), burstLimit: num('throttleBurstLimit') },
  workerReservedConcurrency: num('workerReservedConcurrency'),
  workerBatchSize: num('workerBatchSize'),
  batches: {
    enabled: ctx('batches') !== 'off',
    concurrency: num('batchConcurrency'),
    ttlDays: num('batchTtlDays'),
    maxQueuedPerKey: num('batchMaxQueued'),
    webhookSecret: ctx('webhookSecret'),
  },
  alarms: { topicArn: ctx('alarmTopicArn'), email: ctx('alarmEmail') },
  bucketRemovalPolicy: ctx('destroyBucket') === 'true' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
});
