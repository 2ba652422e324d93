/**
 * The batch routes (docs/batches.md), under the bearer key of `POST /`:
 *
 *   POST /previews            up to 100 links (and a callbackUrl): 202 with the batch id, one id
 *                             per link (a link refused alone is `failed` with its errorCode), and
 *                             `Location: /previews/{batchId}`
 *   GET  /previews/{batchId}  each item's state, and the record of each that is done; only to the
 *                             key that submitted it; 404 once expired (LINKPREVIEW_BATCH_TTL_DAYS)
 *
 * A key whose batches not yet complete would hold more than LINKPREVIEW_BATCH_MAX_QUEUED items gets 429 TOO_MANY_QUEUED.
 */
import { bearerRejection, sha256Hex } from '../auth/key-store.js';
import { type CallbackGuard, readBatch } from '../batch/submit.js';
import type { BatchMeta, CompletedFile, ItemView } from '../batch/types.js';
import { type BatchDeps, enqueueBatch } from '../batch/work.js';
import type { CoreConfig } from '../core-settings.js';
import { BadRequestError, LinkPreviewError, UnauthorizedError } from '../errors.js';
import { type Resolver, systemResolver } from '../fetch/address-guard.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { KeyStore } from '../ports.js';
import { decodeBodyText, parseContentType } from './body.js';
import type { HttpRequestInfo } from './event.js';

export const BATCHES_PATH = '/previews';

export interface BatchRoutesDeps extends BatchDeps {
  guard: CallbackGuard;
  ttlDays: number;
  maxQueuedPerKey: number;
}

/** The batch routes' deps from the configuration (the guard, the limits, the retries) and the adapters: the local server's and the Lambdas' alike. */
export function batchRoutesDeps(
  config: CoreConfig,
  parts: Pick<BatchDeps, 'store' | 'items' | 'deliveries' | 'preview' | 'fetch' | 'signer' | 'log' | 'onDelivery'> & { resolver?: Resolver },
): BatchRoutesDeps {
  const { resolver, ...rest } = parts;
  return {
    ...rest,
    retries: config.webhookRetries,
    guard: {
      policy: { allowPrivateNetworks: config.allowPrivateNetworks, allowLoopback: config.allowLoopback, allowedPorts: config.allowedPorts },
      resolver: resolver ?? systemResolver,
      rules: hostRulesOf(config),
    },
    ttlDays: config.batchTtlDays,
    maxQueuedPerKey: config.batchMaxQueued,
  };
}

/** What a batch route answers: a status, a JSON body and its own headers. */
export interface BatchAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Seconds a key over its limit is told to wait: a batch's worth of previews. */
const OVER_LIMIT_RETRY_S = 60;

/** A key over its limit of queued items: 429, with Retry-After. */
export class TooManyQueuedError extends LinkPreviewError {
  readonly retryAfterSeconds = OVER_LIMIT_RETRY_S;
  constructor(queued: number, max: number) {
    super(
      429,
      'TOO_MANY_QUEUED',
      `This key has ${queued} links in batches not yet complete, and a key may have ${max} at most: submit again once some are done.`,
      {
        transient: true,
      },
    );
  }
}

/** The route a path names among the batch routes (`{ batchId }` for GET), or undefined. */
export function batchRoute(route: string): { batchId?: string } | undefined {
  if (route === BATCHES_PATH) return {};
  const m = /^\/previews\/([^/]+)$/.exec(route);
  return m ? { batchId: decodeURIComponent(m[1]) } : undefined;
}

/** The id of the key a request carries (never the key): `key_` and 16 hex of its SHA-256. */
function keyIdOf(authorization: string | undefined): string {
  const key = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  return `key_${sha256Hex(key).slice(0, 16)}`;
}

