/**
 * The worker Lambda's pdf.js thread, laid out as the stack's bundling lays it out
 * (buildFunctionBundle(WORKER_BUNDLE) into an empty folder, away from this project's
 * node_modules): the worker script loads pdf-parse from there and reads and renders a real PDF.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildFunctionBundle, WORKER_BUNDLE } from '../../cdk/constructs/bundling';
import { makePdf, proseDocument } from '../media-types/fixtures';

let out: string;
beforeAll(() => {
  out = mkdtempSync(path.join(tmpdir(), 'linklens-pdf-bundle-'));
  buildFunctionBundle(WORKER_BUNDLE, out);
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

test('only what the thread needs is shipped (not the whole pdf-parse and pdfjs-dist packages)', () => {
  expect(existsSync(path.join(out, 'pdf-worker.cjs'))).toBe(true);
  expect(existsSync(path.join(out, 'node_modules', 'pdf-parse', 'dist', 'pdf-parse', 'cjs', 'pdf.worker.mjs'))).toBe(true);
  expect(existsSync(path.join(out, 'node_modules', 'pdfjs-dist'))).toBe(false);
  expect(existsSync(path.join(out, 'node_modules', 'pdf-parse', 'dist', 'pdf-parse', 'esm'))).toBe(false);
  const du = Number(execSync(`du -sk "${out}"`).toString().split(/\s/)[0]);
  // The whole asset (bundle, cld3-asm, the pdf.js thread files, canvas): far below what the whole packages would take.
  expect(du).toBeLessThan(48 * 1024);
  expect(statSync(path.join(out, 'node_modules', '@napi-rs', 'canvas-linux-x64-gnu')).isDirectory()).toBe(true);
});

test('the worker script runs from that layout: info, text and a page render', async () => {
  const pdf = makePdf({ pages: proseDocument(2), title: 'Bundle check', author: 'Ann' });
  const data = new Uint8Array(pdf);
  const messages: { step: string; [k: string]: unknown }[] = [];
  await new Promise<void>((resolve, reject) => {
    const w = new Worker(path.join(out, 'pdf-worker.cjs'), { workerData: { data, readPages: 5, renderPages: 1, renderWidth: 200, maxTextChars: 100_000 } });
    w.on('message', (m) => {
      messages.push(m);
      if (m.step === 'done' || m.step === 'error') void w.terminate().then(() => resolve());
    });
    w.on('error', reject);
  });
  const steps = messages.map((m) => m.step);
  expect(steps).toEqual(['info', 'text', 'shots', 'done']);
  expect(messages[0]).toMatchObject({ total: 2, info: { Title: 'Bundle check', Author: 'Ann' } });
  expect(String(messages[1].text)).toContain('River');
  const shots = messages[2].pages as { pageNumber: number; data: Uint8Array }[];
  expect(shots[0].pageNumber).toBe(1);
  expect(Buffer.from(shots[0].data).subarray(1, 4).toString('latin1')).toBe('PNG');
});
