/**
 * The API's routes: POST / (the preview handler, with its whole contract), and the two routes
 * that need no key: GET /status and GET /openapi.json. Both the local server and the Lambda use
 * this, so every route behaves the same in both.
 */
import type { Context as LambdaContext } from 'aws-lambda';
import { openApiDocument } from '../contract/openapi.js';
import { serviceStatus, type StatusDeps } from '../status.js';
import { describeRequest } from './event.js';
import { toErrorBody } from '../errors.js';
import { ConcurrencyGate, OverloadedError } from './overload.js';
import { createPreviewHandler, type HandlerDeps, type HttpResponse, type PreviewHandler } from './preview-handler.js';

export interface ApiDeps extends HandlerDeps {
  status?: Omit<StatusDeps, 'blobs' | 'jobs'>;
  /** Bounds the previews in flight in this process (the local server; a Lambda runs one at a time). */
  gate?: ConcurrencyGate;
}

export function createApiHandler(deps: ApiDeps): PreviewHandler {
  const preview = createPreviewHandler(deps);
  return async (event: unknown, context?: Partial<LambdaContext>) => {
    const info = describeRequest(event);
    if (info.kind !== 'direct' && (info.method === 'GET' || info.method === 'HEAD')) {
      const path = info.path.replace(/\/+$/, '');
      const requestId = info.requestId ?? context?.awsRequestId ?? '';
      if (path.endsWith('/status')) {
        const status = await serviceStatus({ blobs: deps.blobs, jobs: deps.jobs, ...deps.status });
        return json(status.ok ? 200 : 503, status, requestId);
      }
      if (path.endsWith('/openapi.json')) return json(200, openApiDocument(), requestId, 'public, max-age=300');
    }
    // Everything else, GET / included (405), is the preview handler's.
    if (!deps.gate || info.kind === 'direct') return preview(event, context);
    try {
      return await deps.gate.run(() => preview(event, context));
    } catch (err) {
      if (!(err instanceof OverloadedError)) throw err;
      deps.log.warn('overloaded', { inFlight: deps.gate.inFlight, waiting: deps.gate.waiting });
      const res = json(503, toErrorBody(err, info.requestId ?? context?.awsRequestId), info.requestId ?? '');
      res.headers['retry-after'] = String(err.retryAfterSeconds);
      return res;
    }
  };
}

function json(statusCode: number, body: unknown, requestId: string, cacheControl = 'no-store'): HttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': cacheControl, 'x-request-id': requestId, 'x-content-type-options': 'nosniff' },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}
