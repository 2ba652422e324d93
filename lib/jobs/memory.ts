/**
 * How much memory each job kind may take, and the admission that keeps a worker's jobs inside
 * its Lambda's memory: an out-of-memory kill loses every record of the batch (they all come back
 * after the visibility timeout, and land in the DLQ after maxReceiveCount).
 *
 * The figures are peak RSS growth measured with the real job code (`npm run bench --
 * worker-memory`, test/bench/worker-memory.bench.ts), rounded up; the "Worker memory" section of
 * docs/deploy-aws.md has the table and the arithmetic. Every figure is in MB (MiB, as Lambda counts).
 *
 * A job holds memory in two ways:
 *  - from its start, what its kind declares (its `memoryMb` in lib/jobs/specs.ts): downloads,
 *    buffers, ffprobe;
 *  - while it does the part whose cost depends on sizes it learns on the way, a hold taken with
 *    `ctx.memory.hold(mb)` and given back after: an image render (`imageRenderMb`, from the
 *    decoded size), a video decode (`videoDecodeMb`, from the probed size), the pdf.js thread
 *    (`PDF_WORKER_HOLD_MB`). So in 1769 MB four 50 MP JPEGs render together, while two 50 MP
 *    images with alpha, or two pdf.js threads, take turns.
 * The worker (functions/worker.ts) admits a job, and grants a hold, while the sum of what is held
 * fits in the function's memory less the idle process (`workerMemoryBudgetMb`); the others wait
 * their turn, within their own deadlines. A request larger than the budget is granted when
 * nothing else is running (it runs alone); so is the first waiter when every job holding memory
 * is itself waiting, so holds never deadlock.
 */
import type { CoreConfig } from '../core-settings.js';

/**
 * The worker process with its code loaded and no job running, after one job of every kind (bench
 * case `base` of `npm run bench -- worker-memory`), rounded up. The CPU pool's thread
 * (lib/jobs/cpu-pool.ts) is part of it; WORKER_HEADROOM_MB covers what the bench, run under tsx
 * without the Lambda runtime client, the AWS SDK and Powertools, does not see. The dated figures:
 * docs/benchmarks.md.
 */
export const WORKER_BASE_MB = 300;

/** Kept free of jobs: allocator slack and what the estimates miss. */
export const WORKER_HEADROOM_MB = 64;

/** Old-generation heap cap of the pdf.js thread (lib/media/pdf.ts): V8 stops it there. */
export const PDF_WORKER_HEAP_MB = 384;

/**
 * Heap plus ArrayBuffers (decoded images, inflated streams) of the pdf.js thread: past this
 * lib/media/pdf.ts terminates it (the steps done are kept). ArrayBuffers are outside the heap cap:
 * a page of eight 16 MP images took 630 MB with the heap cap alone, 434 MB with this cap (bench
 * `pdf-images`).
 * Enforced where Node can read a worker's heap statistics (22.16 and later: the Lambda runtime).
 */
export const PDF_WORKER_MEMORY_MB = 384;

/** Page renders are at most this many pixels (a 612x14400 pt page rendered 1024 wide took 100 MB of canvas). */
export const PDF_RENDER_MAX_PIXELS = 4_000_000;

/**
 * What the document job holds while it checks the Flate budget and runs the pdf.js thread: the
 * thread's capped memory plus its young generation, code and canvases. Bench: `pdf-heap` (to the
 * heap cap) 606 MB for the whole job, `pdf-images` 434, `pdf-scan` 204, `pdf-tall` 80; rounded up.
 */
export const PDF_WORKER_HOLD_MB = 600;

/** The memory budget of a worker's jobs, or undefined (no admission) when the function's memory is unknown. */
export function workerMemoryBudgetMb(config: Pick<CoreConfig, 'functionMemoryMb'>): number | undefined {
  if (!config.functionMemoryMb) return undefined;
  return Math.max(0, config.functionMemoryMb - WORKER_BASE_MB - WORKER_HEADROOM_MB);
}

/** What an image render takes (lib/media/render-image.ts `renderImage`: decode, four WebP encodes). */
export interface RenderSize {
  width: number;
  height: number;
  format: string;
  hasAlpha: boolean;
  /** Frames of an animation (the `original` is rendered from all of them). */
  pages?: number;
}

/**
 * Sources up to this many pixels are decoded once and each size is resized from the next larger
 * one's raw pixels (lib/media/render-image.ts); larger ones get a decode per size, so that their whole
 * raw pixels (150 MB for a 50 MP RGB image) are not held beside the encoders.
 */
export const ONE_DECODE_MAX_PIXELS = 16_000_000;

/**
 * The peak of one render: 50 MP is 257-271 MB as JPEG (sharp shrinks it on load for the small
 * sizes), 330-370 MB as RGB PNG or TIFF, 710-890 MB with alpha, where libwebp's lossless alpha
 * plane dominates (bench `image-*`, and renders of 12, 25 and 50 MP JPEG, PNG, 16-bit PNG, WebP
 * and TIFF sources). Per MP and a constant, fitted over those and rounded up. An opaque source
 * decoded once (up to ONE_DECODE_MAX_PIXELS) also holds its raw pixels: 4 bytes a pixel more (a
 * 12 MP JPEG peaked 28 MB higher than with a decode per size; with alpha, no higher: the alpha
 * figure's margin covers it).
 */
