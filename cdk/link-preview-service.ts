/**
 * linklens as one construct, for this repository's stack (cdk/link-preview-stack.ts) and for a
 * CDK app of your own (docs/deploy-aws.md, "Embed it in your own CDK app"):
 *
 *   const links = new LinkPreviewService(this, 'Links', { apiKeys: ApiKeys.fromParameter('/linklens/api-key-hashes') });
 *   links.grantInvoke(myFunction);
 */
import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { AWS_BROWSER_LANES } from '../lib/browser/lanes.js';
import { BATCHES, ENV } from '../lib/core-settings.js';
import { EMBEDS } from '../lib/embed/settings.js';
import { readHostRules, showHostRules, withProxyHosts } from '../lib/fetch/host-rules.js';
import { readSettings } from '../lib/settings.js';
import { ASSETS_PREFIX, JOBS_PREFIX } from '../lib/storage-keys.js';
import { Alarms } from './constructs/alarms.js';
import type { ApiKeys } from './constructs/api-keys.js';
import { AssetStore } from './constructs/asset-store.js';
import { Batches } from './constructs/batches.js';
import { BrowserLayer } from './constructs/browser-layer.js';
import { BrowserWorkerFunction } from './constructs/browser-worker-function.js';
import { JobQueue } from './constructs/job-queue.js';
import { MediaLayers } from './constructs/media-layers.js';
import type { OutboundProxy } from './constructs/outbound-proxy.js';
import { PreviewApi } from './constructs/preview-api.js';
import { PreviewFunction } from './constructs/preview-function.js';
import { ReplyQueues } from './constructs/reply-queues.js';
import { WorkerFunction } from './constructs/worker-function.js';

export { ApiKeys, DEFAULT_KEY_CACHE, type ParameterKeysOptions, type RemoteKeysOptions } from './constructs/api-keys.js';
export { OutboundProxy, type OutboundProxyOptions, type ParameterProxyOptions } from './constructs/outbound-proxy.js';

export interface LinkPreviewServiceProps {
  /** Where the preview function finds the bearer keys' SHA-256 digests: `ApiKeys.fromHashes`, `.fromParameter` or `.fromSecret`. */
  apiKeys: ApiKeys;
  /**
   * A forward proxy for the sites that wall datacenter addresses: `OutboundProxy.fromSecret` or
   * `.fromParameter` (the URL with its credentials stays in the secret). None: every fetch goes direct.
   */
  proxy?: OutboundProxy;
  /**
   * The operator's host rules (LINKPREVIEW_HOST_RULES, docs/configuration.md): ordered
   * `pattern=actions` rules separated by `;`, e.g. `intranet.example=deny;photos.example=metadata-only;*=deny`.
   * Set on every function that fetches (the preview and the workers); a malformed rule fails synth. None: no rules.
   * The `proxy`'s `hosts` are merged in as `<host>=proxy` rules after these.
   */
  hostRules?: string;
  /** Browser origins allowed to call the API (CORS). None: CORS is off. */
  corsOrigins?: string[];
  /**
   * The records' players (docs/embeds.md): `enabled: false` gives no record an `embed`
   * (LINKPREVIEW_EMBEDS=off); `origins` adds https player origins to the built-in list
   * (LINKPREVIEW_EMBED_ORIGINS); `parents` names the domains of the pages that show the players,
   * which Twitch needs (LINKPREVIEW_EMBED_PARENTS); `dailymotionPlayer` a Dailymotion player id.
   * Malformed values fail synth. None: the built-in players, no Twitch.
   */
  embeds?: { enabled?: boolean; origins?: string[]; parents?: string[]; dailymotionPlayer?: string };
  /**
   * The playground (GET / from a browser; docs/clients.md): a static page that holds no key. Default
   * true; false leaves its routes out and sets LINKPREVIEW_PLAYGROUND=false.
   */
  playground?: boolean;
  /** The API stage's steady requests per second and burst; either left out: DEFAULT_THROTTLE's (cdk/constructs/preview-api.ts). */
  throttle?: { rateLimit?: number; burstLimit?: number };
  /** Caps how many workers run at once (protects the account's concurrency). Default: unreserved. */
  workerReservedConcurrency?: number;
  /** SQS messages per worker invocation. Default 4. */
  workerBatchSize?: number;
  /** Page screenshots (in the browser worker). Default true. */
  screenshots?: boolean;
  /**
   * Pages built by JavaScript rendered in the browser worker before extraction: `auto` (default)
   * renders the app shells only, `on` every page, `off` none (docs/configuration.md, LINKPREVIEW_RENDER).
   */
  render?: 'auto' | 'on' | 'off';
  /** Caps how many browser workers run at once. Default: unreserved. */
  browserWorkerReservedConcurrency?: number;
  /**
   * Where the alarms notify (alarm and OK): an existing SNS topic of the same region, or a topic
   * created with this address subscribed. Neither: the alarms exist without actions; both: refused.
   */
  alarms?: { topicArn?: string; email?: string };
  /**
   * Batches (`POST /previews`, docs/batches.md): `enabled: false` leaves them out (the routes, the
   * queues, the webhook function, the secret). `concurrency`: items previewed at once (2 to 1000,
   * default 5): a batch never takes more instances of the preview function than that.
   * `ttlDays` (LINKPREVIEW_BATCH_TTL_DAYS) and `maxQueuedPerKey` (LINKPREVIEW_BATCH_MAX_QUEUED):
   * the settings'. `webhookSecret`: an existing Secrets Manager secret (or its name or ARN) to sign
   * the webhooks with (default: one generated). Default: enabled.
   */
  batches?: { enabled?: boolean; concurrency?: number; ttlDays?: number; maxQueuedPerKey?: number; webhookSecret?: secretsmanager.ISecret | string };
  /** Retain (default) or destroy the asset bucket on `cdk destroy`. */
  bucketRemovalPolicy?: RemovalPolicy;
  /** Replaces the built layer contents (tests: synthesizing without building the layers). */
  layerCode?: { ffmpeg: lambda.Code; sharp: lambda.Code; chromium?: lambda.Code };
}

