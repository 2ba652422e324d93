/**
 * The document job: a PDF link becomes the spec's `document` object, with pdf-parse 2 (pdf.js).
 *  - bytes: the whole file up to LINKPREVIEW_MAX_MEDIA_BYTES (a PDF's index is at its end);
 *  - before pdf.js sees it: the `%PDF-` header is required, `/Encrypt` marks `isEncrypted`, and
 *    every Flate stream is inflated under a shared byte budget (4 x the media cap), so a decompression bomb is
 *    refused instead of being expanded in memory;
 *  - pdf.js (eval off, no network): Info title/author/dates, page count, text of at most
 *    LINKPREVIEW_PDF_MAX_PAGES pages, and the first LINKPREVIEW_PDF_RENDER_PAGES pages rendered;
 *  - the text is stored as an asset (`rawTextUrl`), its language detected with cld3;
 *  - pdf.js runs in a worker thread (pdf-worker.cjs) with its own heap cap, terminated at the
 *    decode time cap or when its heap and ArrayBuffers pass PDF_WORKER_MEMORY_MB: the steps done
 *    by then are kept. Page renders are at most PDF_RENDER_MAX_PIXELS (a tall page is rendered
 *    narrower). The thread runs under a memory hold of PDF_WORKER_HOLD_MB (lib/jobs/memory.ts).
 * An encrypted, truncated or corrupt PDF still gives a record with what is known (page count by
 * counting page objects, the encryption flag, the file name as title).
 */

import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { inflateSync } from 'node:zlib';
import type { DocumentInfo, ImageSet } from '../contract/link.js';
import { ExpectedFailure } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import type { DocumentJobResult, MediaJobInput } from '../jobs/kinds.js';
import { PDF_RENDER_MAX_PIXELS, PDF_WORKER_HEAP_MB, PDF_WORKER_HOLD_MB, PDF_WORKER_MEMORY_MB } from '../jobs/memory.js';
import { acceptedLanguage, detectLanguage } from '../language/detect.js';
import { MediaRejected } from './failures.js';
import { hostImageBytes } from './hosted-bytes.js';
import { mediaBytes } from './media-fetch.js';
import { pdfFacts } from './pdf-facts.js';
import { countText, firstHeadingLine, leadSentences, readingMinutes, scaleCounts, storeRawText } from './text.js';

/** Pages are rendered this wide (pixels); the hosted sizes are made from that. */
export const PDF_RENDER_WIDTH = 1024;
/** All Flate streams of a PDF may inflate to this many times LINKPREVIEW_MAX_MEDIA_BYTES before it is treated as a bomb. */
const PDF_INFLATE_FACTOR = 4;
/** Text kept for the raw-text asset and for analysis. */
const MAX_TEXT_CHARS = 2_000_000;

export async function runDocumentJob(input: MediaJobInput, ctx: JobContext): Promise<DocumentJobResult> {
  try {
    const media = await mediaBytes(input, ctx, ctx.config.maxMediaBytes);
    return await describePdf(media.bytes, input.name, ctx, { complete: media.complete });
  } catch (err) {
    if (err instanceof ExpectedFailure) return { reason: err.message };
    throw err;
  }
}

/** What the pdf.js worker (pdf-worker.cjs) reports, step by step; missing steps did not finish. */
interface PdfWorkerReport {
  info?: { total: number; info: Record<string, unknown>; dates: Record<string, number | null> };
  text?: string;
  shots?: { pageNumber: number; data: Uint8Array }[];
}

/** The worker script: beside this module in the source tree, beside the bundle on Lambda (WORKER_BUNDLE in cdk/constructs/bundling.ts). */
const PDF_WORKER_SCRIPT = path.join(__dirname, 'pdf-worker.cjs');

/** How often the thread's heap and ArrayBuffers are read against PDF_WORKER_MEMORY_MB. */
const MEMORY_CHECK_MS = 50;

export interface PdfWorkerOptions {
  readPages: number;
  renderPages: number;
  renderWidth: number;
  maxTextChars: number;
  /** Pixels of one page render at most (default PDF_RENDER_MAX_PIXELS). */
  maxRenderPixels?: number;
}

/**
 * Runs pdf.js in a worker thread and terminates it at `timeoutMs` (or when `signal` aborts): the
 * steps that finished by then are kept. pdf.js cannot be interrupted inside a step: a time cap on
 * the main thread would fire only between steps, and the CPU would stay busy after it.
 */
