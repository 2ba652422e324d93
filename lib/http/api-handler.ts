/**
 * The API's routes: POST / and GET /oembed (the preview handler, with its whole contract: GET
 * /oembed is the same preview answered as oEmbed, under the same gate), and the two routes that
 * need no key: GET /status and GET /openapi.json. Both the local server and the Lambda use this,
 * so every route behaves the same in both.
 *
 * GET /status without a key is the shallow check (no writes, no jobs); with the bearer key of
 * POST / it is the deep check of the blob store and the job runner; with a wrong key it is 401,
 * as POST / would answer.
 */
import { randomUUID } from 'node:crypto';
import type { Context as LambdaContext } from 'aws-lambda';
import { bearerRejection } from '../auth/key-store.js';
import { openApiDocument } from '../contract/openapi.js';
import { InternalError, LinkPreviewError, toErrorBody, UnauthorizedError } from '../errors.js';
import { errorFields } from '../log.js';
import { playgroundAnswer, wantsHtml } from '../playground/page.js';
import { type StatusDeps, serviceStatus } from '../status.js';
import { PhaseTimer } from '../timing.js';
import { answerBatchRoute, type BatchRoutesDeps, batchRoute, TooManyQueuedError } from './batches.js';
import { describeRequest, type HttpRequestInfo, routePath, stageOf } from './event.js';
import { OEMBED_PATH } from './oembed-route.js';
import { OverloadedError, type PreviewGate } from './overload.js';
import { arrivalBudgetMs, createPreviewHandler, type HandlerDeps, type HttpResponse, type PreviewHandler } from './preview-handler.js';

export interface ApiDeps extends HandlerDeps {
  status?: Omit<StatusDeps, 'blobs' | 'jobs'>;
  /** Bounds the previews in flight in this process (the local server; a Lambda runs one at a time). */
  gate?: PreviewGate;
  /** POST /previews and GET /previews/{batchId} (lib/http/batches.ts); absent: they are 404. */
  batches?: BatchRoutesDeps;
}

/** GET /status: shallow without an Authorization header, deep with a valid key, 401 with any other. */
async function statusAnswer(deps: ApiDeps, info: HttpRequestInfo, requestId: string, timer: PhaseTimer): Promise<HttpResponse> {
  const authorization = (info.headers.authorization ?? '').trim();
  if (authorization !== '') {
    const rejection = await bearerRejection(deps.keys, authorization);
    if (rejection) {
      deps.onAuthFailure?.();
      deps.log.info('request rejected', { requestId, status: 401, errorCode: 'UNAUTHORIZED', path: '/status' });
      const err = new UnauthorizedError(rejection);
      const res = json(401, toErrorBody(err, requestId), { requestId, timer });
      res.headers['www-authenticate'] = 'Bearer realm="linklens"';
      return res;
    }
  }
  const deep = authorization !== '';
  const report = await serviceStatus({ blobs: deps.blobs, jobs: deps.jobs, ...deps.status }, { deep });
  return json(report.ok ? 200 : 503, report, { requestId, timer });
}

/** POST /previews and GET /previews/{batchId}: their answer, or their error's. */
async function batchesAnswer(
  deps: ApiDeps,
  request: { info: HttpRequestInfo; route: { batchId?: string }; event: unknown },
  at: { requestId: string; timer: PhaseTimer; stagePrefix: string },
): Promise<HttpResponse> {
  const { info, route } = request;
  const { requestId, timer } = at;
  try {
    if (!deps.batches) throw new LinkPreviewError(404, 'NOT_FOUND', 'Batches are not available on this deployment.');
    const e = request.event as { body?: unknown; isBase64Encoded?: unknown };
    const body = { raw: typeof e.body === 'string' ? e.body : '', isBase64Encoded: e.isBase64Encoded === true };
    const answer = await answerBatchRoute(deps.batches, deps.keys, { info, route, body, stagePrefix: at.stagePrefix });
    const res = json(answer.status, answer.body, { requestId, timer });
    Object.assign(res.headers, answer.headers);
    if (info.method === 'HEAD') res.body = '';
    return res;
  } catch (err) {
    const known = err instanceof LinkPreviewError ? err : new InternalError(err);
    if (known instanceof InternalError) deps.log.error('request failed', { requestId, path: info.path, ...errorFields(err) });
    else deps.log.info('request rejected', { requestId, status: known.status, errorCode: known.errorCode, path: info.path });
    if (known instanceof UnauthorizedError) deps.onAuthFailure?.();
    const res = json(known.status, toErrorBody(known, requestId), { requestId, timer });
    if (known instanceof UnauthorizedError) res.headers['www-authenticate'] = 'Bearer realm="linklens"';
    if (known instanceof TooManyQueuedError) res.headers['retry-after'] = String(known.retryAfterSeconds);
    return res;
  }
}