/**
 * The whole service: API Gateway (HTTP API) -> preview Lambda -> SQS -> worker Lambdas -> S3,
 * with the preview waiting for the results; assets served by CloudFront; alarms.
 */
export class LinkPreviewService extends Construct {
  /** The preview function: POST / behind the API, and direct invocation by other Lambdas (`grantInvoke`). */
  readonly previewFunction: lambda.Function;
  /** The HTTP API (`api.url` is the URL to POST to). */
  readonly api: PreviewApi;
  /** The CloudFront domain serving `/assets/...` (the images in records). */
  readonly assetsDomain: string;

  readonly preview: PreviewFunction;
  readonly worker: WorkerFunction;
  readonly jobs: JobQueue;
  readonly store: AssetStore;
  /** The worker with a headless Chromium and its queue: there whenever a job that needs the browser is enabled. */
  readonly browserWorker?: BrowserWorkerFunction;
  readonly browserJobs?: JobQueue;
  /** The batches' queues, webhook function and secret (unless `batches.enabled` is false). */
  readonly batches?: Batches;
  readonly alarms: Alarms;

  constructor(scope: Construct, id: string, props: LinkPreviewServiceProps) {
    super(scope, id);
    const batchSettings = checkedBatchSettings(props.batches);
    this.store = new AssetStore(this, 'Assets', {
      removalPolicy: props.bucketRemovalPolicy,
      batchesExpireDays: batchSettings ? batchSettings.ttlDays + 1 : undefined,
    });
    const layers = new MediaLayers(this, 'Layers', { code: props.layerCode });
    this.worker = new WorkerFunction(this, 'Worker', { layers, reservedConcurrency: props.workerReservedConcurrency, timeout: Duration.seconds(60) });
    this.jobs = new JobQueue(this, 'Jobs', { workerTimeout: this.worker.timeout });
    this.preview = new PreviewFunction(this, 'Preview', {});
    this.previewFunction = this.preview.fn;
    props.apiKeys.bind(this.previewFunction);
    const playground = props.playground ?? true;
    this.api = new PreviewApi(this, 'Api', {
      handler: this.previewFunction,
      throttle: props.throttle,
      corsOrigins: props.corsOrigins,
      playground,
      batches: batchSettings !== undefined,
    });
    if (!playground) this.previewFunction.addEnvironment(ENV.playground, 'false');
    this.assetsDomain = this.store.distribution.distributionDomainName;

    // Each grant sets its env var with it.
    this.jobs.grantSendTo(this.previewFunction);
    // The preview reads large job results and stores large job inputs (jobs/); it writes no assets.
    this.store.grantTo(this.previewFunction, { read: [JOBS_PREFIX], write: [JOBS_PREFIX] });
    // The worker reads inputs and existing renditions, writes renditions and results.
    this.store.grantTo(this.worker.fn, { read: [ASSETS_PREFIX, JOBS_PREFIX], write: [ASSETS_PREFIX, JOBS_PREFIX] });
    this.jobs.attachWorker(this.worker.fn, { batchSize: props.workerBatchSize });
    // The results come back on each preview container's own reply queue.
    const replies = new ReplyQueues(this, 'Replies');
    replies.grantOwner(this.previewFunction);
    replies.grantReply(this.worker.fn);

    // The jobs that need the browser (lib/jobs/specs.ts: screenshots and renders), each switched on or off here.
    const screenshots = props.screenshots ?? true;
    const render = props.render ?? 'auto';
    this.previewFunction.addEnvironment(ENV.screenshots, screenshots ? 'on' : 'off');
    this.previewFunction.addEnvironment(ENV.render, render);
    // The players are found by the preview function alone.
    for (const [name, value] of Object.entries(embedEnvironment(props.embeds))) this.previewFunction.addEnvironment(name, value);

    // The browser worker, whenever one of them is on: the same fan-out (the preview sends, a worker
    // replies with the result, the preview waits), on a queue of its own whose worker has the
    // browser layer and the memory.
    if (screenshots || render !== 'off') {
      const browser = browserWorker(this, { props, layers, deadLetterQueue: this.jobs.deadLetterQueue, store: this.store });
      browser.jobs.grantSendTo(this.previewFunction, ENV.browserQueueUrl);
      replies.grantReply(browser.worker.fn);
      this.browserWorker = browser.worker;
      this.browserJobs = browser.jobs;
    }
    if (batchSettings) this.batches = batches(this, batchSettings, { preview: this.preview, store: this.store, webhookSecret: props.batches?.webhookSecret });

    // The proxy route and the host rules: every function that fetches takes them (the workers' images, media and browser requests, and the webhooks, too).
    const hostRules = checkedHostRules(props.hostRules, props.proxy?.hosts ?? []);
    for (const fn of [this.previewFunction, this.worker.fn, this.browserWorker?.fn, this.batches?.webhookFunction.fn]) {
      if (!fn) continue;
      props.proxy?.bind(fn);
      if (hostRules) fn.addEnvironment(ENV.hostRules, hostRules);
    }

    // Alarm names start with the stack's name; a second service in one stack adds its own id.
    const stackName = Stack.of(this).stackName;
    this.alarms = new Alarms(this, 'Alarms', {
      namePrefix: id === 'Default' ? stackName : `${stackName}-${id}`,
      deadLetterQueue: this.jobs.deadLetterQueue,
      preview: this.preview,
      workers: { Worker: this.worker.fn, ...(this.browserWorker && { BrowserWorker: this.browserWorker.fn }) },
      batches: this.batches,
      versionOrigin: this.store.versionOrigin.fn,
      topicArn: props.alarms?.topicArn,
      email: props.alarms?.email,
    });
  }

