/**
 * The preview Lambda: API Gateway (REST v1 or HTTP API v2) and direct invocation by other
 * Lambdas. A thin entry: configuration and adapters are built once per container.
 *
 * With LINKPREVIEW_BUCKET and LINKPREVIEW_JOB_QUEUE_URL set (the CDK stack sets both) it uses
 * the AWS adapters: assets in S3 behind CloudFront, jobs fanned out through SQS to the worker
 * with a synchronous wait inside the invocation budget. Without them it falls back to the local
 * adapters (a data dir under /tmp, jobs in-process).
 */

import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsQueueConsumer } from '../lib/adapters/aws/sqs-work-queue.js';
import type { ItemMessage } from '../lib/batch/types.js';
import { runItem } from '../lib/batch/work.js';
import { InvocationBudget } from '../lib/budget.js';
import { type Config, configWarnings, ENV, loadConfig } from '../lib/config.js';
import { isServerFault } from '../lib/errors.js';
import { openGuardWarning } from '../lib/fetch/address-guard.js';
import { type ApiDeps, createApiHandler } from '../lib/http/api-handler.js';
import type { BatchRoutesDeps } from '../lib/http/batches.js';
import type { HandlerDeps, PreviewHandler } from '../lib/http/preview-handler.js';
import { awsConfigured, buildAwsBatches, buildAwsDeps, S3_CLIENT_CONFIG } from './aws-deps.js';
import { createObservability, MetricUnit, type Observability } from './observability.js';

/** The metric a 5xx answer of the preview adds to (namespace linklens, dimension service). */
const SERVER_ERRORS_METRIC = 'ServerErrors';

export interface LambdaPreviewOptions {
  config: Config;
  obs: Observability;
  budget: InvocationBudget;
  /** The ports (tests pass AWS adapters pointed at emulators). */
  deps: HandlerDeps;
  /** The binaries GET /status reports on: the worker's, when their paths are set on this function. */
  status?: ApiDeps['status'];
  /**
   * POST /previews (deps.batches), and the items its queue hands this function (an SQS event):
   * each previewed by a direct call of the API handler, as `POST /` would be, within the invocation's time.
   */
  batches?: { deps: BatchRoutesDeps; consumer: (handleItem: BatchRoutesDeps['preview']) => (event: SQSEvent) => Promise<SQSBatchResponse> };
}

/** An event of an SQS event source mapping (the batch items' queue), not a request. */
function isSqsEvent(event: unknown): event is SQSEvent {
  const records = (event as { Records?: { eventSource?: unknown }[] } | null)?.Records;
  return Array.isArray(records) && records.length > 0 && records[0]?.eventSource === 'aws:sqs';
}

/** The local asset store of the preview function when it has no AWS adapters (LINKPREVIEW_DATA_DIR unset). */
const LAMBDA_DATA_DIR = '/tmp/linklens';

/**
 * Wraps the shared preview handler with the invocation budget and Powertools (logs, metrics,
 * traces). Each preview's time budget comes from the invocation's remaining time
 * (`getRemainingTimeInMillis()` less a margin) and LINKPREVIEW_REQUEST_BUDGET_MS: every phase draws
 * from it, and when it ends the record built so far is answered with a 200, before Lambda's own timeout.
 */
export function createLambdaPreviewHandler({ obs, budget, deps, status = {}, batches }: LambdaPreviewOptions): PreviewHandler {
  // POST / plus GET /status and GET /openapi.json (and POST /previews with batches).
  const inner = createApiHandler({ ...deps, startBudget: (context) => budget.start(context), status, batches: batches?.deps });
  // One invocation at a time per instance: the items of the SQS event being handled take their time from it.
  let invocation: { getRemainingTimeInMillis?: () => number } = {};
  const items = batches?.consumer((request, requestId) => {
    // Called on the context it belongs to (a runtime may define it as a method).
    const remaining = invocation.getRemainingTimeInMillis;
    const context = invocation;
    return inner(request, { awsRequestId: requestId, ...(remaining ? { getRemainingTimeInMillis: () => remaining.call(context) } : {}) } as never);
  });
  return middy(async (event: unknown, context: never) => {
    if (items && isSqsEvent(event)) {
      invocation = context ?? {};
      return items(event);
    }
    const requestId = requestIdOf(event);
    if (requestId) obs.logger.appendKeys({ requestId });
    try {
      const out = await inner(event, context);
      // Our own bug answered as a 500 is an HTTP answer, not a Lambda error: count it for the
      // preview-errors alarm (501 and 503 are deliberate answers: isServerFault).
      const statusCode = (out as { statusCode?: unknown } | null)?.statusCode;
      if (typeof statusCode === 'number' && isServerFault(statusCode)) obs.count(SERVER_ERRORS_METRIC);
      return out;
    } finally {
      if (requestId) obs.logger.removeKeys(['requestId']);
    }
  })
    .use(captureLambdaHandler(obs.tracer, { captureResponse: false }))
    .use(injectLambdaContext(obs.logger))
    .use(logMetrics(obs.metrics)) as unknown as PreviewHandler;
}

function requestIdOf(event: unknown): string | undefined {
  const rc = (event as { requestContext?: { requestId?: unknown } } | null)?.requestContext;
  return typeof rc?.requestId === 'string' ? rc.requestId : undefined;
}

