/**
 * The local server's /assets/: stored assets (rendered images, page versions) read back from the
 * local blob store, with an ETag, their own caching (long-lived; a page version's stand-in
 * `no-cache`) and a locked-down CSP. A page version a record named that is not stored yet is
 * held until it is (lib/page/page-versions.ts `awaitVersion`: at the latest its job's deadline,
 * then its stand-in), so an address in a record never answers 404. The answer is built here;
 * functions/local-http.ts writes it.
 */
import { createHash } from 'node:crypto';
import type { FsBlobStore } from '../lib/adapters/local/fs-blob-store.js';
import { ASSET_CONTENT_SECURITY_POLICY } from '../lib/asset-metadata.js';
import { awaitVersion } from '../lib/page/page-versions.js';

export interface AssetAnswer {
  status: 200 | 304;
  headers: Record<string, string>;
  /** Absent on a 304 and on HEAD. */
  body?: Buffer;
}

/** Where the assets are read from, and the builds of page versions this process holds (AwaitVersionOptions.pending). */
export interface AssetSource {
  store: FsBlobStore;
  pending?: (digest: string) => Promise<void> | undefined;
}

/** The answer for a GET or HEAD of an /assets/ path, or undefined when it names no asset (404). */
export async function assetAnswer(
  source: AssetSource | undefined,
  method: string,
  path: string,
  ifNoneMatch: string | undefined,
): Promise<AssetAnswer | undefined> {
  const key = assetKey(path);
  if (!source || !key) return undefined;
  const assets = source.store;
  // A key that is not a regular file (a directory, nothing), or that went between has() and get(), is
  // 404, unless it is a page version on its way (a build parked here starts now).
  const stored = (await assets.has(key).catch(() => false)) || (await awaitVersion(assets, key, { pending: source.pending })) === 'stored';
  const bytes = stored ? await assets.get(key).catch(() => undefined) : undefined;
  if (bytes === undefined) return undefined;
  const meta = await assets.meta(key);
  const etag = `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
  const headers = {
    'content-type': meta.contentType ?? 'application/octet-stream',
    'cache-control': meta.cacheControl ?? 'public, max-age=31536000, immutable',
    etag,
    'x-content-type-options': 'nosniff',
    'content-security-policy': ASSET_CONTENT_SECURITY_POLICY,
  };
  if (ifNoneMatch === etag) return { status: 304, headers };
  return { status: 200, headers: { ...headers, 'content-length': String(bytes.length) }, ...(method === 'HEAD' ? {} : { body: bytes }) };
}

/**
 * The blob key an /assets/ path names, or undefined when it names none that may be served. The
 * path is normalised first: each segment percent-decoded once, and a segment that is empty
 * (`//`, a trailing `/`), `.` or `..`, or that holds `/`, `\`, `:` or a control character once
 * decoded, or ends in `.` or a space (names Windows would trim), names nothing. Only then are
 * the store's own files refused: `<key>.meta.json` (any case) and the `.tmp` files of a put.
 */
function assetKey(path: string): string | undefined {
  const segments = path.replace(/^\//, '').split('/');
  if (segments[0] !== 'assets' || segments.length < 2) return undefined;
  const decoded: string[] = [];
  for (const raw of segments) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..' || /[/\\:\x00-\x1f\x7f]/.test(segment) || /[. ]$/.test(segment)) return undefined;
    decoded.push(segment);
  }
  const key = decoded.join('/');
  if (/\.meta\.json$/i.test(key) || /\.tmp$/i.test(key)) return undefined;
  return key;
}
