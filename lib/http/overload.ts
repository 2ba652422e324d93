/**
 * Bounded concurrency inside one process: at most `maxActive` previews run at once and at most
 * `maxQueued` wait; anything beyond is refused at once with 503 OVERLOADED (and Retry-After),
 * so excess load costs a small error body instead of unbounded memory.
 */
import { LinkPreviewError } from '../errors.js';

export class OverloadedError extends LinkPreviewError {
  constructor(readonly retryAfterSeconds: number) {
    super(503, 'OVERLOADED', 'The service is at capacity. Retry after a short wait.', undefined, { transient: true });
  }
}

export class ConcurrencyGate {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  rejected = 0;

  constructor(
    readonly maxActive: number,
    readonly maxQueued: number,
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
        throw new OverloadedError(1);
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
