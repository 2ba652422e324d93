/**
 * The page memo: what a preview of exactly one page (its final URL, Content-Type and bytes) got
 * from its jobs, as one small JSON object under `jobs/` (private; on AWS expired with the job
 * results after a day): the record's hosted `image` and `icon`, the `page-content` job's
 * result once its versions are complete, and the player an oEmbed fetch for it alone gave
 * (lib/embed/pipeline.ts). It is content-addressed like the images: the same bytes
 * give the same record, so a preview that takes its parts from here is as fresh as one that runs
 * the jobs; a page whose bytes changed in any way (a timestamp, a nonce) misses it. The hosted
 * `image` is kept whole, placeholders (dominantColor, blurhash) included.
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
 *    (lib/page/page-content.ts), are stored by the job at a key fixed by the first versions:
 *    `page.full.html` under a key made of their page.html's and the images' addresses, naming its
 *    page.md and page.txt in its metadata (fullVersionsKey, readFullVersions). The memo keeps the first versions with that key
 *    (`fullKey`); a preview that recalls them looks there (one HEAD), takes the complete ones
 *    and writes them into the memo (once). No object of the job's own beside the memo: the job
 *    of any later preview of the same content (its bytes changed, say) finds them there too, and
 *    its versions are complete at once.
 *
 * Addresses are stored as the reader's public URLs, with the base they were made with: a memo read
 * through another base (a new CloudFront domain, a local server on another port) is not used.
 * No DOM and no job code here: the preview side imports this module.
 */
import { createHash } from 'node:crypto';
import { ASSET_METADATA } from '../asset-metadata.js';
import type { Icon, ImageSet } from '../contract/link.js';
import { MEMO_MAX_TTL_MS } from '../core-settings.js';
import type { Player } from '../embed/types.js';
import type { SiteFacts } from '../extract/site-name.js';
import type { PageContentResult } from '../jobs/kinds.js';
import { FAILED_MEMO_TTL_MS, readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';
import { assetKey, isAssetKey, memoKeyFromDigest } from '../storage-keys.js';

/**
 * Bumped when what a preview makes of the same page bytes changes (the sanitizer, the versions'
 * format, the memo's shape); it is part of the memo's key and of the complete versions' key, so
 * versions made before are never found again (3: page.md escapes the text's `&`, `<` and `>`).
 */
const MEMO_VERSION = 3;

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
   * The page-content result of complete versions, or of a page that has none; in the memo also
   * first versions whose complete ones will be at their `fullKey` (recalled only once they are).
   */
  content?: PageContentResult;
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

/** The memo's key for a page: `jobs/page/<sha256>.json`, over its length-prefixed parts. */
export function pageMemoKey(page: PageIdentity): string {
  const hash = createHash('sha256');
  for (const part of [String(MEMO_VERSION), page.url, page.contentType ?? '']) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  hash.update(`${page.bytes.length}:`).update(page.bytes);
  return memoKeyFromDigest('page', hash.digest('hex'));
}

async function readPageMemo(blobs: BlobStore, key: string, now: number): Promise<PageMemo | undefined> {
  // A missing or unreadable memo: run the jobs.
  const memo = (await readMemo(blobs, key)) as Partial<PageMemo> | undefined;
  if (memo?.v !== MEMO_VERSION || typeof memo.at !== 'number' || memo.base !== blobs.publicUrl('')) return undefined;
  const age = now - memo.at;
  if (age < 0 || age >= PAGE_MEMO_TTL_MS) return undefined;
  return memo as PageMemo;
}

/**
 * Where the complete versions of first ones go: `assets/<sha256 of the first page.html's key and
 * the content's image addresses>/page.full.html`. The first versions name only the images hosted
 * in time, so the addresses are part of the key: two pages with the same text and other images
 * get complete versions of their own.
 */
export function fullVersionsKey(firstHtmlKey: string, imageUrls: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of [String(MEMO_VERSION), firstHtmlKey, ...imageUrls]) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return assetKey(hash.digest('hex'), 'page.full.html');
}

/** The metadata of a page.html or `page.full.html`: the keys of its page.md and page.txt, and its images' counts. */
export function versionsMetadata(versions: { markdown: string; text: string }, images?: { found: number; hosted: number }): Record<string, string> {
  const { markdown, text, images: counts } = ASSET_METADATA;
  return { [markdown]: versions.markdown, [text]: versions.text, ...(images ? { [counts]: `${images.found}/${images.hosted}` } : {}) };
}

