/**
 * Bounded concurrency inside one process: at most `maxActive` tasks run at once and at most
 * `maxQueued` wait, in their order; beyond that `run` throws what `whenFull` makes. The jobs' lanes
 * (the in-process runner, the worker Lambda's records) wait without bound; the local server's
 * previews have a gate of their own, which counts the wait against the budget (lib/http/overload.ts).
 *
 * A task may say when it is too late to start (`giveUpAt`, epoch ms on `now`): then it gives up
 * at once, never run late. It never starts once that time has come, and while it waits it is taken
 * out of the queue at that time (TooLateToStart), so the tasks behind it move up.
 */
export class ConcurrencyGate {
  private active = 0;
  private readonly queue: Waiter[] = [];
  rejected = 0;
  /** Tasks that gave up, their start too late. */
  gaveUp = 0;

  constructor(
    readonly maxActive: number,
    readonly maxQueued: number = Number.POSITIVE_INFINITY,
    private readonly whenFull: () => Error = () => new Error('the queue is full'),
    private readonly now: () => number = Date.now,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(fn: () => Promise<T>, giveUpAt: number = Number.POSITIVE_INFINITY): Promise<T> {
    if (this.now() >= giveUpAt) throw this.tooLate(giveUpAt);
    if (this.active >= this.maxActive) {
      if (this.queue.length >= this.maxQueued) {
        this.rejected++;
        throw this.whenFull();
      }
      await this.wait(giveUpAt);
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      this.handOn();
    }
  }

  /** Waits for a slot (`handOn` counts it for the waiter), or rejects once `giveUpAt` comes. */
  private wait(giveUpAt: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { giveUpAt, resolve, reject };
      if (Number.isFinite(giveUpAt)) {
        waiter.timer = setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(this.tooLate(giveUpAt));
        }, giveUpAt - this.now());
        waiter.timer.unref?.();
      }
      this.queue.push(waiter);
    });
  }

  /** The freed slot passes straight to the first waiter still in time; the waiters past their time give up. */
  private handOn(): void {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      clearTimeout(next.timer);
      if (this.now() >= next.giveUpAt) {
        next.reject(this.tooLate(next.giveUpAt));
        continue;
      }
      next.resolve();
      return;
    }
    this.active--;
  }

  private tooLate(giveUpAt: number): TooLateToStart {
    this.gaveUp++;
    return new TooLateToStart(this.now() - giveUpAt);
  }
}

interface Waiter {
  giveUpAt: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/** A task that gave up before it started: its deadline could no longer be met. */
export class TooLateToStart extends Error {
  constructor(readonly lateMs: number) {
    super('not started: its deadline could no longer be met');
    this.name = 'TooLateToStart';
  }
}

/** What a job is for: the card the caller shows (its image and icon, the link's own media) or an extra (page versions, screenshots). */
export type JobPriority = 'card' | 'extra';

/**
 * The jobs' lanes with priorities: at most `maxActive` run at once, and of them at most
 * `maxExtra` extras (default: half the slots, at least one), so the card's jobs always find a slot
 * that no extra holds. A freed slot goes to the first card job waiting, else to the first extra
 * waiting (when the extras' share allows). Waiters are never refused: each waits within its job's
 * own deadline.
 */
export class PriorityGate {
  private active = { card: 0, extra: 0 };
  private readonly waiting: Record<JobPriority, (() => void)[]> = { card: [], extra: [] };
  readonly maxExtra: number;

  constructor(
    readonly maxActive: number,
    maxExtra?: number,
  ) {
    this.maxExtra = Math.max(1, Math.min(maxActive, maxExtra ?? maxActive - Math.ceil(maxActive / 2)));
  }

  get inFlight(): number {
    return this.active.card + this.active.extra;
  }

  private canStart(priority: JobPriority): boolean {
    if (this.inFlight >= this.maxActive) return false;
    return priority === 'card' || this.active.extra < this.maxExtra;
  }

  async run<T>(priority: JobPriority, fn: () => Promise<T>): Promise<T> {
    // A card job never queues behind an extra; an extra waits behind every card job waiting.
    const queued = this.waiting[priority].length > 0 || (priority === 'extra' && this.waiting.card.length > 0);
    if (queued || !this.canStart(priority)) {
      // Resumed by `wake`, which counts the slot for it.
      await new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    } else {
      this.active[priority]++;
    }
    try {
      return await fn();
    } finally {
      this.active[priority]--;
      this.wake();
    }
  }

  /** Hands free slots to the waiters: card jobs first, then extras within their share. */
  private wake(): void {
    for (;;) {
      const next: JobPriority | undefined =
        this.waiting.card.length > 0 && this.canStart('card') ? 'card' : this.waiting.extra.length > 0 && this.canStart('extra') ? 'extra' : undefined;
      if (!next) return;
      this.active[next]++;
      (this.waiting[next].shift() as () => void)();
    }
  }
}
