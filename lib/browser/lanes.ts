/**
 * The browser's lanes and a page's caps: how many pages load at once, and what one page may take.
 * One set of figures for both places the browser runs: the local server's lanes
 * (`browserLanes`), and the AWS browser worker's memory and concurrency (`browserWorkerMemoryMb`,
 * `AWS_BROWSER_LANES`, read by cdk/constructs/browser-worker-function.ts). No browser code here:
 * the CDK app and the job list import it.
 *
 * The figures (Debian's Chromium 156, this machine, 2026-11-27; proportional set sizes, which count
 * a page shared by several processes once): Chromium launched, 106 MB; with one tab, 246 MB; with a
 * React-like shell rendered, 269 MB; each further tab about 50 MB. Run as one process (as on AWS),
 * 164 MB with the shell rendered. A page's renderer holds 20 to 30 MB of private memory for a
 * small shell; a page that allocates without end takes what the machine has (3.4 GB of strings,
 * 4.2 GB of typed arrays, 3.7 GB for a 200 MB text node, before the caps).
 */
import { availableParallelism, totalmem } from 'node:os';
import type { CoreConfig } from '../core-settings.js';
import { LAMBDA_MB_PER_VCPU } from '../core-settings.js';
import { WORKER_BASE_MB, WORKER_HEADROOM_MB } from '../jobs/memory.js';

/** Chromium without a page of ours: the browser, GPU, network and storage processes, and the spare tab (269 MB measured, rounded up). */
export const BROWSER_BASE_MB = 300;

/** The JavaScript heap cap of a page's renderer: half its memory cap (the rest is its DOM, layout, images and ArrayBuffers, outside V8's heap). */
export function pageHeapMb(pageMb: number): number {
  return Math.floor(pageMb / 2);
}

/**
 * A browser job is not started with less than this left before its deadline: a render's tab, page
 * load, quiet window and read rarely take less (p50 about 490 ms for the shells of the bench), so a
 * later start would only end at the deadline, holding a lane others could use.
 */
export const BROWSER_MIN_RUN_MS = 1_500;

/** Locally, the share of the machine's memory the browser may take: the rest is the service's (sharp, ffmpeg, pdf.js) and the machine's. */
export const LOCAL_BROWSER_MEMORY_SHARE = 0.25;

/** What the local lanes are decided from. */
export interface Machine {
  memoryMb: number;
  cores: number;
}

/** This machine: its memory (a container's limit when lower) and its cores. */
export function thisMachine(): Machine {
  const total = totalmem();
  const limit = Number(process.constrainedMemory?.() ?? 0);
  return { memoryMb: Math.floor((limit > 0 && limit < total ? limit : total) / 2 ** 20), cores: availableParallelism() };
}

/** Lanes per core with `auto`: pages beyond the cores share them (lib/browser/page-lanes.ts says why two). */
export const LANES_PER_CORE = 2;

/**
 * The local server's lanes: `LINKPREVIEW_BROWSER_CONCURRENCY`, or with `auto` as many pages as the
 * browser's share of the memory holds beside Chromium's own at their cap, at least one, and at
 * most two a core. Each lane is a renderer with a main thread of its own: lanes beyond the cores
 * share them, so a real page loaded beside pages that loop forever gets a share of the CPU at once
 * instead of waiting behind them, and when every lane is taken the greediest page gives its lane
 * to a waiting one (lib/browser/page-lanes.ts). Two a core, not more: with sixteen looping pages
 * and one real shell (`npm run bench -- fair-browser`, docs/benchmarks.md), 4 lanes on 2 cores
 * rendered the shell in 7.8 s and 2 lanes in 9.3 s, but 11 lanes shared the CPU so thinly (and
 * kept Chromium's browser process so busy) that its render missed its 8 s cap.
 */
export function browserLanes(config: Pick<CoreConfig, 'browserConcurrency' | 'browserPageMb'>, machine: Machine = thisMachine()): number {
  if (config.browserConcurrency !== 'auto') return config.browserConcurrency;
  const byMemory = Math.floor((machine.memoryMb * LOCAL_BROWSER_MEMORY_SHARE - BROWSER_BASE_MB) / config.browserPageMb);
  return Math.max(1, Math.min(byMemory, LANES_PER_CORE * Math.max(1, machine.cores)));
}

/**
 * On AWS, the pages of one browser worker at once: one. The layer's Chromium runs as a single
 * process (@sparticuz/chromium's `--single-process`), where every page shares one renderer thread,
 * so a second page would wait behind a first that loops. The lanes are the worker's instances
 * instead: one job a batch, one job at a time, as many at once as its concurrency.
 */
export const AWS_BROWSER_LANES = 1;

/**
 * The browser worker Lambda's memory: the worker process (WORKER_BASE_MB and its headroom), Chromium's
 * own, and each lane's page at its cap; at least a vCPU's worth (LAMBDA_MB_PER_VCPU), since Lambda
 * gives CPU with memory and a render wants a whole core.
 */
export function browserWorkerMemoryMb(pageMb: number, lanes: number = AWS_BROWSER_LANES): number {
  return Math.max(LAMBDA_MB_PER_VCPU, WORKER_BASE_MB + WORKER_HEADROOM_MB + BROWSER_BASE_MB + lanes * pageMb);
}

/** Where the whole browser is one process (the Lambda's), the cap of that process: Chromium's own and each lane's page. */
export function singleProcessCapMb(pageMb: number, lanes: number): number {
  return BROWSER_BASE_MB + lanes * pageMb;
}
