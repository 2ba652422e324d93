/**
 * The pdf.js part of the document job, run in a worker thread (lib/media/pdf.ts starts it and
 * terminates it at the time cap: pdf.js works synchronously for long stretches, and a small PDF
 * with a huge content stream held the event loop for minutes). Plain CommonJS, so Node, tsx, Jest
 * and the Lambda bundle (which esbuilds this file beside the worker's bundle) all load it as is.
 *
 * workerData: { data: Uint8Array, readPages, renderPages, renderWidth, maxTextChars, maxRenderPixels (numbers) }
 * A page is rendered `renderWidth` wide, narrower when that would pass `maxRenderPixels` or make it
 * taller than WebP allows (a 3x14400 pt sliver would be a 1024x4.9M canvas).
 * Posts, as each step finishes: { step: 'info', total, info, dates }, { step: 'text', text },
 * { step: 'shots', pages: [{ pageNumber, data }] } after each page rendered (all the renders so
 * far), then { step: 'done' }; { step: 'error', name,
 * message } when pdf.js refuses the document (password, invalid) at the first step.
 */
'use strict';
const path = require('node:path');
const { parentPort, workerData } = require('node:worker_threads');

/** pdf.js's "fake worker" module, loaded once so pdf.js finds it on globalThis (see pdf.ts). */
async function ensurePdfjsWorker() {
  if (globalThis.pdfjsWorker) return;
  try {
    await import(path.join(path.dirname(require.resolve('pdf-parse')), 'pdf.worker.mjs'));
  } catch {
    /* pdf.js falls back to its own import */
  }
}

async function main() {
  const { PDFParse } = require('pdf-parse');
  await ensurePdfjsWorker();
  const parser = new PDFParse({
    data: workerData.data,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    stopAtErrors: false,
    maxImageSize: 16 * 1024 * 1024,
  });
  try {
    let info;
    try {
      info = await parser.getInfo();
    } catch (err) {
      parentPort.postMessage({ step: 'error', name: err?.name, message: String(err?.message || err) });
      return;
    }
    const dates = info.getDateNode();
    // Dates as epoch milliseconds: a Date would arrive from another realm (instanceof fails under Jest).
    const ms = (d) => (d && typeof d.getTime === 'function' && !Number.isNaN(d.getTime()) ? d.getTime() : null);
    parentPort.postMessage({
      step: 'info',
      total: info.total,
      info: plain(info.info),
      dates: {
        ModDate: ms(dates.ModDate),
        XmpModifyDate: ms(dates.XmpModifyDate),
        XapModifyDate: ms(dates.XapModifyDate),
        CreationDate: ms(dates.CreationDate),
      },
    });
    const pages = Math.min(info.total || 0, workerData.readPages);
    if (pages > 0) {
      try {
        const t = await parser.getText({ first: pages, pageJoiner: '' });
        parentPort.postMessage({ step: 'text', text: t.text.slice(0, workerData.maxTextChars) });
      } catch {
        /* no text: the record keeps the rest */
      }
    }
    const render = Math.min(info.total || 0, workerData.renderPages);
    if (render > 0) {
      const shots = [];
      try {
        const doc = await parser.load();
        for (let n = 1; n <= render; n++) {
          const width = await renderWidthOf(doc, n);
          if (!width) continue;
          const r = await parser.getScreenshot({ partial: [n], desiredWidth: width, imageBuffer: true, imageDataUrl: false });
          for (const p of r.pages) shots.push({ pageNumber: p.pageNumber, data: p.data });
          // The renders so far, each time: if the thread is stopped on a later page, these are kept.
          if (r.pages.length) parentPort.postMessage({ step: 'shots', pages: shots });
        }
      } catch {
        /* the renders done so far */
      }
    }
  } finally {
    await parser.destroy().catch(() => undefined);
    parentPort.postMessage({ step: 'done' });
  }
}

/** WebP's largest side: a taller render could not be hosted. */
const MAX_SIDE = 16383;

/** The width page `n` is rendered at: `renderWidth`, less for a page too tall or too large; 0 to skip it. */
async function renderWidthOf(doc, n) {
  const page = await doc.getPage(n);
  const { width, height } = page.getViewport({ scale: 1 });
  page.cleanup();
  if (!(width > 0 && height > 0)) return 0;
  const aspect = height / width;
  const w = Math.floor(Math.min(workerData.renderWidth, Math.sqrt((workerData.maxRenderPixels || Infinity) / aspect), MAX_SIDE / aspect, MAX_SIDE));
  return w >= 16 ? w : 0;
}

/** The Info dictionary's plain values (strings, numbers, booleans), which survive postMessage. */
function plain(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj || {})) if (['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
  return out;
}

main().catch((err) => parentPort.postMessage({ step: 'error', name: err?.name, message: String(err?.message || err) }));
