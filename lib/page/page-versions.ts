/**
 * The page versions' addresses, how they are stored, and the rule every address a record names
 * keeps: it answers 200 with the whole version whenever it is asked, from the moment the record
 * goes out.
 *
 * The addresses are fixed by what the preview knows at once, the page's digest (its final URL,
 * Content-Type and bytes: lib/page/page-memo.ts `pageDigest`, the page memo's own):
 * `assets/<digest>/page.html|page.md|page.txt`. So the record names them before they exist. The
 * `page-content` job reads the content first (its result: the reading time and excerpt, which the
 * record carries when they came before the rest of the card was ready, and which the job
 * remembers for the next preview: lib/page/page-memo.ts), then builds the versions after its
 * result (JobContext.defer): it hosts the content's images, writes the HTML and Markdown with
 * them, and stores the three, page.html last (`storeVersions`). The record never waits for the
 * read: when the card is ready first, it names the addresses all the same (the preview knows the
 * digest), and a page whose content turns out to have nothing to read gets stand-ins there.
 *
 *  - Stored: each address is the object itself (the local server's /assets/; S3 behind CloudFront).
 *  - Not stored yet: the page memo, written before the record goes out, says a record named them
 *    and until when their job runs (`versionsUntil`); whoever serves an address and finds nothing
 *    holds the request and looks again until it is there (`awaitVersion`): the local server
 *    (functions/local-assets.ts), and on AWS the CDN's second origin, a function reached when S3
 *    answers 403/404 (functions/version-origin.ts). An address no record named is a 404 at once.
 *    The local server parks a build with images until it is idle (lib/jobs/idle-work.ts): asked
 *    for one of its addresses, it starts that build at once and holds the request until it is done.
 *  - Never built: when the job's build fails, or the versions are still missing VERSION_GRACE_MS
 *    past its deadline, what could be made is stored in their place (`storeStandIns`): an empty
 *    document for each version not stored (a build cut before page.html keeps the page.md and
 *    page.txt it stored), marked `versions: stand-in` and served `no-cache`, and the page memo
 *    forgets the versions, so the next preview of the same bytes builds them again over the
 *    stand-ins. Never a 404, never part of a version.
 *
 * No DOM here: the preview, the jobs, the local server and the origin function import it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ASSET_METADATA } from '../asset-metadata.js';
import { type BlobStore, IMMUTABLE_CACHE } from '../ports.js';
import { ASSETS_PREFIX, assetKey } from '../storage-keys.js';
import { forgetVersions, type PageIdentity, pageDigest, versionsNamed } from './page-memo.js';

export const PAGE_ASSET_TYPES = {
  html: 'text/html; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
} as const;

export type VersionName = keyof typeof PAGE_ASSET_TYPES;

const FILE_NAMES: Record<VersionName, string> = { html: 'page.html', markdown: 'page.md', text: 'page.txt' };

export type VersionKeys = Record<VersionName, string>;

/** How long past its job's deadline a version may still be missing before its stand-in is stored (the job's own stand-ins and last puts land in it). */
export const VERSION_GRACE_MS = 2000;

/** A stand-in is served this way: not kept, so the versions built over it later are what a reader gets. */
export const STAND_IN_CACHE = 'no-cache';

/** How a held request looks again for its version: first after this long, then each time 1.5 times longer, at most `maxMs`. */
const POLL = { firstMs: 20, maxMs: 200 };

/** The three versions' keys of the page with this digest. */
export function versionKeysOf(digest: string): VersionKeys {
  return { html: assetKey(digest, FILE_NAMES.html), markdown: assetKey(digest, FILE_NAMES.markdown), text: assetKey(digest, FILE_NAMES.text) };
}

/** The three versions' public addresses of the page with this digest, as a record's `page` names them. */
export function versionAddresses(blobs: Pick<BlobStore, 'publicUrl'>, digest: string): { htmlUrl: string; markdownUrl: string; rawTextUrl: string } {
  const keys = versionKeysOf(digest);
  return { htmlUrl: blobs.publicUrl(keys.html), markdownUrl: blobs.publicUrl(keys.markdown), rawTextUrl: blobs.publicUrl(keys.text) };
}

/** The three versions' keys of a page. */
export function pageVersionKeys(page: PageIdentity): VersionKeys {
  return versionKeysOf(pageDigest(page));
}

/** The page digest of a version's key (`assets/<64 hex>/page.html|page.md|page.txt`), or undefined for any other key. */
export function versionDigest(key: string): string | undefined {
  const m = new RegExp(`^${ASSETS_PREFIX}([0-9a-f]{64})/page\\.(html|md|txt)$`).exec(key);
  return m?.[1];
}

/** The versions as written (UTF-8), and their content images' counts for page.html's metadata. */
export interface WrittenVersions {
  html: string;
  markdown: string;
  text: string;
  images?: { found: number; hosted: number };
}

/**
 * Stores the three versions at their keys, UTF-8 with their charset in the Content-Type, cached
 * for a year: page.md and page.txt, then page.html, which carries the images' counts. A build
 * stored before (page.html there, not a stand-in) is left as it is: `builtVersions`.
 */
