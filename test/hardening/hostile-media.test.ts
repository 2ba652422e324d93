/**
 * Hostile files behind links: each must come back as a record (ok with what could be read, or
 * ok:false), never a 5xx, a hang or a crash; and its job must end by its own cap (the pixel
 * limit, the entity refusal, the page-count cut-off, the decode cap), not by the record deadline:
 * no job outcome is 'deadline exceeded'. How long each takes is in `npm run bench`
 * (test/bench/hostile.bench.ts), never asserted here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ffmpegBinary } from '../../lib/media/run-tool';
import type { JobOutcome } from '../../lib/ports';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';
import { pngChunk } from '../media/fixtures';

let site: FixtureServer;
let svc: TestHandler;

const chunk = pngChunk;
function png(width: number, height: number, idat: Buffer, extra: Buffer[] = []): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), ...extra, chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

function pdfWithPages(count: number): Buffer {
  // A page tree whose Kids really list `count` page objects (a ~100k-page document), no content.
  const objs: string[] = [];
  objs.push('<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: count }, (_, i) => `${i + 3} 0 R`).join(' ');
  objs.push(`<< /Type /Pages /Count ${count} /Kids [${kids}] >>`);
  for (let i = 0; i < count; i++) objs.push('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>');
  // All ASCII: string length is byte length (tracked, not recomputed: 100k objects).
  const parts = ['%PDF-1.4\n'];
  let length = parts[0].length;
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(length);
    const obj = `${i + 1} 0 obj\n${o}\nendobj\n`;
    parts.push(obj);
    length += obj.length;
  });
  let out = parts.join('');
  const xref = length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'hostile-media-'));
  const mp4 = path.join(dir, 'clip.mp4');
  execFileSync(await ffmpegBinary(), [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=10',
    '-t',
    '2',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-y',
    mp4,
  ]);
  const lying = readFileSync(mp4);
  const mvhd = lying.indexOf(Buffer.from('mvhd'));
  lying.writeUInt32BE(0x7fffffff, mvhd + 4 + 4 + 4 + 4 + 4); // version/flags, creation, modification, timescale, then duration
  const mdhd = lying.indexOf(Buffer.from('mdhd'));
  if (mdhd > 0) lying.writeUInt32BE(0x7fffffff, mdhd + 4 + 4 + 4 + 4 + 4);

  const textChunks = Array.from({ length: 40_000 }, (_, i) => chunk('tEXt', Buffer.from(`k${i}\0v`)));
  site = await startFixtureServer({
    '/pixel-bomb.png': { headers: { 'content-type': 'image/png' }, body: png(100_000, 100_000, zlib.deflateSync(Buffer.alloc(1000))) },
    '/decompression-bomb.png': { headers: { 'content-type': 'image/png' }, body: png(12_000, 12_000, zlib.deflateSync(Buffer.alloc(12_001 * 12_000))) },
    '/chunk-bomb.png': { headers: { 'content-type': 'image/png' }, body: png(1, 1, zlib.deflateSync(Buffer.from([0, 0])), textChunks) },
    '/laughs.svg': {
      headers: { 'content-type': 'image/svg+xml' },
      body: `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&g;</text></svg>`,
    },
    '/external.svg': {
      headers: { 'content-type': 'image/svg+xml' },
      body: '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="50" height="50"><image xlink:href="/leak.png" width="50" height="50"/><rect width="50" height="50" fill="red"/></svg>',
    },
    '/many-pages.pdf': { headers: { 'content-type': 'application/pdf' }, body: pdfWithPages(100_000) },
    '/lying-duration.mp4': { headers: { 'content-type': 'video/mp4' }, body: lying },
  });
  // Roomy caps: what is asserted is what the code decides of each file, not how fast a loaded machine decodes it.
  svc = createTestHandler({ config: { jobWaitMs: 20_000, mediaDecodeTimeoutMs: 10_000 } });
}, 60_000);
afterAll(async () => {
  await site.close();
  svc.cleanup();
});

/** The record and the outcomes of the jobs run for it. */
async function preview(route: string) {
  const jobs: JobOutcome<any>[] = [];
  const inner = svc.deps.jobs;
  const run = inner.run;
  const runInner = run.bind(inner);
  inner.run = async (list, options) => {
    const out = await runInner(list, options);
    jobs.push(...out.values());
    return out;
  };
  try {
    const res = await svc.post(JSON.stringify({ link: site.url(route) }));
    return { res, jobs };
  } finally {
    inner.run = run;
  }
}