export function imageRenderMb(size: RenderSize, maxPixels = Infinity): number {
  const frames = Math.max(1, size.pages ?? 1);
  const mp = Math.min(size.width * size.height * frames, Math.max(size.width * size.height, maxPixels)) / 1e6;
  const decodedOnce = size.width * size.height <= ONE_DECODE_MAX_PIXELS && size.format !== 'svg' ? 4 * ((size.width * size.height) / 1e6) : 0;
  if (size.hasAlpha || frames > 1) return Math.ceil(160 + 16 * mp);
  if (size.format === 'jpeg') return Math.ceil(30 + 5 * mp + decodedOnce);
  return Math.ceil(60 + 7 * mp + decodedOnce);
}

/**
 * One ffmpeg decode of a video frame (lib/media/frames.ts: one input, one thread): 89 MB at 4K,
 * 297 MB at 8K (bench `video-*`), fitted and rounded up. ffmpeg refuses frames over the pixel cap.
 */
export function videoDecodeMb(pixels: number): number {
  return Math.ceil(30 + 9 * (pixels / 1e6));
}

/** A job's share of the memory, handed to its code as `ctx.memory`. */
export interface MemoryLease {
  /**
   * Waits until `mb` more fits beside what runs (or nothing else can make room), then holds it;
   * the returned function gives it back. Rejects with MemoryWaitAborted when `signal` aborts first.
   */
  hold(mb: number, signal?: AbortSignal): Promise<() => void>;
}

export class MemoryWaitAborted extends Error {
  constructor() {
    super('aborted while waiting for memory');
    this.name = 'MemoryWaitAborted';
  }
}

interface Lease {
  held: number;
  /** Holds this job is waiting for: a job that waits cannot give memory back. */
  waiting: number;
}

interface Waiter {
  mb: number;
  /** The job asking for a hold; undefined for a job asking to start. */
  lease?: Lease;
  /** Books the memory (synchronously, so the next decision sees it) and wakes the waiter. */
  grant: () => void;
}

/** A wait for memory: whose it is, and what is booked when it is granted or given up. */
interface WaitOptions {
  /** The job asking for a hold; undefined for a job asking to start. */
  lease?: Lease;
  signal?: AbortSignal;
  /** Books what was granted (synchronously). */
  book: () => void;
  /** Undoes what the wait booked beforehand, when it is given up. */
  unbook?: () => void;
}

/**
 * A weighted semaphore over MB. `capacityMb` undefined: everything is granted at once. Waiters are
 * served in order, and any later one that fits goes ahead of one that does not (a batch is finite,
 * so none waits for ever). When nothing is running (no job admitted, or every admitted job is
 * waiting for a hold), the first waiter is granted even over the capacity, the hold of a job that
 * already runs first: so a job larger than the budget runs alone, and holds cannot deadlock.
 */
export class MemoryGate {
  private used = 0;
  private readonly leases = new Set<Lease>();
  private readonly waiters: Waiter[] = [];

  constructor(readonly capacityMb: number | undefined) {}

  /** MB held now. */
  get inUse(): number {
    return this.used;
  }

  /** Jobs admitted and not yet released. */
  get running(): number {
    return this.leases.size;
  }

  /**
   * Admits a job that holds `mb` from its start; resolves when it may run, with its lease and the
   * function that gives back everything it holds.
   */
  async admit(mb: number, signal?: AbortSignal): Promise<MemoryLease & { release(): void }> {
    const lease: Lease = { held: 0, waiting: 0 };
    await this.wait(mb, {
      signal,
      book: () => {
        lease.held += mb;
        this.leases.add(lease);
      },
    });
    let released = false;
    return {
      hold: async (extra, holdSignal) => {
        if (released) throw new Error('hold on a released lease');
        const amount = Math.max(0, extra);
        lease.waiting++;
        await this.wait(amount, {
          lease,
          signal: holdSignal,
          book: () => {
            lease.waiting--;
            lease.held += amount;
          },
          unbook: () => {
            lease.waiting--;
          },
        });
        let given = false;
        return () => {
          if (given || released) return;
          given = true;
          lease.held -= amount;
          this.used -= amount;
          this.pump();
        };
      },
      release: () => {
        if (released) return;
        released = true;
        this.used -= lease.held;
        lease.held = 0;
        this.leases.delete(lease);
        this.pump();
      },
    };
  }

  /** Waits until `mb` is granted (then `book`), or the signal aborts (then `unbook`). */
  private wait(mb: number, { lease, signal, book, unbook }: WaitOptions): Promise<void> {
    if (signal?.aborted) {
      unbook?.();
      return Promise.reject(new MemoryWaitAborted());
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        unbook?.();
        reject(new MemoryWaitAborted());
        this.pump();
      };
      const waiter: Waiter = {
        mb,
        lease,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.used += mb;
          book();
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Grants what can be granted, in order. */
  private pump(): void {
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i];
      if (this.capacityMb === undefined || this.used + w.mb <= this.capacityMb) {
        this.waiters.splice(i, 1);
        w.grant();
      } else {
        i++;
      }
    }
    if (this.waiters.length === 0) return;
    // Nothing running can give memory back: the first waiter goes, a running job's hold first.
    const stalled = [...this.leases].every((l) => l.waiting > 0);
    if (!stalled) return;
    const i = Math.max(
      0,
      this.waiters.findIndex((w) => w.lease !== undefined),
    );
    const [w] = this.waiters.splice(i, 1);
    w.grant();
  }
}
