/**
 * The blob store's key layout, in one place (the local directory and the S3 bucket alike):
 *
 *   assets/<sha256>/<name>              content-addressed assets: image renditions, a text's body, a
 *                                       video's preview clip; and a page's versions, under the page's
 *                                       digest (lib/page/page-versions.ts). Public (CloudFront on
 *                                       AWS, /assets/ locally) and immutable.
 *   jobs/<requestId>/<jobId>.json       a job's result (AWS: when it does not travel as a reply)
 *   jobs/<requestId>/<jobId>.input.json a job's input too large for its SQS message
 *   jobs/<memo kind>/<sha256>.json      the memos (lib/jobs/memo.ts): failed image URLs, screenshots,
 *                                       walled hosts, pages
 *   jobs/status-probe/<id>.json         the blob written and read back by a deep `GET /status`
 *   batches/<batchId>/batch.json        a batch of `POST /previews`: its links, its key, its callback
 *   batches/<batchId>/items/<n>.json    one item's state, record and webhook delivery
 *   batches/<batchId>/completed.json    set once every item has finished (and the batch's webhook)
 *   batches/open/<keyId>/<batchId>.<n>  an empty mark of a key's batch of n items not yet complete
 *                                       (the per-key limit of LINKPREVIEW_BATCH_MAX_QUEUED)
 *
 * `jobs/` and `batches/` are private; on AWS `jobs/` expires after JOBS_EXPIRE_DAYS
 * (lib/core-settings.ts), `batches/` after LINKPREVIEW_BATCH_TTL_DAYS. The CDK
 * app takes the prefixes from here (the bucket's lifecycle rule, the CloudFront access, the
 * functions' grants), so this module imports nothing of the service.
 */
import { createHash } from 'node:crypto';

export const ASSETS_PREFIX = 'assets/';
export const JOBS_PREFIX = 'jobs/';
export const BATCHES_PREFIX = 'batches/';

/** `batches/<batchId>/<name>`: an object of a batch (lib/batch/store.ts); the id is checked by the caller. */
export function batchKey(batchId: string, name: string): string {
  return `${BATCHES_PREFIX}${batchId}/${name}`;
}

/** `batches/open/<keyId>/`: the marks of a key's batches not yet complete (lib/batch/store.ts). */
export function openBatchesFolder(keyId: string): string {
  return `${BATCHES_PREFIX}open/${keyId}/`;
}

/** `assets/<sha256>/<name>`: the key of an asset named by a SHA-256 hex digest. */
export function assetKey(sha256: string, name: string): string {
  return `${ASSETS_PREFIX}${sha256}/${name}`;
}

/** The asset key of `bytes`, addressed by their own SHA-256: `assets/<sha256 of bytes>/<name>`. */
export function assetKeyOf(bytes: Uint8Array, name: string): string {
  return assetKey(createHash('sha256').update(bytes).digest('hex'), name);
}

/** Whether `key` names an asset (public, immutable) rather than a private `jobs/` object. */
export function isAssetKey(key: string): boolean {
  return key.startsWith(ASSETS_PREFIX);
}

/**
 * The memos under `jobs/`, by kind: a failed image URL (lib/media/images.ts), the screenshot of a
 * URL (lib/browser/screenshot-memo.ts), a walled host (lib/fetch/wall-memo.ts), a page's parts
 * and its page-content job's result (lib/page/page-memo.ts).
 */
export type MemoKind = 'image-url' | 'screenshot-url' | 'proxy-walls' | 'page' | 'page-content';

/** `jobs/<kind>/`: where the memos of a kind are. */
export function memoPrefix(kind: MemoKind): string {
  return `${JOBS_PREFIX}${kind}/`;
}

/** `jobs/<kind>/<sha256>.json`: a memo's key, from the digest of what it is for. */
export function memoKeyFromDigest(kind: MemoKind, sha256: string): string {
  return `${memoPrefix(kind)}${sha256}.json`;
}

/** `jobs/status-probe/<id>.json`: a deep status check's probe blob. */
export function statusProbeKey(id: string): string {
  return `${JOBS_PREFIX}status-probe/${id}.json`;
}

/** A key segment from an id: only [A-Za-z0-9_=-], everything else escaped, so ids cannot walk out of their prefix. */
function keySegment(id: string): string {
  if (!id) throw new Error('empty id');
  return id.replace(/[^A-Za-z0-9_=-]/g, (c) => `~${c.charCodeAt(0).toString(16)}`);
}

function jobPrefix(requestId: string): string {
  return `${JOBS_PREFIX}${keySegment(requestId)}/`;
}

/** `jobs/<requestId>/<jobId>.json`: where a job's result is stored. */
export function resultKey(requestId: string, jobId: string): string {
  return `${jobPrefix(requestId)}${keySegment(jobId)}.json`;
}

/** `jobs/<requestId>/<jobId>.input.json`: where a job's input too large for its message is stored. */
export function inputKey(requestId: string, jobId: string): string {
  return `${jobPrefix(requestId)}${keySegment(jobId)}.input.json`;
}
