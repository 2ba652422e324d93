/**
 * The preview handler as a middy chain: POST / and GET /oembed. It is the whole request contract
 * of the two; the router both entries call (lib/http/api-handler.ts `createApiHandler`, from the
 * Lambda entry functions/preview.ts and the local server functions/local-server.ts) hands them to
 * it, so the two paths cannot drift apart.
 *
 *   describe -> authorize -> negotiate -> body gate (multipart parsed here) -> json | text/plain parsers
 *   -> validate -> previewLink -> encode (or encode the error)
 *
 * GET /oembed runs the same chain (lib/http/oembed-route.ts): its key may also come in the query, its
 * request is its query (no body, no negotiation: JSON), and the record is answered as an oEmbed
 * response.
 */

import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Context as LambdaContext } from 'aws-lambda';
import { bearerRejection } from '../auth/key-store.js';
import { BUDGET_MARGIN_MS, TimeBudget } from '../budget.js';
import { acceptLanguageList } from '../contract/accept-language.js';
import type { LinkRecord } from '../contract/link.js';
import { type PreviewRequest, validatePreviewRequest } from '../contract/request.js';
import { BadRequestError, InternalError, isServerFault, LinkPreviewError, required, toErrorBody, UnauthorizedError } from '../errors.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import { errorFields, type Log } from '../log.js';
import type { OEmbedBounds } from '../oembed/request.js';
import type { KeyStore } from '../ports.js';
import { type FlightRole, Flights, type Flown, flightKey } from '../preview/flights.js';
import { previewLink } from '../preview/preview-link.js';
import type { PreviewOutcome, PreviewPorts } from '../preview/types.js';
import { PhaseTimer } from '../timing.js';
import { type ContentTypeInfo, decodeBodyText, parseContentType, parseTextBody } from './body.js';
import { describeRequest, type HttpRequestInfo, isRootPath, routePath, stageOf } from './event.js';
import { parseMultipart } from './multipart.js';
import { encodeBody, negotiate, type ResponseType } from './negotiate.js';
import { OEMBED_PATH, oembedAuthorization, oembedError, oembedOutcome, oembedRequest } from './oembed-route.js';

export interface HandlerDeps extends PreviewPorts {
  keys: KeyStore;
  log: Log;
  /** Called once per failed key check (a metric in the Lambda). */
  onAuthFailure?: () => void;
  /** Called once per preview with what its route saw: proxied requests, walls (metrics in the Lambda). */
  onRoute?: (route: PreviewOutcome['route']) => void;
  /** Called when a preview rendered its page in the browser, or tried to (a metric in the Lambda). */
  onRender?: (rendered: NonNullable<PreviewOutcome['rendered']>) => void;
  /** Called once per preview with the part it played in its link's flight (lib/preview/flights.ts; a metric in the Lambda). */
  onFlight?: (role: FlightRole) => void;
  /** The process's flights (one per link in the air); default: the handler's own. */
  flights?: Flights;
  /**
   * Starts a request's time budget (lib/budget.ts). Default: LINKPREVIEW_REQUEST_BUDGET_MS, cut to
   * the context's `getRemainingTimeInMillis()` less a margin. The Lambda passes its InvocationBudget's.
   */
  startBudget?: (context: Partial<LambdaContext> | undefined) => TimeBudget;
}

/** A request's context after the local server's queue: `queuedMs`, how long it waited there, is taken from its budget. */
export interface QueuedContext extends Partial<LambdaContext> {
  queuedMs?: number;
}

const remainingOf = (context: Partial<LambdaContext> | undefined) =>
  typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;

/** A request's whole budget as it arrives (ms): the configured one, within what is left of the invocation less the margin. */
export function arrivalBudgetMs(config: { requestBudgetMs: number }, context: Partial<LambdaContext> | undefined): number {
  const remaining = remainingOf(context);
  return remaining === undefined ? config.requestBudgetMs : Math.min(config.requestBudgetMs, remaining - BUDGET_MARGIN_MS);
}

/** The default budget of a request: the configured one less its wait in the queue, within what is left of the invocation. */
function requestBudget(config: { requestBudgetMs: number }, context: QueuedContext | undefined): TimeBudget {
  return TimeBudget.start({ budgetMs: config.requestBudgetMs - (context?.queuedMs ?? 0), remainingMs: remainingOf(context), marginMs: BUDGET_MARGIN_MS });
}

