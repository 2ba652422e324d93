/**
 * The document job: a PDF link becomes the spec's `document` object, with pdf-parse 2 (pdf.js).
 *  - bytes: the whole file up to LINKPREVIEW_MAX_MEDIA_BYTES (a PDF's index is at its end);
 *  - before pdf.js sees it: the `%PDF-` header is required, `/Encrypt` marks `isEncrypted`, and
 *    every Flate stream is inflated under a shared byte budget (4 x the media cap), so a decompression bomb is
 *    refused instead of being expanded in memory;
 *  - pdf.js (eval off, no network): Info title/author/dates, page count, text of at most
 *    LINKPREVIEW_PDF_MAX_PAGES pages, and the first LINKPREVIEW_PDF_RENDER_PAGES pages rendered;
 *  - the text is stored as an asset (`rawTextUrl`), its language detected with cld3;
 *  - every pdf.js step has the decode time cap.
 * An encrypted, truncated or corrupt PDF still gives a record with what is known (page count by
 * counting page objects, the encryption flag, the file name as title).
 */
import { pdfFacts } from './pdf-facts.js';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { PDFParse } from 'pdf-parse';
import type { DocumentInfo, ImageSet } from '../contract/link.js';
import { detectLanguage } from '../language/detect.js';
import type { JobContext } from '../jobs/registry.js';
import { hostImageBytes } from './hosted-bytes.js';
import { MediaRejected, mediaBytes, type MediaJobInput } from './media-fetch.js';
import { countText, firstHeadingLine, leadSentences, readingMinutes, scaleCounts, storeRawText } from './text.js';
import { isMediaFailure } from './video.js';

export type DocumentJobResult =
  | { document: DocumentInfo; reason?: undefined }
  | { document?: undefined; reason: string };

/** Pages are rendered this wide (pixels); the hosted sizes are made from that. */
export const PDF_RENDER_WIDTH = 1024;
/** All Flate streams of a PDF may inflate to this many times LINKPREVIEW_MAX_MEDIA_BYTES before it is treated as a bomb. */
export const PDF_INFLATE_FACTOR = 4;
/** Text kept for the raw-text asset and for analysis. */
const MAX_TEXT_CHARS = 2_000_000;

export async function runDocumentJob(input: MediaJobInput, ctx: JobContext): Promise<DocumentJobResult> {
  try {
    const media = await mediaBytes(input, ctx, ctx.config.maxMediaBytes);
    return await describePdf(media.bytes, input.name, ctx, { complete: media.complete });
  } catch (err) {
    if (isMediaFailure(err)) return { reason: (err as Error).message };
    throw err;
  }
}

export class PdfTimeout extends Error {}

let workerLoaded: Promise<void> | undefined;

/**
 * pdf.js runs its worker in this thread ("fake worker") and loads the worker module with a
 * dynamic import of a path next to pdf-parse's bundle, which some hosts cannot do (Jest's CommonJS
 * runtime, single-file bundles). Loading that module here once sets `globalThis.pdfjsWorker`,
 * which pdf.js then uses directly. Where this fails, pdf.js still tries its own way.
 */
function ensurePdfWorker(): Promise<void> {
  workerLoaded ??= (async () => {
    if ((globalThis as { pdfjsWorker?: unknown }).pdfjsWorker) return;
    try {
      const worker = path.join(path.dirname(require.resolve('pdf-parse')), 'pdf.worker.mjs');
      await import(worker);
    } catch {
      /* pdf.js falls back to its own import */
    }
  })();
  return workerLoaded;
}

/** Above this many pages (declared or counted) pdf.js is not run at all. */
export const PDF_OPEN_MAX_PAGES = 5000;