/** The preview's metrics (docs/deploy-aws.md, "Observability"), counted from what each preview reports. */
export function previewCounters(count: Observability['count']): Required<Pick<HandlerDeps, 'onAuthFailure' | 'onRoute' | 'onFlight' | 'onRender'>> {
  return {
    onAuthFailure: () => count('AuthFailures'),
    // The proxy route: requests sent through the proxy and walls seen (per host: in the preview's log line).
    onRoute: (route) => {
      if (route.proxied) count('ProxyFetches', route.proxied);
      if (route.walls.length) count('WallsSeen', route.walls.length);
      // Hosts not asked because they had asked to slow down (429/503 with Retry-After): in the log line, `slowedDown`.
      if (route.slowedDown?.length) count('SlowDownSkips', route.slowedDown.length);
    },
    // A preview that shared another's flight (a follower), or took one over from a leader that failed.
    onFlight: (role) => {
      if (role === 'follower') count('SharedFlights');
      else if (role === 'takeover') count('FlightTakeovers');
    },
    // Pages rendered in the browser before extraction, and renders that gave no DOM.
    onRender: (rendered) => count(rendered.ok ? 'Renders' : 'RendersFailed'),
  };
}

async function init(): Promise<PreviewHandler> {
  const env = process.env;
  const config = loadConfig({ [ENV.dataDir]: LAMBDA_DATA_DIR, ...env });
  const obs = createObservability('linklens-preview', config);
  const opened = openGuardWarning(config);
  if (opened) obs.log.warn(opened);
  // A former host list (LINKPREVIEW_PROXY_HOSTS, LINKPREVIEW_RENDER_HOSTS): the host rules to write instead.
  for (const line of configWarnings(env)) obs.log.warn(line);
  const budget = new InvocationBudget(config.requestBudgetMs);
  const { onAuthFailure, onRoute, onFlight, onRender } = previewCounters(obs.count);
  let deps: HandlerDeps;
  let batches: LambdaPreviewOptions['batches'];
  if (awsConfigured(config)) {
    const aws = buildAwsDeps({
      config,
      log: obs.log,
      s3: obs.tracer.captureAWSv3Client(new S3Client(S3_CLIENT_CONFIG)),
      sqs: obs.tracer.captureAWSv3Client(new SQSClient({})),
      ssm: config.apiKeyParameter ? obs.tracer.captureAWSv3Client(new SSMClient({})) : undefined,
      secrets: config.apiKeySecret ? obs.tracer.captureAWSv3Client(new SecretsManagerClient({})) : undefined,
      hardDeadline: budget.deadline,
      onAuthFailure,
      onRoute,
      onRender,
      onFlight,
      onJobsSettled: (s) => {
        obs.metrics.addMetric('JobsLate', MetricUnit.Count, s.late);
        obs.metrics.addMetric('JobsFailed', MetricUnit.Count, s.failed - s.late);
        obs.metrics.addMetric('JobWait', MetricUnit.Milliseconds, s.waitMs);
      },
    });
    deps = aws;
    // The batch items come back to this function on their queue; each is previewed by `handleItem`
    // (a direct call of the API handler, set by createLambdaPreviewHandler).
    let handleItem: BatchRoutesDeps['preview'] | undefined;
    const routes = buildAwsBatches({
      config,
      log: obs.log,
      blobs: aws.blobs,
      sqs: aws.sqs,
      fetch: aws.fetch,
      preview: (request, requestId) => {
        if (!handleItem) throw new Error('the batch items are not started');
        return handleItem(request, requestId);
      },
    });
    if (routes) {
      batches = {
        deps: routes,
        consumer: (handle) => {
          handleItem = handle;
          return sqsQueueConsumer<ItemMessage>({ sqs: aws.sqs, queueUrl: config.batchQueueUrl, log: obs.log, handler: (m) => runItem(routes, m) });
        },
      };
    }
  } else if (process.env.LINKLENS_BUNDLE_AWS_ONLY !== 'true') {
    // The local adapters pull in the job code (sharp, ffprobe). The CDK bundle defines
    // LINKLENS_BUNDLE_AWS_ONLY, so esbuild drops this branch and the job code with it: the
    // deployed preview function stays small and needs no sharp (the stack always sets both variables).
    const { buildLocalDeps } = await import('./wiring.js');
    deps = {
      ...buildLocalDeps({ config, log: obs.log, baseUrl: () => config.publicUrl }),
      onAuthFailure,
      onRoute,
      onRender,
      onFlight,
    };
  } else {
    throw new Error('LINKPREVIEW_BUCKET and LINKPREVIEW_JOB_QUEUE_URL must be set: this bundle has only the AWS adapters');
  }
  // This function runs no decoder and no browser of its own: /status reports the worker's binaries
  // only where their paths are set on it (the browser path's default would name a file it lacks).
  const status = { ffprobePath: config.ffprobePath || undefined, browserPath: env[ENV.browserPath] === undefined ? undefined : config.browserPath };
  return createLambdaPreviewHandler({ config, obs, budget, deps, status, batches });
}

const ready = init();
// Keep an init failure (a bad setting) from becoming an unhandled rejection before the first call.
ready.catch(() => {});

/** The Lambda entry (functions/preview.handler). */
export const handler = async (event: unknown, context?: unknown): Promise<unknown> => (await ready)(event, context as never);