export type PreviewHandler = (event: unknown, context?: QueuedContext) => Promise<unknown>;

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

interface State {
  info: HttpRequestInfo;
  requestId: string;
  timer: PhaseTimer;
  responseType: ResponseType;
  contentType?: ContentTypeInfo;
  input?: PreviewRequest;
  upstreamError?: string;
  /** How the link's fetch went: direct, proxy, or proxy after a wall (the x-linklens-route header). */
  route?: string;
  /** The part the preview played in its link's flight (the x-linklens-flight header). */
  flight?: FlightRole;
  /** The record's retryAfter (the x-linklens-retry-after header). */
  retryAfter?: number;
  /** The request's time budget, from its start (every phase draws from it). */
  budget?: TimeBudget;
  /** GET /oembed: set when the route is; its bounds once its query is read. */
  oembed?: OEmbedBounds;
}

type Event = Record<string, unknown>;
type Context = LambdaContext & { linklens?: State };
type Request = middy.Request<Event, unknown, Error, Context>;

const contextState = (context: Context): State => required(context.linklens, 'the request state (set by the first middleware)');
const state = (request: Request): State => contextState(request.context);

/** The request as seen (HTTP API, function URL or direct invocation), its id, timer and budget; only POST / and GET /oembed are routed. */
function describeStep(deps: HandlerDeps) {
  return {
    before: async (request: Request) => {
      const info = describeRequest(request.event);
      const requestId = info.requestId ?? request.context?.awsRequestId ?? randomUUID();
      const budget = (deps.startBudget ?? ((c) => requestBudget(deps.config, c)))(request.context);
      const s: State = { info, requestId, timer: new PhaseTimer(), responseType: 'application/json', budget };
      request.context.linklens = s;
      if (info.kind === 'direct') return;
      // middy's parsers read event.headers: give them the lower-cased view.
      request.event.headers = info.headers;
      if (routePath(info.path, stageOf(request.event)) === OEMBED_PATH) {
        s.oembed = {};
        if (info.method !== 'GET' && info.method !== 'HEAD')
          throw new LinkPreviewError(405, 'METHOD_NOT_ALLOWED', `Method ${info.method} is not allowed. The oEmbed endpoint is GET /oembed.`);
        return;
      }
      if (!isRootPath(info.path, stageOf(request.event)))
        throw new LinkPreviewError(404, 'NOT_FOUND', `No such path: ${info.path.slice(0, 100)}. The API is POST /.`);
      if (info.method !== 'POST') throw new LinkPreviewError(405, 'METHOD_NOT_ALLOWED', `Method ${info.method} is not allowed. The API is POST /.`);
    },
  };
}

/** The bearer key (a direct invocation is already authorized by IAM); GET /oembed may carry it in its query. */
function authorizeStep(deps: HandlerDeps) {
  return {
    before: async (request: Request) => {
      const { info, oembed } = state(request);
      if (info.kind === 'direct') return; // already authorized by IAM (lambda:InvokeFunction)
      const rejection = await bearerRejection(deps.keys, oembed ? oembedAuthorization(info) : info.headers.authorization);
      if (rejection) {
        deps.onAuthFailure?.();
        throw new UnauthorizedError(rejection);
      }
    },
  };
}

/** The response type the Accept header asks for (GET /oembed answers JSON, its format). */
function negotiationStep() {
  return {
    before: async (request: Request) => {
      const s = state(request);
      if (s.info.kind !== 'direct' && !s.oembed) s.responseType = negotiate(s.info.headers.accept);
    },
  };
}

