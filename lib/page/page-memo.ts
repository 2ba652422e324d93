/**
 * The page memo: what a preview of exactly one page (its final URL, Content-Type and bytes) got
 * from its jobs, as one small JSON object under `jobs/` (private; on AWS expired with the job
 * results after a day): the record's hosted `image` and `icon`, and the `page-content` job's
 * result once its versions are complete. It is content-addressed like the images: the same bytes
 * give the same record, so a preview that takes its parts from here is as fresh as one that runs
 * the jobs; a page whose bytes changed in any way (a timestamp, a nonce) misses it.
 *
 *  - The preview reads it before it submits any job (one GET) and runs only the jobs for the
 *    parts it lacks: a page seen before costs no job, no queue message and no worker invocation.
 *  - The preview writes it (one PUT) when its jobs gave a part the memo did not have: the image,
 *    the icon, and the page's versions when the job says they are complete (every content image
 *    it started was hosted). A part that came late, or failed for a reason that may pass, is
 *    left out and tried again; an image or icon that failed for a lasting reason of its own (a
 *    404, undecodable: ImageJobResult.lasting) is remembered as failed for FAILED_PART_TTL_MS,
 *    as the image job remembers a failed URL.
 *  - Versions made complete later, once the content images hosted in the background are in
 *    (lib/page/page-content.ts), are remembered by the job itself (rememberPageContent), in an
 *    object of their own beside the memo (`<key>.content.json`): the preview may write the memo
 *    at the same moment, and neither write may undo the other. A preview that finds a memo
 *    without versions reads that object too, and writes the versions into the memo (once), so
 *    the next preview of the page reads one object.
 *
 * Addresses are stored as the reader's public URLs, with the base they were made with: a memo read
 * through another base (a new CloudFront domain, a local server on another port) is not used.
 * No DOM and no job code here: the preview side imports this module.
 */
