/**
 * The small JSON memos the jobs leave under `jobs/` in the blob store (private; on AWS expired with
 * the job results after a day): the failed image URL memo, the screenshot memo and the page memo (lib/page/page-memo.ts).
 * A memo is only a shortcut: a missing, unreadable or unwritable one means doing the work again.
 */
import { createHash } from 'node:crypto';
import type { BlobStore } from '../ports.js';
import { type MemoKind, memoKeyFromDigest } from '../storage-keys.js';

/**
 * A part that failed for a lasting reason of its own (an image's 404, undecodable bytes) is not
 * tried again for this long (ms): the failed image URL memo and the page memo's failed parts.
 */
export const FAILED_MEMO_TTL_MS = 10 * 60_000;

/** `jobs/<kind>/<sha256 of text>.json` (lib/storage-keys.ts). */
export function memoKey(kind: MemoKind, text: string): string {
  return memoKeyFromDigest(kind, createHash('sha256').update(text).digest('hex'));
}

/** The memo's parsed JSON, or undefined when there is none or it cannot be read. */
export async function readMemo(blobs: BlobStore, key: string): Promise<unknown> {
  try {
    const raw = await blobs.get(key);
    return raw ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the memo: whether it was stored (a failed write is only a lost memo). */
export async function writeMemo(blobs: BlobStore, key: string, value: unknown): Promise<boolean> {
  return blobs.put(key, JSON.stringify(value), { contentType: 'application/json', cacheControl: 'no-store' }).then(
    () => true,
    () => false,
  );
}
