/**
 * The local server's batches (docs/batches.md): their objects in the blob store (the data dir,
 * `batches/`), their two queues in the data dir (`queues/batch-items`, `queues/webhooks`:
 * lib/adapters/local/file-queue.ts), so a server killed in the middle of a batch finishes it when it
 * starts again, and the webhook secret (LINKPREVIEW_WEBHOOK_SECRETS, or one made at the first start
 * and kept in `webhook-secret`). Batch items run beside `POST /`, LINKPREVIEW_BATCH_CONCURRENCY at
 * once, each started while no `POST /` is in flight (`afterCallers`).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileQueue } from '../lib/adapters/local/file-queue.js';
import { type BatchBlobs, BatchStore, isBatchId } from '../lib/batch/store.js';
import type { DeliveryMessage, ItemMessage } from '../lib/batch/types.js';
import { WebhookSigner } from '../lib/batch/webhooks.js';
import { deliverOne, runItem } from '../lib/batch/work.js';
import type { Config } from '../lib/config.js';
import type { Resolver } from '../lib/fetch/address-guard.js';
import type { Fetcher } from '../lib/fetch/types.js';
import { type BatchRoutesDeps, batchRoutesDeps } from '../lib/http/batches.js';
import type { PreviewHandler } from '../lib/http/preview-handler.js';
import { errorFields, type Log } from '../lib/log.js';
import { BATCHES_PREFIX } from '../lib/storage-keys.js';

/** Webhooks being delivered at once. */
const DELIVERY_LANES = 8;
/** Expired batches are looked for at start, then this often. */
const SWEEP_EVERY_MS = 3_600_000;

export interface LocalBatchesOptions {
  config: Config;
  log: Log;
  blobs: BatchBlobs;
  fetch: Fetcher;
  resolver?: Resolver;
  /** Whether `POST /` previews are in flight (the local server's gate): a batch item then waits (`afterCallers`). */
  busy?: () => boolean;
  /** Marks a batch item's preview in flight, as a request is (the work parked until the server is idle waits for it); returns its end. */
  inFlight?: () => () => void;
}

export interface LocalBatches {
  deps: BatchRoutesDeps;
  /** Hands the handler to the queues and starts them (with what a previous run left). */
  start(handler: PreviewHandler): Promise<void>;
  close(): Promise<void>;
  /** Where the webhook secret came from. */
  secretSource: 'env' | 'data dir';
}

export async function localBatches(options: LocalBatchesOptions): Promise<LocalBatches> {
  const { config, log } = options;
  const { secrets, source } = await webhookSecrets(config);
  const signer = new WebhookSigner(secrets);
  let preview: PreviewHandler | undefined;
  const queues: { items?: FileQueue<ItemMessage>; deliveries?: FileQueue<DeliveryMessage> } = {};
  const deps: BatchRoutesDeps = batchRoutesDeps(config, {
    store: new BatchStore(options.blobs),
    // Set below: the queues' handlers take these deps.
    items: { send: (m) => need(queues.items).send(m) },
    deliveries: { send: (m) => need(queues.deliveries).send(m) },
    preview: async (request, requestId) => {
      const ended = options.inFlight?.();
      try {
        return await need(preview)(request, { awsRequestId: requestId });
      } finally {
        ended?.();
      }
    },
    fetch: options.fetch,
    signer: async () => signer,
    log,
    resolver: options.resolver,
  });
  const dir = (name: string) => path.join(config.dataDir, 'queues', name);
  queues.items = new FileQueue<ItemMessage>({
    dir: dir('batch-items'),
    lanes: config.batchConcurrency,
    mayStart: options.busy && afterCallers(options.busy),
    log,
    handler: (m) => runItem(deps, m),
  });
  queues.deliveries = new FileQueue<DeliveryMessage>({ dir: dir('webhooks'), lanes: DELIVERY_LANES, log, handler: (m) => deliverOne(deps, m) });
  let sweeper: NodeJS.Timeout | undefined;
  return {
    deps,
    secretSource: source,
    async start(handler) {
      preview = handler;
      await Promise.all([queues.items?.start(), queues.deliveries?.start()]);
      const sweep = () => sweepExpired(path.join(config.dataDir, BATCHES_PREFIX), log);
      await sweep();
      sweeper = setInterval(sweep, SWEEP_EVERY_MS);
      sweeper.unref();
    },
    async close() {
      clearInterval(sweeper);
      await Promise.all([queues.items?.close(), queues.deliveries?.close()]);
    },
  };
}

/** Under a steady stream of `POST /`, a batch item still starts once this long after the last. */
export const BATCH_STARVATION_MS = 2000;

/**
 * When a batch item may start: while no `POST /` is in flight, or when none has started for
 * BATCH_STARVATION_MS (a batch moves under any load). Measured with `npm run bench -- batch`: a
 * `POST /` beside a 1,000-link batch at 1.28–1.48× its p50 alone, against 1.64–2.07× when an item
 * started whenever no `POST /` waited for a slot (docs/benchmarks.md, "Batches").
 */
export function afterCallers(busy: () => boolean, now: () => number = Date.now): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const at = now();
    if (busy() && at - last < BATCH_STARVATION_MS) return false;
    last = at;
    return true;
  };
}

function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the batches are not started');
  return value;
}

/** LINKPREVIEW_WEBHOOK_SECRETS, or the data dir's own secret (made once, kept in `webhook-secret`, readable by its owner only). */
async function webhookSecrets(config: Config): Promise<{ secrets: string[]; source: 'env' | 'data dir' }> {
  if (config.webhookSecrets.length) return { secrets: config.webhookSecrets, source: 'env' };
  const file = path.join(config.dataDir, 'webhook-secret');
  const kept = (await fs.readFile(file, 'utf8').catch(() => '')).trim();
  if (kept) return { secrets: [kept], source: 'data dir' };
  const made = `whsec_${randomBytes(32).toString('base64')}`;
  await fs.mkdir(config.dataDir, { recursive: true });
  await fs.writeFile(file, `${made}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  // Another process may have made it first: the one in the file is the secret.
  return { secrets: [(await fs.readFile(file, 'utf8')).trim()], source: 'data dir' };
}

/** Removes the batches whose time is up (their `batch.json` says until when), and the open marks of batches no longer there. */
async function sweepExpired(root: string, log: Log): Promise<void> {
  const ids = (await fs.readdir(root).catch(() => [] as string[])).filter(isBatchId);
  const now = Date.now();
  for (const id of ids) {
    try {
      const meta = JSON.parse(await fs.readFile(path.join(root, id, 'batch.json'), 'utf8')) as { expiresAt?: string };
      if (meta.expiresAt && Date.parse(meta.expiresAt) <= now) await fs.rm(path.join(root, id), { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('batch sweep skipped one', { id, ...errorFields(err) });
    }
  }
  const open = path.join(root, 'open');
  for (const keyId of await fs.readdir(open).catch(() => [] as string[])) {
    for (const mark of await fs.readdir(path.join(open, keyId)).catch(() => [] as string[])) {
      const there = await fs.stat(path.join(root, mark.split('.')[0], 'batch.json')).then(
        () => true,
        () => false,
      );
      if (!there) await fs.rm(path.join(open, keyId, mark), { force: true });
    }
  }
}
