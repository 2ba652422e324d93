/**
 * Where a batch lives: small JSON objects under `batches/<batchId>/` of the blob store
 * (lib/storage-keys.ts; private: never under /assets/ nor CloudFront), the local data dir or S3.
 * One object per item, so the items of a batch finishing at once on different workers never
 * write the same object. Every put is durable: once it resolves, a restart finds it.
 *
 * A key's batches not yet complete are marked (`batches/open/<keyId>/<batchId>.<items>`, empty):
 * its items outstanding are one LIST away, on S3 as locally, for the per-key limit. The mark goes
 * once the batch is complete; an expired one with the batch (the local sweep, S3's lifecycle rule).
 */
import { randomBytes } from 'node:crypto';
import type { BlobStore } from '../ports.js';
import { batchKey, openBatchesFolder } from '../storage-keys.js';
import type { BatchMeta, CompletedFile, ItemFile, ItemView } from './types.js';

const BATCH_ID = /^bat_[A-Za-z0-9_-]{22}$/;

/** A new batch id: `bat_` and 128 random bits. */
export function newBatchId(): string {
  return `bat_${randomBytes(16).toString('base64url')}`;
}

/** Whether `id` has a batch id's form (anything else names no batch: 404 without a read). */
export function isBatchId(id: string): boolean {
  return BATCH_ID.test(id);
}

/** Batch metas kept in memory (they never change once written). */
const META_CACHE = 256;

/** A blob store that lists and deletes (both of linklens's do). */
export type BatchBlobs = BlobStore & Required<Pick<BlobStore, 'list' | 'delete'>>;

export class BatchStore {
  private readonly metas = new Map<string, BatchMeta>();

  constructor(
    private readonly blobs: BatchBlobs,
    private readonly now: () => number = Date.now,
  ) {}

  async putMeta(meta: BatchMeta): Promise<void> {
    await this.putJson(batchKey(meta.id, 'batch.json'), meta);
    this.remember(meta);
  }

  /** The batch, or undefined when there is none, or it has expired. */
  async meta(batchId: string): Promise<BatchMeta | undefined> {
    if (!isBatchId(batchId)) return undefined;
    const meta = this.metas.get(batchId) ?? (await this.getJson<BatchMeta>(batchKey(batchId, 'batch.json')));
    if (!meta || Date.parse(meta.expiresAt) <= this.now()) return undefined;
    this.remember(meta);
    return meta;
  }

  item(batchId: string, index: number): Promise<ItemFile | undefined> {
    return this.getJson<ItemFile>(batchKey(batchId, `items/${index}.json`));
  }

  putItem(batchId: string, index: number, file: ItemFile): Promise<void> {
    return this.putJson(batchKey(batchId, `items/${index}.json`), file);
  }

  completed(batchId: string): Promise<CompletedFile | undefined> {
    return this.getJson<CompletedFile>(batchKey(batchId, 'completed.json'));
  }

  putCompleted(batchId: string, file: CompletedFile): Promise<void> {
    return this.putJson(batchKey(batchId, 'completed.json'), file);
  }

  /** Marks the batch open until `closed`, with its `items` outstanding (its valid ones). */
  markOpen(meta: BatchMeta, items: number): Promise<void> {
    return this.blobs.put(`${openBatchesFolder(meta.keyId)}${meta.id}.${items}`, '', {
      contentType: 'application/octet-stream',
      cacheControl: 'no-store',
      durable: true,
    });
  }

  async markClosed(meta: BatchMeta): Promise<void> {
    const folder = openBatchesFolder(meta.keyId);
    const marks = (await this.blobs.list(folder)).filter((k) => k.startsWith(`${folder}${meta.id}.`));
    await Promise.all(marks.map((k) => this.blobs.delete(k)));
  }

  /** The items of the key's batches not yet complete (their finished items included): one LIST per 1,000 such batches. */
  async outstanding(keyId: string): Promise<number> {
    let n = 0;
    for (const key of await this.blobs.list(openBatchesFolder(keyId))) n += Number(/\.(\d+)$/.exec(key)?.[1] ?? 0);
    return n;
  }

  /** Every item as the API answers it (one read per item that was valid). */
  async views(meta: BatchMeta): Promise<ItemView[]> {
    return Promise.all(
      meta.items.map(async (spec): Promise<ItemView> => {
        const base = { id: spec.id, index: spec.index, link: spec.link };
        if (spec.error) return { ...base, state: 'failed', ...spec.error };
        const file = await this.item(meta.id, spec.index);
        if (!file) return { ...base, state: 'queued' };
        return {
          ...base,
          state: file.state,
          ...(file.error ?? {}),
          ...(file.record ? { record: file.record } : {}),
          ...(file.delivery ? { delivery: file.delivery } : {}),
        };
      }),
    );
  }

  /**
   * Whether every item has finished. Read from the last item back, stopping at the first that has
   * not: items are previewed in order, so until the end this costs a read or two.
   */
  async allFinished(meta: BatchMeta): Promise<boolean> {
    for (let i = meta.items.length - 1; i >= 0; i--) {
      if (meta.items[i].error) continue;
      const file = await this.item(meta.id, i);
      if (file?.state !== 'done' && file?.state !== 'failed') return false;
    }
    return true;
  }

  private remember(meta: BatchMeta): void {
    this.metas.delete(meta.id);
    this.metas.set(meta.id, meta);
    if (this.metas.size > META_CACHE) this.metas.delete(this.metas.keys().next().value as string);
  }

  private async getJson<T>(key: string): Promise<T | undefined> {
    const raw = await this.blobs.get(key);
    return raw ? (JSON.parse(raw.toString('utf8')) as T) : undefined;
  }

  private putJson(key: string, value: unknown): Promise<void> {
    return this.blobs.put(key, JSON.stringify(value), { contentType: 'application/json', cacheControl: 'no-store', durable: true });
  }
}