  /** Lets a caller (a Lambda's role, any IGrantable) invoke the preview function directly (lambda:InvokeFunction). */
  grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return this.previewFunction.grantInvoke(grantee);
  }
}

/** The browser worker and its queue (its failures parked in the jobs' dead-letter queue): reads and writes assets/ and jobs/. */
function browserWorker(
  scope: Construct,
  parts: { props: LinkPreviewServiceProps; layers: MediaLayers; deadLetterQueue: JobQueue['deadLetterQueue']; store: AssetStore },
): { worker: BrowserWorkerFunction; jobs: JobQueue } {
  const { props } = parts;
  const browser = new BrowserLayer(scope, 'Browser', { code: props.layerCode?.chromium });
  const worker = new BrowserWorkerFunction(scope, 'BrowserWorker', {
    sharpLayer: parts.layers.sharp,
    browserLayer: browser.layer,
    reservedConcurrency: props.browserWorkerReservedConcurrency,
    timeout: Duration.seconds(60),
  });
  const jobs = new JobQueue(scope, 'BrowserJobs', { workerTimeout: worker.timeout, deadLetterQueue: parts.deadLetterQueue });
  parts.store.grantTo(worker.fn, { read: [ASSETS_PREFIX, JOBS_PREFIX], write: [ASSETS_PREFIX, JOBS_PREFIX] });
  jobs.attachWorker(worker.fn, { batchSize: AWS_BROWSER_LANES });
  return { worker, jobs };
}

