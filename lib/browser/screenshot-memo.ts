/**
 * The screenshot memo: the last screenshot hosted for a URL, as a small JSON object under `jobs/`
 * (private; on AWS expired with the job results after a day). The screenshot job writes it (in
 * this process, or in the browser worker on AWS) and the preview reads it, so they meet in the
 * BlobStore. A preview of the URL within LINKPREVIEW_SCREENSHOT_MEMO_TTL_MS of the capture takes
 * it instead of rendering the page again; an older one is never used. A TTL of 0 turns it off:
 * nothing is written or read.
 *
 * No browser code here: the preview side imports this module.
 */
import type { ImageSet } from '../contract/link.js';
import { memoKey, readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';

interface ScreenshotMemo {
  /** When the page was captured (epoch ms). */
  at: number;
  url: string;
  screenshot: ImageSet;
}

const screenshotKey = (url: string) => memoKey('screenshot-url', url);

/** Remembers `screenshot`, captured at `at`, as the screenshot of `url` (none when `ttlMs` is 0); a failed write is only a lost memo. */
export async function rememberScreenshot(blobs: BlobStore, shot: { url: string; screenshot: ImageSet; at: number }, ttlMs: number): Promise<void> {
  if (ttlMs <= 0) return;
  const { at, url, screenshot } = shot;
  const memo: ScreenshotMemo = { at, url, screenshot };
  await writeMemo(blobs, screenshotKey(url), memo);
}

/** The screenshot remembered for `url`, if it was captured less than `ttlMs` ago. */
export async function recallScreenshot(blobs: BlobStore, url: string, ttlMs: number, now = Date.now()): Promise<ImageSet | undefined> {
  if (ttlMs <= 0) return undefined;
  // A missing or unreadable memo: render as usual.
  const memo = (await readMemo(blobs, screenshotKey(url))) as Partial<ScreenshotMemo> | undefined;
  if (!memo || memo.url !== url || typeof memo.at !== 'number' || typeof memo.screenshot?.original?.url !== 'string') return undefined;
  const age = now - memo.at;
  return age >= 0 && age < ttlMs ? memo.screenshot : undefined;
}
