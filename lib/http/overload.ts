/**
 * The local server's previews: at most `maxActive` run at once and at most `maxQueued` wait;
 * anything beyond is refused at once with 503 OVERLOADED (and Retry-After), so excess load costs
 * a small error body instead of unbounded memory.
 *
 * The wait counts against the request's budget (it starts when the request arrives): a request
 * is refused at once when the queue ahead of it would take longer than its budget allows (the
 * previews' recent durations tell how long a slot takes to free; before the first has ended, a
 * preview is taken to last half the budget), and one still waiting when its
 * budget could no longer cover a preview is taken out of the queue and refused then. One admitted
 * late starts with what is left (`admit` hands its function the time it waited).
 */
import { LinkPreviewError } from '../errors.js';

export class OverloadedError extends LinkPreviewError {
  constructor(readonly retryAfterSeconds: number) {
    super(503, 'OVERLOADED', 'The service is at capacity. Retry after a short wait.', { transient: true });
  }
}

/** Below this much budget a preview is not started: it could not fetch and answer in time. */
export const MIN_PREVIEW_MS = 2000;

/** The clock and timer of the gate (injected by tests). */
export interface GateClock {
  now(): number;
  setTimer(fn: () => void, ms: number): () => void;
}

const REAL_CLOCK: GateClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

interface Waiter {
  start: () => void;
}

/** The local server's gate for previews: a full queue, or a queue too long for the budget, is a 503 OVERLOADED. */
export class PreviewGate {
  private active = 0;
  private readonly queue: Waiter[] = [];
  /** The recent previews' mean duration (ms), an exponential average; undefined before the first ends. */
  private meanMs: number | undefined;
  rejected = 0;

  constructor(
    readonly maxActive: number,
    readonly maxQueued: number,
    private readonly clock: GateClock = REAL_CLOCK,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /**
   * How long a request entering the queue now is expected to wait (ms): 0 when a slot is free.
   * Before any preview has ended, one is taken to last `coldMs` (a burst at start is not let in
   * on no evidence).
   */
  expectedWaitMs(coldMs = 0): number {
    if (this.active < this.maxActive) return 0;
    // Slots free at `maxActive / meanMs` per ms; the waiters ahead and this one take them in order.
    return ((this.queue.length + 1) * (this.meanMs ?? coldMs)) / this.maxActive;
  }

  private refuse(): never {
    this.rejected++;
    throw new OverloadedError(1);
  }

  /**
   * Runs `fn` (given the ms it waited) once a slot is free, if the request's `budgetMs` (counted
   * from now, its arrival) still leaves MIN_PREVIEW_MS by then; otherwise 503 OVERLOADED, at once
   * when the queue is full or expected to take too long, else when the budget runs out in it.
   */
  async admit<T>(fn: (waitedMs: number) => Promise<T>, budgetMs = Number.POSITIVE_INFINITY): Promise<T> {
    const arrived = this.clock.now();
    if (this.active >= this.maxActive) {
      if (this.queue.length >= this.maxQueued) this.refuse();
      const patience = budgetMs - MIN_PREVIEW_MS;
      if (patience <= 0 || this.expectedWaitMs(budgetMs / 2) > patience) this.refuse();
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          start: () => {
            cancel();
            resolve();
          },
        };
        const cancel = Number.isFinite(patience)
          ? this.clock.setTimer(() => {
              const at = this.queue.indexOf(waiter);
              if (at >= 0) this.queue.splice(at, 1);
              this.rejected++;
              reject(new OverloadedError(1));
            }, patience)
          : () => {};
        this.queue.push(waiter);
      });
    } else {
      this.active++;
    }
    const started = this.clock.now();
    try {
      return await fn(started - arrived);
    } finally {
      const took = this.clock.now() - started;
      this.meanMs = this.meanMs === undefined ? took : 0.8 * this.meanMs + 0.2 * took;
      const next = this.queue.shift();
      if (next)
        next.start(); // the slot passes straight to the next waiter
      else this.active--;
    }
  }

  /** `admit` without a budget (the queue's bounds only). */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.admit(() => fn());
  }
}