/** The job of this kind, which must have finished (refused or not) before the record deadline. */
function finished(jobs: JobOutcome[], id: string) {
  const job = jobs.find((j) => j.id === id);
  expect(job).toBeDefined();
  expect(job).not.toMatchObject({ error: 'deadline exceeded' });
  return job as JobOutcome & { ok: true; result: any };
}

test.each(['/pixel-bomb.png', '/decompression-bomb.png'])(
  '%s: an IMAGE record without a hosted image, refused at the pixel limit before decoding',
  async (route) => {
    const { res, jobs } = await preview(route);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, type: 'IMAGE' });
    expect(res.json.image).toBeUndefined();
    expect(finished(jobs, 'image')).toMatchObject({ ok: true, result: { reason: expect.stringMatching(/pixel limit/) } });
  },
  20_000,
);

test('a PNG with 40,000 ancillary chunks: the 1x1 pixel is still hosted', async () => {
  const { res, jobs } = await preview('/chunk-bomb.png');
  expect(res.statusCode).toBe(200);
  expect(res.json.type).toBe('IMAGE');
  expect(res.json.image.original).toMatchObject({ width: 1, height: 1 });
  expect(finished(jobs, 'image')).toMatchObject({ ok: true, result: { image: { width: 1, height: 1 } } });
}, 20_000);

test('an SVG with entity expansion (billion laughs) is refused before it is parsed', async () => {
  const { res, jobs } = await preview('/laughs.svg');
  expect(res.statusCode).toBe(200);
  expect(res.json.image).toBeUndefined();
  expect(finished(jobs, 'image')).toMatchObject({ ok: true, result: { reason: expect.stringMatching(/entities/) } });
}, 20_000);

test('an SVG with an external reference is rendered without fetching it', async () => {
  const { res } = await preview('/external.svg');
  expect(res.statusCode).toBe(200);
  expect(res.json.image?.original.width).toBeGreaterThan(0);
  expect(site.requests.map((r) => r.url)).not.toContain('/leak.png');
}, 20_000);

test('a PDF with 100,000 pages: the page count from its bytes; pdf.js is not run, so no page is rendered', async () => {
  const { res, jobs } = await preview('/many-pages.pdf');
  expect(res.statusCode).toBe(200);
  expect(res.json.type).toBe('DOCUMENT');
  expect(res.json.document.pageCount).toBe(100_000);
  expect(res.json.document.pages).toBeUndefined(); // above PDF_OPEN_MAX_PAGES: described from the bytes only
  expect(finished(jobs, 'document')).toMatchObject({ ok: true, result: { document: { pageCount: 100_000 } } });
}, 40_000);

test('an MP4 whose header claims 7 years: the video is described from its real 2 s, with a bounded number of snapshots', async () => {
  const { res, jobs } = await preview('/lying-duration.mp4');
  expect(res.statusCode).toBe(200);
  expect(res.json.type).toBe('VIDEO');
  expect(res.json.video.videoCodec).toBe('h264');
  expect(res.json.video.duration).toBeCloseTo(2, 0);
  expect(res.json.video.snapshots.length).toBeGreaterThan(0);
  expect(res.json.video.snapshots.length).toBeLessThanOrEqual(4);
  finished(jobs, 'video');
}, 30_000);