/** The body by its content type: multipart parsed, text decoded by its charset. */
function bodyGateStep() {
  return {
    before: async (request: Request) => {
      const s = state(request);
      if (s.info.kind === 'direct' || s.oembed) return;
      const ct = parseContentType(s.info.headers['content-type']);
      s.contentType = ct;
      const e = request.event;
      const raw = typeof e.body === 'string' ? e.body : '';
      const b64 = e.isBase64Encoded === true;
      if (ct.kind === 'multipart') {
        e.body = await parseMultipart(b64 ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8'), `multipart/form-data; boundary=${ct.boundary}`);
        return;
      }
      e.body = decodeBodyText(raw, b64, ct.charset);
      e.isBase64Encoded = false;
      e.headers = { ...s.info.headers, 'content-type': ct.kind === 'json' ? 'application/json' : 'text/plain' };
    },
  };
}

/** middy's JSON parser, run only for JSON bodies (never for direct invocations, whose event may be anything). */
function jsonBodyStep() {
  const parseJson = required(httpJsonBodyParser({ disableContentTypeError: true }).before, "middy's JSON body parser");
  return {
    before: async (request: Request) => {
      if (state(request).contentType?.kind === 'json') await parseJson(request as never);
    },
  };
}

/** A text/plain body: JSON text or a bare URL. */
function textBodyStep() {
  return {
    before: async (request: Request) => {
      const s = state(request);
      if (s.contentType?.kind === 'text') request.event.body = parseTextBody(String(request.event.body ?? ''));
    },
  };
}

/** The request checked against its schema (valibot); GET /oembed's is its query. */
function validateStep() {
  return {
    before: async (request: Request) => {
      const s = state(request);
      if (s.oembed) {
        const { input, bounds } = oembedRequest(s.info);
        s.input = input;
        s.oembed = bounds;
        return;
      }
      const body = s.info.kind === 'direct' ? directPayload(request.event) : request.event.body;
      s.input = validatePreviewRequest(body);
    },
  };
}

/** The record, or the error body, as the answer: an HTTP response, or the bare object for a direct invocation. */
function respondStep(deps: HandlerDeps) {
  return {
    after: async (request: Request) => {
      const s = state(request);
      s.budget?.end();
      const record = request.response as LinkRecord;
      if (s.oembed) {
        const out = oembedOutcome(record, s.oembed);
        request.response =
          out.status === 200 ? httpResponse(200, out.body, s) : httpResponse(404, toErrorBody(out.error, s.requestId) as unknown as Record<string, unknown>, s);
        return;
      }
      request.response = s.info.kind === 'direct' ? record : httpResponse(200, record as unknown as Record<string, unknown>, s);
    },
    onError: async (request: Request) => {
      const s: State = request.context?.linklens ?? {
        info: describeRequest(request.event),
        requestId: request.context?.awsRequestId ?? randomUUID(),
        timer: new PhaseTimer(),
        responseType: 'application/json',
      };
      s.budget?.end();
      const err = s.oembed ? oembedError(toServiceError(request.error)) : toServiceError(request.error);
      if (isServerFault(err.status)) deps.log.error('request failed', { requestId: s.requestId, ...errorFields(request.error) });
      else deps.log.info('request rejected', { requestId: s.requestId, status: err.status, errorCode: err.errorCode });
      const body = toErrorBody(err, s.requestId) as unknown as Record<string, unknown>;
      // A 406 cannot be answered in the type that was refused: it is JSON.
      if (err.status === 406) s.responseType = 'application/json';
      request.response = s.info.kind === 'direct' ? body : httpResponse(err.status, body, s);
    },
  };
}

/**
 * The preview in its link's flight (lib/preview/flights.ts): flown by this request, or the record
 * of the one in the air, with this request's own id (and its own spelling of the link).
 */
async function flownPreview(deps: HandlerDeps, flights: Flights, s: State): Promise<Flown> {
  const request = required(s.input, 'the validated request');
  // The caller's hint, cleaned here for every entry point: only a valid language list goes further.
  const acceptLanguage = acceptLanguageList(s.info.headers['accept-language']);
  const key = flightKey(request, acceptLanguage, hostRulesOf(deps.config).verdict(request.link).rule?.pattern);
  const budgetLeft = () => s.budget?.remaining() ?? deps.config.requestBudgetMs;
  const flown = await flights.preview(key, budgetLeft, (watch) =>
    previewLink(request, deps, { requestId: s.requestId, timer: s.timer, acceptLanguage, budget: s.budget, watch }),
  );
  if (flown.role !== 'follower') return flown;
  const { record } = flown.outcome;
  const trail = record.redirectionTrail?.[0] === record.url ? { redirectionTrail: [request.link, ...record.redirectionTrail.slice(1)] } : {};
  return { ...flown, outcome: { ...flown.outcome, record: { ...record, requestId: s.requestId, url: request.link, ...trail } } };
}

/** The preview itself: the record of the validated request, its outcome on the state (headers) and in the log line. */
function previewStep(deps: HandlerDeps) {
  const flights = deps.flights ?? new Flights();
  return async (_event: Event, context: Context) => {
    const s = contextState(context);
    const { outcome, role } = await flownPreview(deps, flights, s);
    s.flight = role;
    s.retryAfter = outcome.record.retryAfter;
    deps.onFlight?.(role);
    s.upstreamError = outcome.upstreamError;
    s.route = outcome.route.taken;
    s.timer.note('route', outcome.route.taken);
    const { wire } = outcome.route;
    if (wire) s.timer.note('wire', `opened=${wire.opened} reused=${wire.reused} page-rtt=${wire.page} image-rtt=${wire.image}`);
    deps.onRoute?.(outcome.route);
    if (outcome.rendered) deps.onRender?.(outcome.rendered);
    const { proxied, walls, slowedDown } = outcome.route;
    deps.log.info('preview', {
      requestId: s.requestId,
      link: outcome.record.url,
      ok: outcome.record.ok,
      status: outcome.record.status,
      type: outcome.record.type,
      upstreamError: outcome.upstreamError,
      timing: s.timer.header(),
      route: outcome.route.taken,
      ...(wire ? { wire } : {}),
      ...(proxied ? { proxied } : {}),
      ...(walls.length ? { walls } : {}),
      ...(slowedDown?.length ? { slowedDown } : {}),
      ...(outcome.rendered ? { rendered: outcome.rendered } : {}),
      ...(outcome.outOfTime ? { outOfTime: true } : {}),
      ...(role !== 'alone' ? { flight: role } : {}),
    });
    return outcome.record;
  };
}

/** POST / and GET /oembed as a middy handler: each step above, in order, then the preview. */
export function createPreviewHandler(deps: HandlerDeps) {
  // The per-invocation state lives on the context object, which middy hands to the handler.
  const handler = middy<Event, unknown, Error, Context>()
    .use(describeStep(deps))
    .use(authorizeStep(deps))
    .use(negotiationStep())
    .use(bodyGateStep())
    .use(jsonBodyStep())
    .use(textBodyStep())
    .use(validateStep())
    .use(respondStep(deps))
    .handler(previewStep(deps));
  // Callers pass any of the three event shapes and a context that may be partial (local server, tests).
  return handler as unknown as PreviewHandler;
}

function directPayload(event: unknown): unknown {
  if (typeof event === 'string') return parseTextBody(event);
  return event;
}

function httpResponse(statusCode: number, body: Record<string, unknown>, s: State): HttpResponse {
  const encoded = encodeBody(body, s.responseType);
  const headers: Record<string, string> = {
    'content-type': encoded.contentType,
    'x-request-id': s.requestId,
    'server-timing': s.timer.header(),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    vary: 'Accept, Accept-Language',
  };
  if (s.upstreamError) headers['x-linklens-upstream-error'] = s.upstreamError;
  if (s.route) headers['x-linklens-route'] = s.route;
  if (s.flight && !s.oembed) headers['x-linklens-flight'] = s.flight;
  if (s.retryAfter && !s.oembed) headers['x-linklens-retry-after'] = String(s.retryAfter);
  if (statusCode === 401) headers['www-authenticate'] = 'Bearer realm="linklens"';
  // A URL of GET /oembed may hold a key: never sent on as a Referer (and never stored: no-store above).
  if (s.oembed) headers['referrer-policy'] = 'no-referrer';
  return { statusCode, headers, body: encoded.body, isBase64Encoded: false };
}

/** Maps anything thrown to a LinkPreviewError; unknown errors are 500s (their stack is logged, never returned). */
function toServiceError(error: unknown): LinkPreviewError {
  if (error instanceof LinkPreviewError) return error;
  const e = error as { statusCode?: number; message?: string; cause?: { package?: string } };
  if (e && typeof e.statusCode === 'number' && e.cause?.package?.startsWith('@middy/')) {
    return new BadRequestError('BODY_INVALID', e.message?.startsWith('Invalid or malformed') ? `${e.message}.` : 'The request body could not be parsed.');
  }
  return new InternalError(error);
}
