/**
 * The page memo: what a preview of exactly one page (its final URL, Content-Type and bytes) got
 * from its jobs, as small JSON objects under `jobs/` (private; on AWS expired with the job
 * results after a day): the preview's (`jobs/page/<digest>.json`: the record's hosted `image` and
 * `icon`, the player an oEmbed fetch for it alone gave (lib/embed/pipeline.ts), and whether a
 * record named the versions), and the `page-content` job's own (`jobs/page-content/<digest>.json`:
 * its result, the reading time, excerpt and the versions' addresses, or why the page has none).
 * The job writes its part itself, once it has read the content, because the record no longer
 * waits for it: what came after the record went out is there for the next preview all the same;
 * a result that came in time is in the preview's too (written before the record goes out, so the
 * very next preview finds it, whenever the job's own write lands).
 * It is content-addressed like the images: the same bytes
 * give the same record, so a preview that takes its parts from here is as fresh as one that runs
 * the jobs; a page whose bytes changed in any way (a timestamp, a nonce) misses it. The hosted
 * `image` is kept whole, placeholders (dominantColor, blurhash) included.
 *
 *  - The preview reads both before it submits any job (two GETs at once) and runs only the jobs for
 *    the parts it lacks: a page seen before costs no job, no queue message and no worker invocation.
 *  - The preview writes its own (one PUT) when its jobs gave a part the memo did not have: the
 *    image, the icon, the page-content result, the versions named. A part that came late, or failed for a reason that may pass, is
 *    left out and tried again; an image or icon that failed for a lasting reason of its own (a
 *    404, undecodable: ImageJobResult.lasting) is remembered as failed for FAILED_PART_TTL_MS,
 *    as the image job remembers a failed URL.
 *  - The page's versions (lib/page/page-versions.ts) are at addresses fixed by the same digest as
 *    the memo, `assets/<digest>/page.html|page.md|page.txt`, so a record names them before they
 *    are written, even before the content is read. The preview's memo keeps `versionsUntil`: that a
 *    record named them, and the deadline of the job that builds them. It is written before the
 *    record goes out, so whoever serves an address the record named and
 *    finds nothing there yet (the local server's /assets/, the CDN's origin on AWS) learns from
 *    it that the versions are on their way, and until when (versionsNamed). Versions that could
 *    not be built are stored as stand-ins, and both memos forget them (forgetVersions), so the next
 *    preview of the same bytes builds them again.
 *
 * Addresses are stored as the reader's public URLs, with the base they were made with: a memo read
 * through another base (a new CloudFront domain, a local server on another port) is not used.
 * No DOM and no job code here: the preview side imports this module.
 */
