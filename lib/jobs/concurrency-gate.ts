/**
 * Bounded concurrency inside one process: at most `maxActive` tasks run at once and at most
 * `maxQueued` wait, in their order; beyond that `run` throws what `whenFull` makes. The jobs' lanes
 * (the in-process runner, the worker Lambda's records) wait without bound; the local server's
 * previews are refused with 503 OVERLOADED (lib/http/overload.ts).
 */
export class ConcurrencyGate {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  rejected = 0;

  constructor(
    readonly maxActive: number,
    readonly maxQueued: number = Number.POSITIVE_INFINITY,
    private readonly whenFull: () => Error = () => new Error('the queue is full'),
  ) {}

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.maxActive) {
      if (this.queue.length >= this.maxQueued) {
        this.rejected++;
        throw this.whenFull();
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next)
        next(); // the slot passes straight to the next waiter
      else this.active--;
    }
  }
}
