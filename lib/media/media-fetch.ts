/**
 * Getting the bytes of a media or document link for a decoder, always through the guarded
 * fetcher (the decoders never see a URL):
 *  - bytes the pipeline already holds in full are used as they are;
 *  - otherwise a prefix of at most `maxBytes` is asked for with `Range: bytes=0-(n-1)`. A server
 *    without Range support answers 200 with the whole body, which the fetcher cuts at the same cap;
 *  - the total size comes from Content-Range (`bytes 0-n/TOTAL`) or Content-Length.
 * Decoders read from a temporary file (MP4 needs to seek), removed when the work is done.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isTransientStatus } from '../errors.js';
import { baseFileName, fileNameFromDisposition, header } from '../fetch/headers.js';
import type { JobContext } from '../jobs/context.js';
import type { MediaJobInput } from '../jobs/kinds.js';
import { MediaRejected } from './failures.js';

export interface MediaBytes {
  bytes: Buffer;
  /** True when `bytes` is the whole resource. */
  complete: boolean;
  /** The whole resource's size, when known. */
  totalSize?: number;
  contentType?: string;
  lastModified?: string;
  /** True when the server answered the Range request with 206. */
  ranged: boolean;
}

export async function mediaBytes(input: MediaJobInput, ctx: JobContext, maxBytes: number): Promise<MediaBytes> {
  if (input.bytesBase64 !== undefined) {
    const bytes = Buffer.from(input.bytesBase64, 'base64');
    const complete = input.declaredSize === undefined || input.declaredSize <= bytes.length;
    return {
      bytes: bytes.length > maxBytes ? bytes.subarray(0, maxBytes) : bytes,
      complete: complete && bytes.length <= maxBytes,
      totalSize: input.declaredSize ?? bytes.length,
      contentType: input.contentType,
      lastModified: input.lastModified,
      ranged: false,
    };
  }
  const res = await ctx.fetch(input.url, {
    maxBytes,
    onTooLarge: 'truncate',
    rangePrefixBytes: maxBytes,
    timeoutMs: Math.max(ctx.config.fetchTimeoutMs, 1000),
    signal: ctx.signal,
    headers: { accept: '*/*', 'accept-encoding': 'identity' },
  });
  if (res.status !== 200 && res.status !== 206) throw new MediaRejected(`media answered HTTP ${res.status}`, { transient: isTransientStatus(res.status) });
  if (res.body.length === 0) throw new MediaRejected('empty media');
  const ranged = res.status === 206;
  const total = res.declaredSize ?? input.declaredSize;
  const complete = ranged ? total !== undefined && res.body.length >= total : !res.truncated;
  return {
    bytes: res.body,
    complete,
    totalSize: total ?? (complete ? res.body.length : undefined),
    contentType: header(res.headers, 'content-type') ?? input.contentType,
    lastModified: header(res.headers, 'last-modified') ?? input.lastModified,
    ranged,
  };
}

/** Writes `bytes` to a fresh temporary directory, runs `fn` with the file's path, then removes the directory. */
export async function withTempFile<T>(bytes: Buffer, name: string, fn: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'linklens-media-'));
  try {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    return await fn(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The file name of a link: Content-Disposition's filename, else the last path segment (decoded). */
export function fileNameOf(url: string, contentDisposition?: string): string | undefined {
  const declared = fileNameFromDisposition(contentDisposition);
  if (declared) return declared;
  let last: string | undefined;
  try {
    last = new URL(url).pathname.split('/').filter(Boolean).pop();
  } catch {
    return undefined;
  }
  if (!last) return undefined;
  try {
    return baseFileName(decodeURIComponent(last));
  } catch {
    return baseFileName(last);
  }
}