export async function describePdf(bytes: Buffer, name: string | undefined, ctx: JobContext, options: { complete: boolean }): Promise<DocumentJobResult & { document: DocumentInfo }> {
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (!head.includes('%PDF-')) throw new MediaRejected('not a PDF');
  const cfg = ctx.config;
  const fallbackTitle = name ?? 'Untitled document';
  const known: DocumentInfo = { title: fallbackTitle, ...pdfFacts(bytes), type: 'pdf' };

  if (!options.complete) return { document: known };
  // pdf.js walks the whole page tree on the main thread: a document claiming more pages than this
  // is described from its bytes only (a 100k-page PDF otherwise held the event loop for seconds).
  if (known.pageCount > PDF_OPEN_MAX_PAGES) return { document: known };
  if (!withinInflateBudget(bytes, PDF_INFLATE_FACTOR * cfg.maxMediaBytes)) return { document: known };

  await ensurePdfWorker();
  const parser = new PDFParse({
    data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    stopAtErrors: false,
    maxImageSize: 16 * 1024 * 1024,
  });
  const capped = <T>(p: Promise<T>): Promise<T> => withTimeout(p, cfg.mediaDecodeTimeoutMs, ctx.signal);
  try {
    let info: Awaited<ReturnType<typeof parser.getInfo>>;
    try {
      info = await capped(parser.getInfo());
    } catch (err) {
      // PasswordException, InvalidPDFException, a timeout ...: what we know is the record.
      if (err instanceof TypeError || err instanceof ReferenceError) throw err;
      return { document: known };
    }
    const pageCount = info.total || known.pageCount;
    const doc: DocumentInfo = { ...known, pageCount };
    const meta = (info.info ?? {}) as Record<string, unknown>;
    const author = cleanMeta(meta.Author);
    if (author) doc.author = author;
    const dates = info.getDateNode();
    const modified = dates.ModDate ?? dates.XmpModifyDate ?? dates.XapModifyDate ?? dates.CreationDate ?? null;
    if (modified && !Number.isNaN(modified.getTime())) doc.lastModified = modified.toISOString();

    const readPages = Math.min(pageCount, cfg.pdfMaxPages);
    let text = '';
    try {
      const t = await capped(parser.getText({ first: readPages, pageJoiner: '' }));
      text = t.text.replace(/\u0000/g, '').slice(0, MAX_TEXT_CHARS);
    } catch (err) {
      if (err instanceof TypeError || err instanceof ReferenceError) throw err;
    }
    const infoTitle = cleanMeta(meta.Title);
    const heading = firstHeadingLine(text);
    doc.title = (infoTitle && !/^untitled$/i.test(infoTitle) ? infoTitle : undefined) ?? heading ?? fallbackTitle;

    if (text.trim()) {
      const counts = countText(text);
      // Pages beyond the cap are counted at the average of the pages read.
      doc.estimatedReadingTime = readingMinutes(readPages < pageCount ? scaleCounts(counts, pageCount / readPages) : counts);
      const description = leadSentences(text, heading);
      if (description) doc.description = description;
      const language = (await detectLanguage(text.slice(0, 5000)))?.language;
      if (language) doc.language = language;
      doc.rawTextUrl = await storeRawText(text, ctx.blobs);
    }

    const renderPages = Math.min(pageCount, cfg.pdfRenderPages);
    if (renderPages > 0) {
      let shots: { pageNumber: number; data: Uint8Array }[] = [];
      try {
        const r = await capped(parser.getScreenshot({ first: renderPages, desiredWidth: PDF_RENDER_WIDTH, imageBuffer: true, imageDataUrl: false }));
        shots = r.pages;
      } catch (err) {
        if (err instanceof TypeError || err instanceof ReferenceError) throw err;
      }
      const images = await Promise.all(shots.map((s) => (s.data?.length ? hostImageBytes(Buffer.from(s.data), ctx) : undefined)));
      doc.pages = shots.map((s, i) => (images[i] ? { pageNumber: s.pageNumber, screenshot: images[i] as ImageSet } : { pageNumber: s.pageNumber }));
      const first = doc.pages.find((p) => p.pageNumber === 1)?.screenshot;
      if (first) doc.image = first;
    }
    return { document: doc };
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

function cleanMeta(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.replace(/[\u0000-\u001f]/g, ' ').replace(/\s+/g, ' ').trim();
  return t ? t.slice(0, 300) : undefined;
}

/**
 * Inflates every `stream ... endstream` that is Flate data, sharing one output budget. False when
 * the budget is exceeded (a decompression bomb). Streams that are not Flate are skipped.
 */
export function withinInflateBudget(bytes: Buffer, budget: number): boolean {
  let remaining = budget;
  let at = 0;
  for (;;) {
    const start = bytes.indexOf('stream', at, 'latin1');
    if (start < 0) return true;
    let dataStart = start + 6;
    if (bytes[dataStart] === 0x0d) dataStart++;
    if (bytes[dataStart] === 0x0a) dataStart++;
    const end = bytes.indexOf('endstream', dataStart, 'latin1');
    if (end < 0) return true;
    // "endstream" itself contains "stream": only a real keyword preceded by the dictionary's '>>' counts.
    const before = bytes.subarray(Math.max(0, start - 2048), start).toString('latin1');
    if (/>>\s*$/.test(before) && /\/FlateDecode/.test(before.slice(Math.max(0, before.lastIndexOf('obj'))))) {
      try {
        const out = inflateSync(bytes.subarray(dataStart, end), { maxOutputLength: remaining + 1, finishFlush: 2 /* Z_SYNC_FLUSH */ });
        remaining -= out.length;
        if (remaining < 0) return false;
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return false;
        // Not inflatable (encrypted, damaged): pdf.js will decide.
      }
    }
    at = end + 9;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new PdfTimeout(`PDF step timed out after ${ms} ms`)), ms);
    const onAbort = () => reject(new PdfTimeout('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}