export function runPdfWorker(bytes: Buffer, opts: PdfWorkerOptions, timeoutMs: number, signal?: AbortSignal): Promise<PdfWorkerReport> {
  const data = new Uint8Array(bytes.byteLength);
  data.set(bytes);
  const report: PdfWorkerReport = {};
  return new Promise<PdfWorkerReport>((resolve) => {
    let settled = false;
    const worker = new Worker(PDF_WORKER_SCRIPT, {
      workerData: { data, maxRenderPixels: PDF_RENDER_MAX_PIXELS, ...opts },
      transferList: [data.buffer],
      resourceLimits: { maxOldGenerationSizeMb: PDF_WORKER_HEAP_MB },
      // Plain CommonJS: none of the parent's loaders (tsx's cost some 300 ms per start).
      execArgv: [],
      stdout: true,
      stderr: true,
    });
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      signal?.removeEventListener('abort', finish);
      void worker.terminate();
      resolve(report);
    };
    const timer = setTimeout(finish, timeoutMs);
    signal?.addEventListener('abort', finish, { once: true });
    // The heap cap leaves out ArrayBuffers (decoded images, streams): the thread's heap statistics
    // count them as external memory. Node 22.16 and later can read them from here.
    const stats = (worker as Worker & { getHeapStatistics?: () => Promise<{ used_heap_size: number; external_memory?: number }> }).getHeapStatistics;
    const watchdog = stats
      ? setInterval(() => {
          stats.call(worker).then(
            (h) => {
              if (h.used_heap_size + (h.external_memory ?? 0) > PDF_WORKER_MEMORY_MB * 1024 * 1024) finish();
            },
            () => undefined,
          );
        }, MEMORY_CHECK_MS)
      : undefined;
    worker.on('message', (m: { step: string } & Record<string, unknown>) => {
      if (m.step === 'info') report.info = m as unknown as PdfWorkerReport['info'];
      else if (m.step === 'text') report.text = String(m.text ?? '');
      else if (m.step === 'shots') report.shots = m.pages as PdfWorkerReport['shots'];
      // 'error': pdf.js refused the document (password, invalid); the caller keeps what it knows.
      if (m.step === 'done' || m.step === 'error') finish();
    });
    // Out of memory (resourceLimits), a crash in pdf.js: what arrived is kept.
    worker.on('error', () => finish());
    worker.on('exit', () => finish());
  });
}

/** Above this many pages (declared or counted) pdf.js is not run at all. */
const PDF_OPEN_MAX_PAGES = 5000;

export async function describePdf(
  bytes: Buffer,
  name: string | undefined,
  ctx: JobContext,
  options: { complete: boolean },
): Promise<DocumentJobResult & { document: DocumentInfo }> {
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (!head.includes('%PDF-')) throw new MediaRejected('not a PDF');
  const cfg = ctx.config;
  const fallbackTitle = name ?? 'Untitled document';
  const known: DocumentInfo = { title: fallbackTitle, ...pdfFacts(bytes), type: 'pdf' };

  if (!options.complete) return { document: known };
  // pdf.js walks the whole page tree first: a document claiming more pages than this is described
  // from its bytes only (a 100k-page PDF otherwise spent the whole time cap there).
  if (known.pageCount > PDF_OPEN_MAX_PAGES) return { document: known };

  // The Flate check (it inflates up to PDF_INFLATE_FACTOR x the media cap) and the pdf.js thread.
  const release = await ctx.memory?.hold(PDF_WORKER_HOLD_MB, ctx.signal);
  let run: PdfWorkerReport;
  try {
    if (!withinInflateBudget(bytes, PDF_INFLATE_FACTOR * cfg.maxMediaBytes)) return { document: known };
    run = await runPdfWorker(
      bytes,
      { readPages: cfg.pdfMaxPages, renderPages: cfg.pdfRenderPages, renderWidth: PDF_RENDER_WIDTH, maxTextChars: MAX_TEXT_CHARS },
      cfg.mediaDecodeTimeoutMs,
      ctx.signal,
    );
  } finally {
    release?.();
  }
  // PasswordException, InvalidPDFException, the time cap before the first step ...: what we know is the record.
  if (!run.info) return { document: known };
  const info = run.info;
  const pageCount = info.total || known.pageCount;
  const doc: DocumentInfo = { ...known, pageCount };
  const meta = info.info ?? {};
  const author = cleanMeta(meta.Author);
  if (author) doc.author = author;
  const dates = info.dates;
  const modified = dates.ModDate ?? dates.XmpModifyDate ?? dates.XapModifyDate ?? dates.CreationDate ?? null;
  if (typeof modified === 'number' && Number.isFinite(modified)) doc.lastModified = new Date(modified).toISOString();

  const pagesRead = Math.max(1, Math.min(pageCount, cfg.pdfMaxPages));
  const text = (run.text ?? '').replace(/\u0000/g, '').slice(0, MAX_TEXT_CHARS);
  const infoTitle = cleanMeta(meta.Title);
  const heading = firstHeadingLine(text);
  doc.title = (infoTitle && !/^untitled$/i.test(infoTitle) ? infoTitle : undefined) ?? heading ?? fallbackTitle;

  if (text.trim()) {
    const counts = countText(text);
    // Pages beyond the cap are counted at the average of the pages read.
    doc.estimatedReadingTime = readingMinutes(pagesRead < pageCount ? scaleCounts(counts, pageCount / pagesRead) : counts);
    const description = leadSentences(text, heading);
    if (description) doc.description = description;
    const language = acceptedLanguage(await detectLanguage(text.slice(0, 5000)));
    if (language) doc.language = language;
    doc.rawTextUrl = await storeRawText(text, ctx.blobs);
  }

  const shots = run.shots ?? [];
  if (shots.length) {
    // One render at a time, each under its own memory hold.
    const images: (ImageSet | undefined)[] = [];
    for (const sh of shots) images.push(sh.data?.length ? await hostImageBytes(Buffer.from(sh.data), ctx) : undefined);
    doc.pages = shots.map((sh, i) => (images[i] ? { pageNumber: sh.pageNumber, screenshot: images[i] as ImageSet } : { pageNumber: sh.pageNumber }));
    const first = doc.pages.find((p) => p.pageNumber === 1)?.screenshot;
    if (first) doc.image = first;
  }
  return { document: doc };
}

function cleanMeta(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v
    .replace(/[\u0000-\u001f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
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