/** The batches' queues, webhook function and secret, with the settings given set on the preview and the webhook function. */
function batches(
  scope: Construct,
  settings: NonNullable<ReturnType<typeof checkedBatchSettings>>,
  parts: { preview: PreviewFunction; store: AssetStore; webhookSecret?: secretsmanager.ISecret | string },
): Batches {
  const made = new Batches(scope, 'Batches', { ...parts, concurrency: settings.concurrency });
  for (const [name, value] of Object.entries(settings.env)) {
    parts.preview.fn.addEnvironment(name, value);
    made.webhookFunction.fn.addEnvironment(name, value);
  }
  return made;
}

/** The batches' settings, checked as the service reads them (a malformed one fails synth); undefined when they are off. */
function checkedBatchSettings(batches: LinkPreviewServiceProps['batches']): { concurrency?: number; ttlDays: number; env: Record<string, string> } | undefined {
  if (batches?.enabled === false) return undefined;
  const env: Record<string, string> = {};
  if (batches?.ttlDays !== undefined) env[ENV.batchTtlDays] = String(batches.ttlDays);
  if (batches?.maxQueuedPerKey !== undefined) env[ENV.batchMaxQueued] = String(batches.maxQueuedPerKey);
  let ttlDays: number;
  try {
    ttlDays = readSettings(BATCHES, env).batchTtlDays;
  } catch (err) {
    throw new Error(`batches: ${(err as Error).message}`);
  }
  return { concurrency: batches?.concurrency, ttlDays, env };
}

/**
 * The host rules as given, once they parse (a malformed rule fails synth, named, rather than every
 * function at start), with the proxy's hosts merged in as rules of the same table: the same
 * verdicts as LINKPREVIEW_PROXY_HOSTS would give, which no deployment of the construct sets.
 */
/** The players' settings as the preview function's environment, checked as the service reads them (a malformed one fails synth). */
function embedEnvironment(embeds: LinkPreviewServiceProps['embeds']): Record<string, string> {
  if (!embeds) return {};
  const env: Record<string, string> = {};
  if (embeds.enabled === false) env[ENV.embeds] = 'off';
  if (embeds.origins?.length) env[ENV.embedOrigins] = embeds.origins.join(',');
  if (embeds.parents?.length) env[ENV.embedParents] = embeds.parents.join(',');
  if (embeds.dailymotionPlayer) env[ENV.dailymotionPlayer] = embeds.dailymotionPlayer;
  try {
    readSettings(EMBEDS, env);
  } catch (err) {
    throw new Error(`embeds: ${(err as Error).message}`);
  }
  return env;
}

function checkedHostRules(rules: string | undefined, proxyHosts: readonly string[]): string | undefined {
  const text = rules?.trim() ?? '';
  if (!text && proxyHosts.length === 0) return undefined;
  const parsed = readHostRules(text);
  if (typeof parsed === 'string') throw new Error(`hostRules: ${parsed}`);
  if (proxyHosts.length === 0) return text;
  const merged = showHostRules(withProxyHosts(parsed, proxyHosts));
  const again = readHostRules(merged);
  if (typeof again === 'string') throw new Error(`proxy hosts: ${again}`);
  return merged;
}