export function createApiHandler(deps: ApiDeps): PreviewHandler {
  const preview = createPreviewHandler(deps);

  return async (event: unknown, context?: Partial<LambdaContext>) => {
    const timer = new PhaseTimer();
    const info = describeRequest(event);
    // The id of every answer given here (x-request-id and the error body's requestId), as the preview handler picks it.
    const requestId = info.requestId ?? context?.awsRequestId ?? randomUUID();
    if (info.kind !== 'direct' && (info.method === 'GET' || info.method === 'HEAD')) {
      const route = routePath(info.path, stageOf(event));
      if (route === '/status' || route === '/openapi.json') {
        try {
          if (route === '/status') return await statusAnswer(deps, info, requestId, timer);
          return json(200, openApiDocument(deps.config.openApiPath), { requestId, timer, cacheControl: 'public, max-age=300' });
        } catch (err) {
          // Our bug (or a port that throws where it should report): an answer, not a Lambda error.
          deps.log.error('request failed', { requestId, path: route, ...errorFields(err) });
          return json(500, toErrorBody(new InternalError(err), requestId), { requestId, timer });
        }
      }
    }
    if (info.kind !== 'direct') {
      const stage = stageOf(event);
      const route = batchRoute(routePath(info.path, stage));
      if (route) return batchesAnswer(deps, { info, route, event }, { requestId, timer, stagePrefix: stage ? `/${stage}` : '' });
    }
    // The playground (lib/playground/page.ts): GET / from a browser, and its script and stylesheet.
    if (deps.config.playground && info.kind !== 'direct' && (info.method === 'GET' || info.method === 'HEAD')) {
      const stage = stageOf(event);
      const route = routePath(info.path, stage);
      const answer = route !== '/' || wantsHtml(info.headers.accept) ? playgroundAnswer(route, stage ? `/${stage}` : '', deps.config.embedOrigins) : undefined;
      if (answer) {
        return {
          ...answer,
          headers: { ...answer.headers, 'x-request-id': requestId, 'server-timing': timer.header([]) },
          body: info.method === 'HEAD' ? '' : answer.body,
          isBase64Encoded: false,
        };
      }
    }
    // Everything else is the preview handler's: POST /, GET /oembed, and the 404s and 405s (GET / from anything but a browser included).
    if (!deps.gate || info.kind === 'direct') return preview(event, context);
    try {
      // The budget starts now: the wait in the queue counts against it (lib/http/overload.ts).
      return await deps.gate.admit((waitedMs) => preview(event, { ...context, queuedMs: waitedMs }), arrivalBudgetMs(deps.config, context));
    } catch (err) {
      if (!(err instanceof OverloadedError)) throw err;
      deps.log.warn('overloaded', { requestId, inFlight: deps.gate.inFlight, waiting: deps.gate.waiting });
      const res = json(503, toErrorBody(err, requestId), { requestId, timer });
      res.headers['retry-after'] = String(err.retryAfterSeconds);
      // As every answer of GET /oembed, whose URL may hold a key (lib/http/oembed-route.ts).
      if (routePath(info.path, stageOf(event)) === OEMBED_PATH) res.headers['referrer-policy'] = 'no-referrer';
      return res;
    }
  };
}

/** A JSON answer of these routes, with the headers every response carries: x-request-id and Server-Timing (cache-control: no-store unless given). */
function json(statusCode: number, body: unknown, answer: { requestId: string; timer: PhaseTimer; cacheControl?: string }): HttpResponse {
  const { requestId, timer, cacheControl = 'no-store' } = answer;
  return {
    statusCode,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': cacheControl,
      'x-request-id': requestId,
      'server-timing': timer.header([]),
      'x-content-type-options': 'nosniff',
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}
