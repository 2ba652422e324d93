/**
 * Plain text facts shared by TEXT links and PDF documents: words, reading time, a title line,
 * a description of the first meaningful sentences, and storing the raw text as an asset.
 */
import type { BlobStore } from '../ports.js';
import { IMMUTABLE_CACHE } from '../ports.js';
import { assetKeyOf } from '../storage-keys.js';

// Reading time has one implementation, shared with PAGE links (lib/page/reading-time.ts).
export { countText, countWords, readingMinutes, scaleCounts, WORDS_PER_MINUTE } from '../page/reading-time.js';

/** The first line that reads like a heading (letters, not too long); markdown `#` and bullets stripped. */
export function firstHeadingLine(text: string): string | undefined {
  for (const raw of text.split(/\r?\n/).slice(0, 40)) {
    const line = raw
      .replace(/^\s*(#{1,6}\s+|[-*>]\s+)/, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (!line) continue;
    if ((line.match(/\p{L}/gu)?.length ?? 0) < 3) continue;
    if (/^[[{"]/.test(line)) return undefined; // JSON, CSV of quoted fields: no heading
    return line.length > 150 ? `${line.slice(0, 147).trimEnd()}…` : line;
  }
  return undefined;
}

/**
 * The first meaningful sentences (at least 4 words each, mostly letters), skipping the title
 * line, up to about `maxChars`.
 */
export function leadSentences(text: string, skip?: string, maxChars = 300): string | undefined {
  let body = text.replace(/\s+/g, ' ').trim();
  if (skip && body.startsWith(skip)) body = body.slice(skip.length).trim();
  const sentences = body.match(/[^.!?。！？]+[.!?。！？]+["'”’)]?|[^.!?。！？]+$/gu) ?? [];
  const out: string[] = [];
  let length = 0;
  for (const s of sentences) {
    const t = s.trim();
    const words = t.split(' ').length;
    const letters = t.match(/\p{L}/gu)?.length ?? 0;
    if ((words < 4 && !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(t)) || letters < t.length * 0.5) {
      if (out.length) break;
      continue;
    }
    out.push(t);
    length += t.length + 1;
    if (length >= 160) break;
  }
  if (!out.length) return undefined;
  const joined = out.join(' ');
  return joined.length > maxChars ? `${joined.slice(0, maxChars - 1).trimEnd()}…` : joined;
}

/** Stores text as a UTF-8 asset under a content-addressed key; returns its public URL. */
export async function storeRawText(text: string, blobs: BlobStore): Promise<string> {
  const bytes = Buffer.from(text, 'utf8');
  const key = assetKeyOf(bytes, 'text.txt');
  if (!(await blobs.has(key))) await blobs.put(key, bytes, { contentType: 'text/plain; charset=utf-8', cacheControl: IMMUTABLE_CACHE });
  return blobs.publicUrl(key);
}