export async function storeVersions(blobs: BlobStore, keys: VersionKeys, versions: WrittenVersions): Promise<void> {
  const put = (name: VersionName, body: string, metadata?: Record<string, string>) =>
    blobs.put(keys[name], Buffer.from(body, 'utf8'), { contentType: PAGE_ASSET_TYPES[name], cacheControl: IMMUTABLE_CACHE, ...(metadata ? { metadata } : {}) });
  // Both settled before a failure is thrown: what was stored stays, the stand-ins fill in the rest.
  const siblings = await Promise.allSettled([put('markdown', versions.markdown), put('text', versions.text)]);
  for (const s of siblings) if (s.status === 'rejected') throw s.reason;
  const { images } = versions;
  await put('html', versions.html, images ? { [ASSET_METADATA.images]: `${images.found}/${images.hosted}` } : undefined);
}

/**
 * Whether the versions at `keys` were built and stored (page.html there, stored last, and not a
 * stand-in; one HEAD), with their images' counts; undefined when they are still to be built.
 */
export async function builtVersions(blobs: BlobStore, keys: VersionKeys): Promise<{ images?: { found: number; hosted: number } } | undefined> {
  const meta = (await blobs.head(keys.html))?.metadata;
  if (!meta || meta[ASSET_METADATA.versions] === 'stand-in') return undefined;
  const counts = /^(\d+)\/(\d+)$/.exec(meta[ASSET_METADATA.images] ?? '');
  return counts ? { images: { found: Number(counts[1]), hosted: Number(counts[2]) } } : {};
}

const STAND_IN: Record<VersionName, string> = {
  html: '<!doctype html>\n<html>\n<head>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<title></title>\n</head>\n<body>\n</body>\n</html>\n',
  markdown: '',
  text: '',
};

/**
 * What could be made of versions that could not be built: for each of the page's versions not
 * stored, an empty document (`versions: stand-in`, served `no-cache`), page.html last; then the
 * page memos forget them, so the next preview of the same bytes builds them again. A page that has
 * no versions to make (its content cannot be read: the `page-content` job's `reason`) keeps its
 * memos (`forget: false`): the same bytes never give any.
 */
export async function storeStandIns(blobs: BlobStore, digest: string, options: { forget?: boolean } = {}): Promise<void> {
  const keys = versionKeysOf(digest);
  const put = async (name: VersionName) => {
    if (await blobs.has(keys[name])) return;
    await blobs.put(keys[name], Buffer.from(STAND_IN[name], 'utf8'), {
      contentType: PAGE_ASSET_TYPES[name],
      cacheControl: STAND_IN_CACHE,
      metadata: { [ASSET_METADATA.versions]: 'stand-in' },
    });
  };
  await Promise.all([put('markdown'), put('text')]);
  await put('html');
  if (options.forget !== false) await forgetVersions(blobs, digest);
}

export interface AwaitVersionOptions {
  now?: () => number;
  /** The longest the caller may hold the request (ms; the origin function's own time): past it, the stand-in. Default: no cap beyond the job's deadline. */
  capMs?: number;
  /**
   * The build of the page with this digest, when this process holds it (parked or running: the
   * local server's lib/jobs/idle-work.ts `want`, which starts a parked one): waited for before the
   * memo's deadline is consulted. Absent, or undefined for the digest: none here.
   */
  pending?: (digest: string) => Promise<void> | undefined;
}

/**
 * The version at `key` once it is stored: `stored` when it is there (at once, once its job stored
 * it, or as a stand-in: past its job's deadline and VERSION_GRACE_MS, or past `capMs`), or
 * `unknown` when no record named it (not a version's key, or no memo names its versions): a 404.
 */
export async function awaitVersion(blobs: BlobStore, key: string, options: AwaitVersionOptions = {}): Promise<'stored' | 'unknown'> {
  const digest = versionDigest(key);
  if (!digest) return 'unknown';
  if (await blobs.has(key)) return 'stored';
  const building = options.pending?.(digest);
  if (building) {
    await building;
    if (await blobs.has(key)) return 'stored';
  }
  const named = await versionsNamed(blobs, digest);
  // Stored meanwhile, and the memo forgot it (a stand-in): there after all.
  if (!named) return (await blobs.has(key)) ? 'stored' : 'unknown';
  const now = options.now ?? Date.now;
  const end = Math.min(named.until + VERSION_GRACE_MS, now() + (options.capMs ?? Number.POSITIVE_INFINITY));
  let delay = POLL.firstMs;
  while (now() < end) {
    await sleep(Math.min(delay, Math.max(1, end - now())));
    if (await blobs.has(key)) return 'stored';
    delay = Math.min(delay * 1.5, POLL.maxMs);
  }
  await storeStandIns(blobs, digest);
  return 'stored';
}

/**
 * Once each version a record's `page` names on this store is stored (`awaitVersion`): for a caller
 * that ends its process as soon as it has the record, before the in-process build (the CLI).
 */
export async function recordVersionsStored(blobs: BlobStore, page: { htmlUrl?: string; markdownUrl?: string; rawTextUrl?: string } | undefined): Promise<void> {
  const base = blobs.publicUrl('');
  const urls = [page?.htmlUrl, page?.markdownUrl, page?.rawTextUrl].filter((u): u is string => typeof u === 'string' && u.startsWith(base));
  await Promise.all(urls.map((u) => awaitVersion(blobs, u.slice(base.length).split('/').map(decodeURIComponent).join('/'))));
}
