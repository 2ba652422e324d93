/**
 * The browser's lanes in this process, shared fairly: which waiting page load gets the next free
 * lane, and with what CPU cap (docs/architecture.md, "The browser's lanes and caps").
 *
 * - **A short first turn for every page.** A page's first turn has a small CPU cap (its first
 *   slice, `FIRST_SLICE_CPU_MS`). A page that uses it up is stopped there and sent to the back: it
 *   gets its full turn (the page's CPU cap) only when no page waits for its first turn. A real
 *   shell needs a few hundred ms of CPU; a page that loops forever costs every page behind it only
 *   its slice, so a real page sent beside N such pages waits for about N slices, not N full caps.
 * - **Hostile sites are remembered.** A site (its registrable domain, `siteOf`) whose page used up
 *   its first slice is remembered for `HOSTILE_MEMORY_MS`: its pages, those waiting and those to
 *   come, go straight to the back, with their full cap.
 * - **One lane per site while others wait.** Of the pages waiting in a tier, one of a site that
 *   holds no lane goes first; a site takes a second lane only when no other site waits. One host
 *   that sends any number of pages holds at most one lane against the others.
 *
 * A waiting load gives up at `giveUpAt` (TooLateToStart) or when its signal aborts, and the loads
 * behind it move up. No load is ever refused otherwise: each waits within its own deadline.
 */
import { TooLateToStart } from '../jobs/concurrency-gate.js';

/** The CPU a page's first turn may take (ms): a shell's render takes a few hundred ms (docs/benchmarks.md). */
export const FIRST_SLICE_CPU_MS = 500;
/** How long a site whose page used up its first slice is sent to the back. */
export const HOSTILE_MEMORY_MS = 10 * 60_000;
/** The most sites remembered (the oldest is forgotten first). */
const HOSTILE_MAX_SITES = 10_000;

/** One turn of a page in a lane: its CPU cap, and whether it is its first slice (then a cap reached sends it to the back). */
export interface Turn {
  cpuCapMs: number;
  firstSlice: boolean;
}

export interface FairLaneSettings {
  /** The first slice's CPU cap (ms); a page's cap at or below it gets one turn only. */
  firstSliceCpuMs: number;
  hostileMemoryMs: number;
  now: () => number;
}

/** A page load asking for a lane. */
export interface LaneRequest {
  /** The page's site (`siteOf` of its host). */
  site: string;
  /** Its full CPU cap (LINKPREVIEW_BROWSER_PAGE_CPU_MS). */
  cpuCapMs: number;
  /** Epoch ms (on `now`) after which it is no longer started. */
  giveUpAt?: number;
  signal?: AbortSignal;
}

interface Waiter {
  site: string;
  back: boolean;
  seq: number;
  start: () => void;
}

export class FairLanes {
  private readonly running = new Map<string, number>();
  private readonly hostile = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private active = 0;
  private seq = 0;
  private readonly settings: FairLaneSettings;

  constructor(
    readonly lanes: number,
    settings: Partial<FairLaneSettings> = {},
  ) {
    this.settings = { firstSliceCpuMs: FIRST_SLICE_CPU_MS, hostileMemoryMs: HOSTILE_MEMORY_MS, now: Date.now, ...settings };
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Whether `site` is remembered as hostile (its pages go to the back). */
  isHostile(site: string): boolean {
    const until = this.hostile.get(site);
    if (until === undefined) return false;
    if (this.settings.now() < until) return true;
    this.hostile.delete(site);
    return false;
  }

  /**
   * Runs `load` in a lane: first with the first slice's CPU cap (unless the site is remembered as
   * hostile, or the page's own cap is no larger), and, when `cutAtSlice` says that turn ended at
   * its slice, once more at the back with the full cap. The value is the last turn's; a page whose
   * full turn could not start in time fails with its first turn's error.
   */
  async run<T>(request: LaneRequest, load: (turn: Turn) => Promise<T>, cutAtSlice: (err: unknown, turn: Turn) => boolean): Promise<T> {
    const full: Turn = { cpuCapMs: request.cpuCapMs, firstSlice: false };
    // Decided as the turn starts: a site found hostile while its page waited gets its full cap at once.
    let given = full;
    const first = () => {
      const sliced = request.cpuCapMs > this.settings.firstSliceCpuMs && !this.isHostile(request.site);
      given = sliced ? { cpuCapMs: this.settings.firstSliceCpuMs, firstSlice: true } : full;
      return load(given);
    };
    try {
      return await this.turn(request, this.isHostile(request.site), first);
    } catch (err) {
      if (!given.firstSlice || !cutAtSlice(err, given)) throw err;
      this.remember(request.site);
      try {
        return await this.turn(request, true, () => load(full));
      } catch (late) {
        throw late instanceof TooLateToStart || request.signal?.aborted ? err : late;
      }
    }
  }

  private remember(site: string): void {
    this.hostile.delete(site);
    this.hostile.set(site, this.settings.now() + this.settings.hostileMemoryMs);
    if (this.hostile.size > HOSTILE_MAX_SITES) this.hostile.delete(this.hostile.keys().next().value as string);
  }

  /** One turn: waits for a lane (at the back when `back`), runs `fn`, frees the lane. */
  private async turn<T>(request: LaneRequest, back: boolean, fn: () => Promise<T>): Promise<T> {
    await this.acquire(request, back);
    try {
      return await fn();
    } finally {
      this.active--;
      const n = (this.running.get(request.site) ?? 1) - 1;
      if (n > 0) this.running.set(request.site, n);
      else this.running.delete(request.site);
      this.wake();
    }
  }

  private acquire(request: LaneRequest, back: boolean): Promise<void> {
    const { giveUpAt = Number.POSITIVE_INFINITY, signal } = request;
    const now = this.settings.now();
    if (now >= giveUpAt) return Promise.reject(new TooLateToStart(now - giveUpAt));
    if (signal?.aborted) return Promise.reject(new Error('never started'));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (err: Error) => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        done();
        reject(err);
      };
      const onAbort = () => leave(new Error('never started'));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        site: request.site,
        back,
        seq: this.seq++,
        start: () => {
          done();
          resolve();
        },
      };
      if (Number.isFinite(giveUpAt)) {
        timer = setTimeout(() => leave(new TooLateToStart(Math.max(0, this.settings.now() - giveUpAt))), giveUpAt - now);
        timer.unref?.();
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.wake();
    });
  }

  /** Hands free lanes to the waiters, the best first (`rank`). */
  private wake(): void {
    while (this.active < this.lanes && this.waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) if (this.rank(this.waiting[i]) < this.rank(this.waiting[best])) best = i;
      const [next] = this.waiting.splice(best, 1);
      this.active++;
      this.running.set(next.site, (this.running.get(next.site) ?? 0) + 1);
      next.start();
    }
  }

  /** A waiter's place: first turns before the back, then a site holding no lane before one that does, then arrival. */
  private rank(w: Waiter): number {
    const back = w.back || this.isHostile(w.site) ? 2 : 0;
    const busy = this.running.has(w.site) ? 1 : 0;
    return (back + busy) * 2 ** 40 + w.seq;
  }
}

let shared: FairLanes | undefined;

/** This process's lanes (`lanes` of them: lib/browser/lanes.ts `browserLanes`), made on first use. */
export function sharedLanes(lanes: number): FairLanes {
  if (!shared || shared.lanes !== lanes) shared = new FairLanes(lanes);
  return shared;
}