/**
 * The complete versions stored at `first.fullKey`, as a result like `first` (one HEAD), or
 * undefined: not stored (yet), or not readable.
 */
export async function readFullVersions(blobs: BlobStore, first: PageContentResult): Promise<PageContentResult | undefined> {
  const key = first.fullKey;
  if (!key) return undefined;
  const meta = (await blobs.head(key))?.metadata;
  const markdown = meta?.[ASSET_METADATA.markdown];
  const text = meta?.[ASSET_METADATA.text];
  if (!markdown || !isAssetKey(markdown) || !text || !isAssetKey(text)) return undefined;
  const counts = /^(\d+)\/(\d+)$/.exec(meta?.[ASSET_METADATA.images] ?? '');
  const { fullKey: _pending, ...rest } = first;
  return {
    ...rest,
    htmlUrl: blobs.publicUrl(key),
    markdownUrl: blobs.publicUrl(markdown),
    rawTextUrl: blobs.publicUrl(text),
    ...(counts ? { images: { found: Number(counts[1]), hosted: Number(counts[2]) } } : {}),
    complete: true,
  };
}

/** What the preview recalled: the parts, and whether some were found beside the memo (they are to be written into it). */
export interface RecalledPage extends PageMemoParts {
  unmerged?: boolean;
  /** The memo's failure times, kept as they are when the memo is written again. */
  failedAt?: PageMemo['failedAt'];
  /** First versions whose complete ones are not stored yet: kept in the memo, but not used (the job runs again). */
  pending?: PageContentResult;
}

/** A remembered result: its versions, or why the page has none (deterministic for these bytes, like the versions). */
const hasVersions = (c: PageContentResult | undefined): c is PageContentResult => typeof c?.htmlUrl === 'string' || typeof c?.reason === 'string';

/** A result the memo keeps: complete versions (or none, for a reason of the page's own), or first ones whose complete ones will be at `fullKey`. */
const memorable = (c: PageContentResult): boolean => c.complete === true || typeof c.fullKey === 'string';

/**
 * The parts remembered for the page under `key`, or undefined when there is no memo. A memo with
 * first versions: the complete ones, when the job has stored them (a HEAD of their `fullKey`).
 */
export async function recallPage(blobs: BlobStore, key: string, now = Date.now()): Promise<RecalledPage | undefined> {
  const memo = await readPageMemo(blobs, key, now);
  if (!memo) return undefined;
  const parts: RecalledPage = {};
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
  const content = memo.content;
  if (hasVersions(content) && content.complete === true) parts.content = content;
  else if (hasVersions(content) && content.fullKey) {
    // First versions: the complete ones, once the job stored them (else the job runs again).
    const full = await readFullVersions(blobs, content).catch(() => undefined);
    if (full) Object.assign(parts, { content: full, unmerged: true });
    else parts.pending = content;
  }
  return parts;
}

/**
 * Writes the memo with the parts of `got` that `recalled` (what the preview read) lacks, added to
 * those; nothing when there is nothing new (and nothing recalled from beside the memo). Returns
 * whether it wrote. A failed write is only a lost memo. `now` (default: the clock) dates it.
 */
export async function rememberPage(
  blobs: BlobStore,
  key: string,
  got: PageMemoParts,
  options: { recalled?: RecalledPage; now?: number } = {},
): Promise<boolean> {
  const { recalled, now = Date.now() } = options;
  const { unmerged, failed: _failed, pending, ...known } = recalled ?? {};
  const next: Omit<PageMemo, 'v' | 'at' | 'base'> = { ...known };
  if (pending && !next.content) next.content = pending;
  let added = unmerged === true;
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
  // Complete versions replace first ones; first ones are kept only where there are none (the same
  // first ones again are nothing new).
  const content = got.content;
  if (content && memorable(content) && next.content?.complete !== true && (content.complete === true || next.content === undefined)) {
    next.content = content;
    added = true;
  }
  if (!added) return false;
  const memo: PageMemo = { v: MEMO_VERSION, at: now, base: blobs.publicUrl(''), ...next };
  await writeMemo(blobs, key, memo);
  return true;
}