import { createHash } from 'node:crypto';
import type { Icon, ImageSet } from '../contract/link.js';
import type { PageContentResult } from '../jobs/kinds.js';
import { readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';

/** Bumped when what a preview makes of the same page bytes changes (the sanitizer, the versions' format, the memo's shape). */
const MEMO_VERSION = 2;

/** A memo older than this is not used (on AWS, `jobs/` expires after a day anyway): an image behind an unchanged URL may change. */
export const PAGE_MEMO_TTL_MS = 24 * 3600_000;

/** A part that failed for a lasting reason is not tried again for this long (lib/media/images.ts URL_MEMO.failedMs). */
export const FAILED_PART_TTL_MS = 10 * 60_000;

type CardPart = 'image' | 'icon';

/** The parts of a preview the memo keeps. */
export interface PageMemoParts {
  image?: ImageSet;
  icon?: Icon;
  /** The card's parts that failed for a lasting reason (recalled: within FAILED_PART_TTL_MS). */
  failed?: { [P in CardPart]?: true };
  /** The page-content result of complete versions, or of a page that has none (never one whose versions are incomplete). */
  content?: PageContentResult;
}

interface PageMemo extends Omit<PageMemoParts, 'failed'> {
  /** When each failed part failed (epoch ms). */
  failedAt?: { [P in CardPart]?: number };
  v: number;
  /** When the preview wrote it (epoch ms). */
  at: number;
  /** `publicUrl('')` of the store that made the addresses. */
  base: string;
}

/** What identifies the page: its final URL, Content-Type and bytes (as the preview fetched them, or the page-content job gets them). */
export interface PageIdentity {
  url: string;
  contentType?: string;
  bytes: Buffer;
}

/** The memo's key for a page: `jobs/page/<sha256>.json`, over its length-prefixed parts. */
export function pageMemoKey(page: PageIdentity): string {
  const hash = createHash('sha256');
  for (const part of [String(MEMO_VERSION), page.url, page.contentType ?? '']) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  hash.update(`${page.bytes.length}:`).update(page.bytes);
  return `jobs/page/${hash.digest('hex')}.json`;
}

async function readPageMemo(blobs: BlobStore, key: string, now: number): Promise<PageMemo | undefined> {
  // A missing or unreadable memo: run the jobs.
  const memo = (await readMemo(blobs, key)) as Partial<PageMemo> | undefined;
  if (memo?.v !== MEMO_VERSION || typeof memo.at !== 'number' || memo.base !== blobs.publicUrl('')) return undefined;
  const age = now - memo.at;
  if (age < 0 || age >= PAGE_MEMO_TTL_MS) return undefined;
  return memo as PageMemo;
}

/** Where the job remembers versions it completed after its result (beside the page's memo). */
const laterContentKey = (key: string) => key.replace(/\.json$/, '.content.json');

/** What the preview recalled: the parts, and whether some came from beside the memo (they are to be written into it). */
export interface RecalledPage extends PageMemoParts {
  unmerged?: boolean;
  /** The memo's failure times, kept as they are when the memo is written again. */
  failedAt?: PageMemo['failedAt'];
}

/** A remembered result: its versions, or why the page has none (deterministic for these bytes, like the versions). */
const hasVersions = (c: PageContentResult | undefined): c is PageContentResult => typeof c?.htmlUrl === 'string' || typeof c?.reason === 'string';

/**
 * The parts remembered for the page under `key`, or undefined when there is no memo. A memo
 * without versions: the versions the job completed later, when there are some (a second read).
 */
export async function recallPage(blobs: BlobStore, key: string, now = Date.now()): Promise<RecalledPage | undefined> {
  const memo = await readPageMemo(blobs, key, now);
  if (!memo) return undefined;
  const parts: RecalledPage = {};
  if (typeof memo.image?.original?.url === 'string') parts.image = memo.image;
  if (typeof memo.icon?.url === 'string') parts.icon = memo.icon;
  for (const part of ['image', 'icon'] as const) {
    const at = memo.failedAt?.[part];
    if (!parts[part] && typeof at === 'number' && now - at >= 0 && now - at < FAILED_PART_TTL_MS) {
      parts.failed = { ...parts.failed, [part]: true };
      parts.failedAt = { ...parts.failedAt, [part]: at };
    }
  }
  if (hasVersions(memo.content)) parts.content = memo.content;
  else {
    const later = (await readPageMemo(blobs, laterContentKey(key), now))?.content;
    if (hasVersions(later)) Object.assign(parts, { content: later, unmerged: true });
  }
  return parts;
}

/**
 * Writes the memo with the parts of `got` that `recalled` (what the preview read) lacks, added to
 * those; nothing when there is nothing new (and nothing recalled from beside the memo). Returns
 * whether it wrote. A failed write is only a lost memo.
 */
export async function rememberPage(blobs: BlobStore, key: string, got: PageMemoParts, recalled?: RecalledPage, now = Date.now()): Promise<boolean> {
  const { unmerged, failed: _failed, ...known } = recalled ?? {};
  const next: Omit<PageMemo, 'v' | 'at' | 'base'> = { ...known };
  let added = unmerged === true;
  // A part that failed now for a lasting reason (a recalled failure keeps its own time).
  for (const part of ['image', 'icon'] as const) {
    if (got.failed?.[part] && !got[part] && !next[part] && !next.failedAt?.[part]) {
      next.failedAt = { ...next.failedAt, [part]: now };
      added = true;
    }
  }
  for (const part of ['image', 'icon', 'content'] as const) {
    const value = got[part];
    if (value === undefined || next[part] !== undefined) continue;
    if (part === 'content' && (value as PageContentResult).complete !== true) continue;
    Object.assign(next, { [part]: value });
    added = true;
  }
  if (!added) return false;
  const memo: PageMemo = { v: MEMO_VERSION, at: now, base: blobs.publicUrl(''), ...next };
  await writeMemo(blobs, key, memo);
  return true;
}

/** Remembers versions the job completed after its result (once the images it hosted in the background are in), beside the page's memo. */
export async function rememberPageContent(blobs: BlobStore, key: string, content: PageContentResult, now = Date.now()): Promise<void> {
  const memo: PageMemo = { v: MEMO_VERSION, at: now, base: blobs.publicUrl(''), content: { ...content, complete: true } };
  await writeMemo(blobs, laterContentKey(key), memo);
}