/** Answers a batch route; throws a LinkPreviewError for an error answer. */
export async function answerBatchRoute(
  deps: BatchRoutesDeps,
  keys: KeyStore,
  request: { info: HttpRequestInfo; route: { batchId?: string }; body: { raw: string; isBase64Encoded: boolean }; stagePrefix: string },
): Promise<BatchAnswer> {
  const { info, route, body, stagePrefix } = request;
  const rejection = await bearerRejection(keys, info.headers.authorization);
  if (rejection) throw new UnauthorizedError(rejection);
  const keyId = keyIdOf(info.headers.authorization);
  if (route.batchId === undefined) {
    if (info.method !== 'POST')
      throw new LinkPreviewError(405, 'METHOD_NOT_ALLOWED', `Method ${info.method} is not allowed. Batches are submitted with POST /previews.`);
    return submit(deps, keyId, parseBody(info, body), stagePrefix);
  }
  if (info.method !== 'GET' && info.method !== 'HEAD')
    throw new LinkPreviewError(405, 'METHOD_NOT_ALLOWED', `Method ${info.method} is not allowed. A batch is read with GET /previews/{batchId}.`);
  const meta = await deps.store.meta(route.batchId);
  if (!meta || meta.keyId !== keyId)
    throw new LinkPreviewError(404, 'BATCH_NOT_FOUND', 'No such batch (batches are kept for a set time, and only their own key reads them).');
  return { status: 200, body: await batchView(deps, meta) };
}

function parseBody(info: HttpRequestInfo, body: { raw: string; isBase64Encoded: boolean }): unknown {
  const ct = parseContentType(info.headers['content-type']);
  if (ct.kind !== 'json') throw new LinkPreviewError(415, 'UNSUPPORTED_MEDIA_TYPE', 'POST /previews takes a JSON body (Content-Type: application/json).');
  try {
    return JSON.parse(decodeBodyText(body.raw, body.isBase64Encoded, ct.charset));
  } catch {
    throw new BadRequestError('BODY_INVALID', 'The request body is not valid JSON.');
  }
}

async function submit(deps: BatchRoutesDeps, keyId: string, body: unknown, stagePrefix: string): Promise<BatchAnswer> {
  const meta = await readBatch(body, { keyId, ttlDays: deps.ttlDays, guard: deps.guard, now: deps.now });
  if (meta.callbackUrl && !deps.signer)
    throw new BadRequestError('WEBHOOKS_NOT_CONFIGURED', 'This service has no webhook secret (LINKPREVIEW_WEBHOOK_SECRETS): a callbackUrl cannot be signed.', {
      field: 'callbackUrl',
    });
  const adding = meta.items.filter((i) => !i.error).length;
  // Not atomic: two batches of one key submitted at the same moment may both pass (each counted the other's items as not there yet).
  const queued = await deps.store.outstanding(keyId);
  if (queued + adding > deps.maxQueuedPerKey) throw new TooManyQueuedError(queued, deps.maxQueuedPerKey);
  await enqueueBatch(deps, meta);
  const location = `${stagePrefix}${BATCHES_PATH}/${meta.id}`;
  const items: ItemView[] = meta.items.map((i) => ({ id: i.id, index: i.index, link: i.link, state: i.error ? 'failed' : 'queued', ...(i.error ?? {}) }));
  return { status: 202, headers: { location }, body: { ...summary(meta, items, undefined), items } };
}

/** The batch as GET answers it: its state, counts, and every item (records included). */
async function batchView(deps: BatchRoutesDeps, meta: BatchMeta): Promise<unknown> {
  const [items, completed] = await Promise.all([deps.store.views(meta), deps.store.completed(meta.id)]);
  return {
    ...summary(meta, items, completed),
    ...(completed ? { completedAt: completed.completedAt, ...(completed.delivery ? { delivery: completed.delivery } : {}) } : {}),
    items,
  };
}

/** `done` once the batch is marked complete (just after its last item finished: lib/batch/work.ts), `queued` while no item has started. */
function summary(meta: BatchMeta, items: ItemView[], completed: CompletedFile | undefined) {
  const counts = { queued: 0, running: 0, done: 0, failed: 0 };
  for (const i of items) counts[i.state]++;
  const state = completed ? 'done' : counts.running + counts.done === 0 && counts.queued > 0 ? 'queued' : 'running';
  return {
    batchId: meta.id,
    state,
    createdAt: meta.createdAt,
    expiresAt: meta.expiresAt,
    ...(meta.callbackUrl ? { callbackUrl: meta.callbackUrl } : {}),
    counts,
  };
}