import { createHash } from 'node:crypto';
import type { Icon, ImageSet } from '../contract/link.js';
import { MEMO_MAX_TTL_MS } from '../core-settings.js';
import type { Player } from '../embed/types.js';
import type { SiteFacts } from '../extract/site-name.js';
import type { PageContentResult } from '../jobs/kinds.js';
import { FAILED_MEMO_TTL_MS, readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';
import { memoKeyFromDigest } from '../storage-keys.js';

/**
 * Bumped when what a preview makes of the same page bytes changes (the sanitizer, the versions'
 * format, the memo's shape); it is part of the page's digest, the memo's key and the versions'
 * addresses, so versions made before are never found again (4: the versions at addresses fixed by this digest,
 * named before they are written).
 */
const MEMO_VERSION = 4;

/** A memo older than this is not used (on AWS, `jobs/` expires then anyway): an image behind an unchanged URL may change. */
export const PAGE_MEMO_TTL_MS = MEMO_MAX_TTL_MS;

/** A part that failed for a lasting reason is not tried again for this long (as a failed image URL: lib/jobs/memo.ts). */
export const FAILED_PART_TTL_MS = FAILED_MEMO_TTL_MS;

type CardPart = 'image' | 'icon';

/** The parts of a preview the memo keeps. */
export interface PageMemoParts {
  image?: ImageSet;
  icon?: Icon;
  /** The site's facts from its manifest, read with the icon (lib/extract/site-name.ts). */
  site?: SiteFacts;
  /** The card's parts that failed for a lasting reason (recalled: within FAILED_PART_TTL_MS). */
  failed?: { [P in CardPart]?: true };
  /**
   * The page-content result (its reading time and excerpt, and the versions' addresses, or why the
   * page has none): the preview's, when the result came before the record went out; else the
   * job's own memo's (rememberContent), which the job writes once it has read the content.
   */
  content?: PageContentResult;
  /**
   * A record named the versions, and the job that builds them ends at the latest then (epoch ms;
   * the latest of the jobs run for these bytes).
   */
  versionsUntil?: number;
  /**
   * The player an oEmbed answer fetched for it alone gave (lib/embed/pipeline.ts): that fetch is
   * dropped when the rest of the record is ready first, so a page whose jobs are all remembered
   * would lose it; the recalled one passes the allow list again.
   */
  player?: Player;
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

/** The page's digest: the SHA-256 of its length-prefixed parts (and of MEMO_VERSION). The memo's key and the versions' addresses are made of it. */
export function pageDigest(page: PageIdentity): string {
  const hash = createHash('sha256');
  for (const part of [String(MEMO_VERSION), page.url, page.contentType ?? '']) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  hash.update(`${page.bytes.length}:`).update(page.bytes);
  return hash.digest('hex');
}

/** The memo's key for a page: `jobs/page/<digest>.json`. */
export function pageMemoKey(page: PageIdentity): string {
  return memoKeyFromDigest('page', pageDigest(page));
}

async function readPageMemo(blobs: BlobStore, key: string, now: number): Promise<PageMemo | undefined> {
  // A missing or unreadable memo: run the jobs.
  const memo = (await readMemo(blobs, key)) as Partial<PageMemo> | undefined;
  if (memo?.v !== MEMO_VERSION || typeof memo.at !== 'number' || memo.base !== blobs.publicUrl('')) return undefined;
  const age = now - memo.at;
  if (age < 0 || age >= PAGE_MEMO_TTL_MS) return undefined;
  return memo as PageMemo;
}

/** What the preview recalled: the parts. */
export interface RecalledPage extends PageMemoParts {
  /** The memo's failure times, kept as they are when the memo is written again. */
  failedAt?: PageMemo['failedAt'];
}

/** A remembered result: its versions, or why the page has none (deterministic for these bytes). */
const hasVersions = (c: PageContentResult | undefined): c is PageContentResult => typeof c?.htmlUrl === 'string' || typeof c?.reason === 'string';

/** The parts remembered for the page with this digest (both memos, read at once), or undefined when there is neither. */
export async function recallPage(blobs: BlobStore, digest: string, now = Date.now()): Promise<RecalledPage | undefined> {
  const [memo, jobs] = await Promise.all([readPageMemo(blobs, memoKeyFromDigest('page', digest), now), recallContent(blobs, digest, now)]);
  if (!memo) return jobs ? { content: jobs } : undefined;
  const content = hasVersions(memo.content) ? memo.content : jobs;
  const parts: RecalledPage = content ? { content } : {};
  // An image remembered before the placeholders is not used: its job runs again (the image job
  // reuses its renditions and adds them), and the memo is written with them.
  if (typeof memo.image?.original?.url === 'string' && typeof memo.image.blurhash === 'string') parts.image = memo.image;
  if (typeof memo.icon?.url === 'string') parts.icon = memo.icon;
  const site = memo.site;
  if (site && (typeof site.name === 'string' || typeof site.themeColor === 'string')) parts.site = { name: site.name, themeColor: site.themeColor };
  for (const part of ['image', 'icon'] as const) {
    const at = memo.failedAt?.[part];
    if (!parts[part] && typeof at === 'number' && now - at >= 0 && now - at < FAILED_PART_TTL_MS) {
      parts.failed = { ...parts.failed, [part]: true };
      parts.failedAt = { ...parts.failedAt, [part]: at };
    }
  }
  const player = memo.player;
  if (typeof player?.url === 'string' && typeof player.provider === 'string' && typeof player.type === 'string') parts.player = player;
  if (typeof memo.versionsUntil === 'number') parts.versionsUntil = memo.versionsUntil;
  return parts;
}

/**
 * Writes the preview's memo with the parts of `got` that `recalled` (what the preview read) lacks,
 * added to those: `written`, or `unchanged` when there was nothing new. A failed write is only a
 * lost memo (`failed`), except for versions it was to name: the record leaves them out then
 * (nobody serving their addresses would know they are on their way). `now` (default: the clock)
 * dates it.
 */
export async function rememberPage(
  blobs: BlobStore,
  key: string,
  got: PageMemoParts,
  options: { recalled?: RecalledPage; now?: number } = {},
): Promise<'written' | 'unchanged' | 'failed'> {
  const { recalled, now = Date.now() } = options;
  const { failed: _failed, ...known } = recalled ?? {};
  const next: Omit<PageMemo, 'v' | 'at' | 'base'> = { ...known };
  let added = false;
  // A part that failed now for a lasting reason (a recalled failure keeps its own time).
  for (const part of ['image', 'icon'] as const) {
    if (got.failed?.[part] && !got[part] && !next[part] && !next.failedAt?.[part]) {
      next.failedAt = { ...next.failedAt, [part]: now };
      added = true;
    }
  }
  for (const part of ['image', 'icon'] as const) {
    const value = got[part];
    if (value === undefined || next[part] !== undefined) continue;
    Object.assign(next, { [part]: value });
    added = true;
  }
  if (got.player && !next.player) {
    next.player = got.player;
    added = true;
  }
  // The manifest's facts, read with the icon.
  if (got.site && !next.site && (got.site.name || got.site.themeColor)) {
    next.site = got.site;
    added = true;
  }
  // A result of a job run now that came before the record went out (the job remembers it too).
  if (got.content && hasVersions(got.content) && !hasVersions(next.content)) {
    next.content = got.content;
    added = true;
  }
  // Versions a record of a job run now names: on their way until its deadline.
  if (got.versionsUntil !== undefined && got.versionsUntil > (next.versionsUntil ?? 0)) {
    next.versionsUntil = got.versionsUntil;
    added = true;
  }
  if (!added) return 'unchanged';
  const memo: PageMemo = { v: MEMO_VERSION, at: now, base: blobs.publicUrl(''), ...next };
  return (await writeMemo(blobs, key, memo)) ? 'written' : 'failed';
}

/**
 * The memos' view of the versions of the page with this digest: whether a record named them (the
 * preview's memo says so; or the job's names them, since a later record may take them from there),
 * and until when their job runs at the latest.
 */
export async function versionsNamed(blobs: BlobStore, digest: string): Promise<{ until: number } | undefined> {
  const [memo, job] = await Promise.all([
    readMemo(blobs, memoKeyFromDigest('page', digest)) as Promise<Partial<PageMemo> | undefined>,
    readMemo(blobs, memoKeyFromDigest('page-content', digest)) as Promise<Partial<ContentMemo> | undefined>,
  ]);
  const untils = [
    memo?.v === MEMO_VERSION ? memo.versionsUntil : undefined,
    job?.v === MEMO_VERSION && typeof job.content?.htmlUrl === 'string' ? job.versionsUntil : undefined,
  ].filter((u): u is number => typeof u === 'number');
  return untils.length ? { until: Math.max(...untils) } : undefined;
}

/**
 * Both memos without the versions (their stand-ins were stored: lib/page/page-versions.ts), so the
 * next preview of the same bytes runs the job, which builds them again.
 */
export async function forgetVersions(blobs: BlobStore, digest: string): Promise<void> {
  const key = memoKeyFromDigest('page', digest);
  const memo = (await readMemo(blobs, key)) as Partial<PageMemo> | undefined;
  const contentKey = memoKeyFromDigest('page-content', digest);
  const content = (await readMemo(blobs, contentKey)) as Partial<ContentMemo> | undefined;
  await Promise.all([
    memo?.v === MEMO_VERSION && (memo.versionsUntil !== undefined || memo.content !== undefined)
      ? writeMemo(blobs, key, { ...memo, content: undefined, versionsUntil: undefined })
      : undefined,
    content?.v === MEMO_VERSION && content.content !== undefined
      ? writeMemo(blobs, contentKey, { ...content, content: undefined, versionsUntil: undefined })
      : undefined,
  ]);
}

/** The page-content job's memo: its result for these bytes, written by the job (rememberContent). */
interface ContentMemo {
  v: number;
  at: number;
  base: string;
  content?: PageContentResult;
  /** The job's deadline, by which the versions `content` names are built (or stand-ins stored). */
  versionsUntil?: number;
}

/**
 * Remembers the page-content job's result for the page with this digest (the job writes it once
 * it has read the content, whether or not a record waited for it), with the deadline of the job
 * building the versions it names (`until`). Whether it was stored.
 */
export function rememberContent(blobs: BlobStore, digest: string, job: { content: PageContentResult; until?: number; now?: number }): Promise<boolean> {
  const { content, until, now = Date.now() } = job;
  const memo: ContentMemo = { v: MEMO_VERSION, at: now, base: blobs.publicUrl(''), content, ...(until !== undefined ? { versionsUntil: until } : {}) };
  return writeMemo(blobs, memoKeyFromDigest('page-content', digest), memo);
}

/** The page-content result remembered for these bytes (made with this store's base, within PAGE_MEMO_TTL_MS), or undefined. */
async function recallContent(blobs: BlobStore, digest: string, now: number): Promise<PageContentResult | undefined> {
  const memo = (await readMemo(blobs, memoKeyFromDigest('page-content', digest))) as Partial<ContentMemo> | undefined;
  if (memo?.v !== MEMO_VERSION || typeof memo.at !== 'number' || memo.base !== blobs.publicUrl('')) return undefined;
  const age = now - memo.at;
  if (age < 0 || age >= PAGE_MEMO_TTL_MS) return undefined;
  return hasVersions(memo.content) ? memo.content : undefined;
}
