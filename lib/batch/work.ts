/**
 * A batch's work, as its two queues hand it out (docs/batches.md):
 *
 * - `runItem`: one link previewed, exactly as `POST /` previews it (the same handler, the same
 *   flight: a batch item and a `POST /` of the same link at once share one fetch); its record
 *   stored; its webhook queued; and when it was the batch's last, the batch's.
 * - `deliverOne`: one attempt at one webhook; a failure is handed out again on the retry schedule
 *   (`LINKPREVIEW_WEBHOOK_RETRIES`), after its last try it is dead (kept in the item, logged, counted).
 *
 * Both are safe to run twice for one message (the queues deliver at least once): an item already
 * finished is not previewed again, only its webhooks are queued again, under the same ids.
 */
import type { LinkRecord } from '../contract/link.js';
import type { PreviewRequest } from '../contract/request.js';
import type { Fetcher } from '../fetch/types.js';
import type { Log } from '../log.js';
import type { MessageOutcome, ReceivedMessage, WorkQueue } from '../ports.js';
import type { BatchStore } from './store.js';
import type { BatchMeta, CompletedFile, DeliveryMessage, DeliveryState, ItemError, ItemFile, ItemMessage, ItemView } from './types.js';
import { type AttemptResult, deliverWebhook, type WebhookEvent, type WebhookSigner } from './webhooks.js';

export interface BatchDeps {
  store: BatchStore;
  items: WorkQueue<ItemMessage>;
  deliveries: WorkQueue<DeliveryMessage>;
  /** One preview as `POST /` answers it (a direct invocation of the API handler): the record, or the error body. */
  preview: (request: PreviewRequest, requestId: string) => Promise<unknown>;
  /** The guarded fetcher the webhooks go through. */
  fetch: Fetcher;
  /** The webhooks' signer (read from its secret on AWS: only the webhook function does). Absent: no webhook secret, so a callback URL is refused at submit. */
  signer?: () => Promise<WebhookSigner>;
  /** The waits before each retry of a failed delivery (ms). */
  retries: readonly number[];
  log: Log;
  now?: () => number;
  /** Called once per delivery attempt with how it went (a metric on AWS). */
  onDelivery?: (outcome: 'delivered' | 'gone' | 'retry' | 'dead') => void;
}

/** A preview that failed for a reason of ours (a 5xx) is tried this many times before its item is `failed`. */
const ITEM_TRIES = 3;

const itemMessageId = (batchId: string, index: number) => `item_${batchId}_${index}`;
/** The webhook-id of an item's delivery, or of the batch's: stable across retries. */
export const webhookId = (batchId: string, index: number | 'batch') => `msg_${batchId}_${index}`;

const iso = (deps: Pick<BatchDeps, 'now'>) => new Date((deps.now ?? Date.now)()).toISOString();

/** Stores the batch and queues its valid items; a batch with none is finished at once. */
export async function enqueueBatch(deps: BatchDeps, meta: BatchMeta): Promise<void> {
  await deps.store.putMeta(meta);
  const valid = meta.items.filter((i) => !i.error);
  if (valid.length === 0) return finishBatch(deps, meta);
  await deps.store.markOpen(meta, valid.length);
  await deps.items.send(valid.map((i) => ({ id: itemMessageId(meta.id, i.index), group: meta.keyId, body: { batchId: meta.id, index: i.index } })));
}

/** The item queue's handler. */
export async function runItem(deps: BatchDeps, message: ReceivedMessage<ItemMessage>): Promise<MessageOutcome> {
  const { batchId, index } = message.body;
  const meta = await deps.store.meta(batchId);
  const spec = meta?.items[index];
  if (!meta || !spec?.request) return 'done'; // expired, or not a valid item: nothing to do
  const before = await deps.store.item(batchId, index);
  if (before?.state === 'done' || before?.state === 'failed') {
    // Handed out again after it finished (a crash before its message was done): only what follows.
    await afterItem(deps, meta, index);
    return 'done';
  }
  const startedAt = iso(deps);
  await deps.store.putItem(batchId, index, { state: 'running', startedAt });
  const answer = await deps.preview(spec.request, spec.id).catch((err: unknown) => ({ internal: err }));
  const failure = failureOf(answer);
  if (failure?.retry && message.attempt < ITEM_TRIES) {
    deps.log.warn('batch item failed, tried again', { batchId, index, attempt: message.attempt, errorCode: failure.error.errorCode });
    return { retryInMs: 1000 * message.attempt };
  }
  const file: ItemFile = failure
    ? { state: 'failed', startedAt, finishedAt: iso(deps), error: failure.error }
    : { state: 'done', startedAt, finishedAt: iso(deps), record: answer as LinkRecord };
  await deps.store.putItem(batchId, index, file);
  await afterItem(deps, meta, index);
  return 'done';
}

/** Why a preview's answer is not a record: its error body's code, and whether it was ours (tried again). */
function failureOf(answer: unknown): { error: ItemError; retry: boolean } | undefined {
  const a = answer as { internal?: unknown; errorCode?: unknown; message?: unknown; status?: unknown; error?: unknown };
  if ('internal' in a) return { error: { errorCode: 'INTERNAL_ERROR', message: 'The preview failed unexpectedly.' }, retry: true };
  if (typeof a.errorCode !== 'string' || typeof a.error !== 'string') return undefined;
  return { error: { errorCode: a.errorCode, message: String(a.message ?? '') }, retry: typeof a.status === 'number' && a.status >= 500 };
}

