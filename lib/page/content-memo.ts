/**
 * The page-content memo: the `page-content` job's result for exactly one input (the page's final
 * URL, its Content-Type and its bytes), as a small JSON object under `jobs/` (private; on AWS
 * expired with the job results after a day). It is content-addressed like the images: the same
 * bytes give the same versions, so a record that takes them from here is as fresh as one that
 * runs the job; a page whose bytes changed in any way (a timestamp, a nonce) misses it.
 *
 * The job writes it (in this process, or in the worker on AWS) only when its versions are
 * complete: every content image it started was hosted, none was cut by the images' wait or the
 * deadline. The preview reads it before submitting the job, so a page seen before costs neither
 * the DOM work nor, on AWS, a worker invocation.
 *
 * The versions' addresses are stored as keys and made public on reading (the public URL is the
 * reader's configuration). No DOM code here: the preview side imports this module.
 */
import { createHash } from 'node:crypto';
import type { PageContentResult } from '../jobs/kinds.js';
import { readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';

/** Bumped when the job's output for the same input changes (the sanitizer, the versions' format). */
const MEMO_VERSION = 1;

interface PageContentMemo {
  v: number;
  result: Omit<PageContentResult, 'htmlUrl' | 'markdownUrl' | 'rawTextUrl'>;
  keys: { html: string; markdown: string; text: string };
}

/** The memo's key for a page-content input (its bytes as the job gets them, in base64). */
export function pageContentMemoKey(input: { url: string; contentType?: string; bytesBase64: string }): string {
  const hash = createHash('sha256');
  for (const part of [String(MEMO_VERSION), input.url, input.contentType ?? '', input.bytesBase64]) hash.update(`${part.length}:`).update(part);
  return `jobs/page-content/${hash.digest('hex')}.json`;
}

/** Remembers a complete result whose versions are stored under `keys`; a failed write is only a lost memo. */
export async function rememberPageContent(blobs: BlobStore, memoKey: string, result: PageContentResult, keys: PageContentMemo['keys']): Promise<void> {
  const { htmlUrl: _h, markdownUrl: _m, rawTextUrl: _t, ...rest } = result;
  const memo: PageContentMemo = { v: MEMO_VERSION, result: rest, keys };
  await writeMemo(blobs, memoKey, memo);
}

/** The result remembered under `memoKey`, its versions' public URLs by this store; undefined when there is none (or it cannot be read). */
export async function recallPageContent(blobs: BlobStore, memoKey: string): Promise<PageContentResult | undefined> {
  // A missing or unreadable memo: run the job.
  const memo = (await readMemo(blobs, memoKey)) as Partial<PageContentMemo> | undefined;
  const keys = memo?.keys;
  if (memo?.v !== MEMO_VERSION || !memo.result || typeof keys?.html !== 'string' || typeof keys.markdown !== 'string' || typeof keys.text !== 'string') {
    return undefined;
  }
  return { ...memo.result, htmlUrl: blobs.publicUrl(keys.html), markdownUrl: blobs.publicUrl(keys.markdown), rawTextUrl: blobs.publicUrl(keys.text) };
}
