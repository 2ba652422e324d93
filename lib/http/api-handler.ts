/**
 * The API's routes: POST / (the preview handler, with its whole contract), and the two routes
 * that need no key: GET /status and GET /openapi.json. Both the local server and the Lambda use
 * this, so every route behaves the same in both.
 *
 * GET /status without a key is the shallow check (no writes, no jobs); with the bearer key of
 * POST / it is the deep check of the blob store and the job runner; with a wrong key it is 401,
 * as POST / would answer.
 */
import { randomUUID } from 'node:crypto';
import type { Context as LambdaContext } from 'aws-lambda';
import { bearerRejection } from '../auth/key-store.js';
import { openApiDocument } from '../contract/openapi.js';
import { InternalError, toErrorBody, UnauthorizedError } from '../errors.js';
import { errorFields } from '../log.js';
import { type StatusDeps, serviceStatus } from '../status.js';
import { PhaseTimer } from '../timing.js';
import { describeRequest, type HttpRequestInfo } from './event.js';
import { OverloadedError, type PreviewGate } from './overload.js';
import { playgroundAnswer, wantsHtml } from './playground.js';
import { createPreviewHandler, type HandlerDeps, type HttpResponse, type PreviewHandler } from './preview-handler.js';

export interface ApiDeps extends HandlerDeps {
  status?: Omit<StatusDeps, 'blobs' | 'jobs'>;
  /** Bounds the previews in flight in this process (the local server; a Lambda runs one at a time). */
  gate?: PreviewGate;
}

export function createApiHandler(deps: ApiDeps): PreviewHandler {
  const preview = createPreviewHandler(deps);

  /** GET /status: shallow without an Authorization header, deep with a valid key, 401 with any other. */
  async function status(info: HttpRequestInfo, requestId: string, timer: PhaseTimer): Promise<HttpResponse> {
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

  return async (event: unknown, context?: Partial<LambdaContext>) => {
    const timer = new PhaseTimer();
    const info = describeRequest(event);
    // The id of every answer given here (x-request-id and the error body's requestId), as the preview handler picks it.
    const requestId = info.requestId ?? context?.awsRequestId ?? randomUUID();
    if (info.kind !== 'direct' && (info.method === 'GET' || info.method === 'HEAD')) {
      const route = routePath(info.path, stageOf(event));
      if (route === '/status' || route === '/openapi.json') {
        try {
          if (route === '/status') return await status(info, requestId, timer);
          return json(200, openApiDocument(deps.config.openApiPath), { requestId, timer, cacheControl: 'public, max-age=300' });
        } catch (err) {
          // Our bug (or a port that throws where it should report): an answer, not a Lambda error.
          deps.log.error('request failed', { requestId, path: route, ...errorFields(err) });
          return json(500, toErrorBody(new InternalError(err), requestId), { requestId, timer });
        }
      }
    }
    // The playground (lib/http/playground.ts): GET / from a browser, and its script and stylesheet.
    if (deps.config.playground && info.kind !== 'direct' && (info.method === 'GET' || info.method === 'HEAD')) {
      const stage = stageOf(event);
      const route = routePath(info.path, stage);
      const answer = route !== '/' || wantsHtml(info.headers.accept) ? playgroundAnswer(route, stage ? `/${stage}` : '') : undefined;
      if (answer) {
        return {
          ...answer,
          headers: { ...answer.headers, 'x-request-id': requestId, 'server-timing': timer.header([]) },
          body: info.method === 'HEAD' ? '' : answer.body,
          isBase64Encoded: false,
        };
      }
    }
    // Everything else, GET / from anything but a browser included (405), is the preview handler's.
    if (!deps.gate || info.kind === 'direct') return preview(event, context);
    try {
      return await deps.gate.run(() => preview(event, context));
    } catch (err) {
      if (!(err instanceof OverloadedError)) throw err;
      deps.log.warn('overloaded', { requestId, inFlight: deps.gate.inFlight, waiting: deps.gate.waiting });
      const res = json(503, toErrorBody(err, requestId), { requestId, timer });
      res.headers['retry-after'] = String(err.retryAfterSeconds);
      return res;
    }
  };
}

/**
 * The route a path names: the API Gateway stage prefix removed (a named stage's rawPath starts
 * with it; `$default` has none), as isRootPath does for `/`, and trailing slashes dropped.
 * `/prod/status` on stage `prod` is `/status`; `/x/status` and `/statusx` stay what they are.
 */
export function routePath(path: string, stage?: string): string {
  let p = path.split('?')[0];
  if (stage && (p === `/${stage}` || p.startsWith(`/${stage}/`))) p = p.slice(stage.length + 1);
  p = p.replace(/\/+$/, '');
  return p === '' ? '/' : p;
}

function stageOf(event: unknown): string | undefined {
  const stage = (event as { requestContext?: { stage?: unknown } } | null)?.requestContext?.stage;
  return typeof stage === 'string' && stage !== '$default' ? stage : undefined;
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
