/**
 * MP4/MOV files written without "faststart" keep their index (the `moov` box) after the media
 * data, so a prefix of a large file cannot be probed. When the server takes Range requests, the
 * index is read from the end of the file and written at its real offset into a sparse temporary
 * file, next to the prefix: ffprobe then sees the whole structure, and frames decode from the
 * prefix. All reads go through the guarded fetcher, under the same byte cap as the prefix.
 */
import { open } from 'node:fs/promises';
import { header } from '../fetch/headers.js';
import type { JobContext } from '../jobs/context.js';

/** Files claiming more than this are not laid out on disk (a sparse file, but a bound all the same). */
const MAX_SPARSE_FILE_BYTES = 64 * 1024 ** 3;

/**
 * Where the index lies beyond `prefix`, for an ISO-BMFF file (`ftyp` first) of `total` bytes: the
 * offset of the first top-level box that does not fit in the prefix, when no complete `moov` came
 * before it. Undefined when the prefix holds the index, or the layout is not one we can follow.
 */
export function indexOffsetBeyond(prefix: Buffer, total: number): number | undefined {
  if (prefix.length < 16 || prefix.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  let at = 0;
  for (let boxes = 0; boxes < 1000; boxes++) {
    if (at + 8 > prefix.length) return at < total ? at : undefined;
    let size = prefix.readUInt32BE(at);
    const type = prefix.toString('latin1', at + 4, at + 8);
    if (size === 1) {
      if (at + 16 > prefix.length) return at < total ? at : undefined;
      const large = prefix.readBigUInt64BE(at + 8);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
      size = Number(large);
    } else if (size === 0) {
      return undefined; // the box runs to the end of the file: nothing after it
    }
    if (size < 8 || !/^[\x20-\x7e]{4}$/.test(type)) return undefined;
    if (type === 'moov') return at + size <= prefix.length ? undefined : at;
    at += size;
    if (at >= total) return undefined;
  }
  return undefined;
}

/**
 * Reads the end of the file at `url` from `offset` (at most `maxBytes`) and writes it into `file`
 * at that offset, extending the file to `total` bytes. False when the server did not answer with
 * exactly that range (no Range support, a changed file) or the tail is larger than the cap.
 */
export async function fillIndexTail(file: string, tail: { url: string; offset: number; total: number; maxBytes: number }, ctx: JobContext): Promise<boolean> {
  const { url, offset, total, maxBytes } = tail;
  const length = total - offset;
  if (length <= 0 || length > maxBytes || total > MAX_SPARSE_FILE_BYTES) return false;
  const res = await ctx.fetch(url, {
    maxBytes: length,
    onTooLarge: 'fail',
    rangeStart: offset,
    rangePrefixBytes: length,
    timeoutMs: Math.max(ctx.config.fetchTimeoutMs, 1000),
    signal: ctx.signal,
    headers: { accept: '*/*', 'accept-encoding': 'identity' },
  });
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header(res.headers, 'content-range')?.trim() ?? '');
  if (res.status !== 206 || !m || Number(m[1]) !== offset || Number(m[3]) !== total || res.body.length !== length) return false;
  const fh = await open(file, 'r+');
  try {
    await fh.write(res.body, 0, res.body.length, offset);
    await fh.truncate(total);
  } finally {
    await fh.close();
  }
  return true;
}