/** After an item finished: its webhook, and the batch's when it was the last. */
async function afterItem(deps: BatchDeps, meta: BatchMeta, index: number): Promise<void> {
  if (meta.callbackUrl) await deps.deliveries.send([{ id: webhookId(meta.id, index), group: meta.keyId, body: { batchId: meta.id, index } }]);
  if (await deps.store.allFinished(meta)) await finishBatch(deps, meta);
}

/** The batch is done: its mark, and its webhook (two items finishing last at once may both send it: one message id, one webhook-id). */
async function finishBatch(deps: BatchDeps, meta: BatchMeta): Promise<void> {
  const completed = await deps.store.completed(meta.id);
  if (!completed) {
    await deps.store.putCompleted(meta.id, { completedAt: iso(deps) });
    await deps.store.markClosed(meta);
  }
  if (meta.callbackUrl && !completed?.delivery)
    await deps.deliveries.send([{ id: webhookId(meta.id, 'batch'), group: meta.keyId, body: { batchId: meta.id, index: 'batch' } }]);
}

/** The delivery queue's handler: one attempt. */
export async function deliverOne(deps: BatchDeps, message: ReceivedMessage<DeliveryMessage>): Promise<MessageOutcome> {
  const { batchId, index } = message.body;
  const meta = await deps.store.meta(batchId);
  if (!meta?.callbackUrl || !deps.signer) return 'done';
  // The item's file (or the batch's completion mark), read once: the event is made of it, and the delivery noted in it.
  const file = index === 'batch' ? await deps.store.completed(batchId) : await deps.store.item(batchId, index);
  // Sent again once it had ended (two items finishing last at once, an item handed out again after a crash): not twice.
  if (file?.delivery && file.delivery.state !== 'pending') return 'done';
  const event = index === 'batch' ? await batchEvent(deps, meta, file as CompletedFile | undefined) : itemEvent(meta, index, file as ItemFile | undefined);
  if (!event) return 'done';
  const signer = await deps.signer();
  const result = await deliverWebhook(meta.callbackUrl, webhookId(batchId, index), event, { fetch: deps.fetch, signer, now: deps.now });
  const dead = result.outcome === 'failed' && message.attempt > deps.retries.length;
  const state: DeliveryState = {
    state: result.outcome === 'failed' ? (dead ? 'dead' : 'pending') : result.outcome,
    attempts: message.attempt,
    ...(result.status ? { lastStatus: result.status } : {}),
    ...(result.outcome === 'failed' && result.error ? { lastError: result.error } : {}),
    at: iso(deps),
  };
  // The file as read: nothing else writes it once the item (or the batch) has finished, but its delivery.
  if (index === 'batch') await deps.store.putCompleted(batchId, { ...(file as CompletedFile), delivery: state });
  else await deps.store.putItem(batchId, index, { ...(file as ItemFile), delivery: state });
  deps.onDelivery?.(result.outcome === 'failed' ? (dead ? 'dead' : 'retry') : result.outcome);
  if (dead) deps.log.error('webhook dead', { batchId, webhookId: webhookId(batchId, index), attempts: message.attempt, ...attemptFields(result) });
  if (result.outcome !== 'failed' || dead) return 'done';
  return { retryInMs: deps.retries[message.attempt - 1] };
}

function attemptFields(result: AttemptResult): Record<string, unknown> {
  return result.outcome === 'failed' ? { status: result.status, error: result.error } : { status: result.status };
}

/** `preview.completed`: the item, its record or its error (none while it has not finished). */
function itemEvent(meta: BatchMeta, index: number, file: ItemFile | undefined): WebhookEvent | undefined {
  const spec = meta.items[index];
  if (!spec || !file || file.state === 'running') return undefined;
  const item: ItemView = {
    id: spec.id,
    index,
    link: spec.link,
    state: file.state,
    ...(file.error ?? {}),
    ...(file.record ? { record: file.record } : {}),
  };
  return { type: 'preview.completed', timestamp: file.finishedAt ?? file.startedAt, data: { batchId: meta.id, item } };
}

/** `batch.completed`: every item's state (their records went in their own webhooks; `GET /previews/{batchId}` has them all). */
async function batchEvent(deps: BatchDeps, meta: BatchMeta, completed: CompletedFile | undefined): Promise<WebhookEvent | undefined> {
  if (!completed) return undefined;
  const views = await deps.store.views(meta);
  const items = views.map(({ record, delivery: _delivery, ...rest }) => ({ ...rest, ...(record ? { ok: record.ok } : {}) }));
  const done = items.filter((i) => i.state === 'done').length;
  return {
    type: 'batch.completed',
    timestamp: completed.completedAt,
    data: { batchId: meta.id, createdAt: meta.createdAt, completedAt: completed.completedAt, counts: { done, failed: items.length - done }, items },
  };
}
