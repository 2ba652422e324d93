/**
 * At most `perHost` requests at once to one host from one process (LINKPREVIEW_HOST_CONCURRENCY,
 * default 6, what browsers allow per host over HTTP/1.1), the others queued first come, first
 * served. A queued request waits within its own time: when its fetch's time runs out (or its
 * signal aborts) it leaves the queue as a TIMEOUT, never holding a place. Each request of the
 * fetcher holds one connection while it runs (new or pooled: lib/fetch/connection-agents.ts), so
 * this also bounds the connections a host sees in use from the process. On AWS each preview Lambda instance has its own gate: a herd spread
 * over N instances may reach a host N × perHost times at once (docs/deploy-aws.md).
 */

interface Waiter {
  go: () => void;
}

interface Lane {
  active: number;
  queue: Waiter[];
}

export class HostGate {
  private readonly lanes = new Map<string, Lane>();
  /** The most requests seen at once on one host (for the herd bench and tests). */
  peak = 0;

  constructor(readonly perHost: number) {}

  /**
   * Waits for a place on `host`'s lane, at most `waitMs` (then rejects with `onTimeout()`'s error, or
   * the signal's reason); resolves to the function that gives the place back (call it once).
   */
  async enter(host: string, waitMs: number, onTimeout: () => Error, signal?: AbortSignal): Promise<() => void> {
    const lane = this.lanes.get(host) ?? { active: 0, queue: [] };
    this.lanes.set(host, lane);
    if (lane.active < this.perHost && lane.queue.length === 0) {
      lane.active++;
      this.peak = Math.max(this.peak, lane.active);
      return this.release(host, lane);
    }
    // A place given back is handed to the first waiter as it is (still counted), so no newcomer takes it meanwhile.
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { go: () => settle(resolve) };
      const settle = (then: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        then();
      };
      const leave = (err: unknown) => {
        const i = lane.queue.indexOf(waiter);
        if (i >= 0) lane.queue.splice(i, 1);
        settle(() => reject(err));
      };
      const abort = () => leave(signal?.reason);
      const timer = setTimeout(() => leave(onTimeout()), Math.max(0, waitMs));
      signal?.addEventListener('abort', abort, { once: true });
      lane.queue.push(waiter);
    });
    return this.release(host, lane);
  }

  /** Requests at once on `host` now. */
  active(host: string): number {
    return this.lanes.get(host)?.active ?? 0;
  }

  /** The function that gives a place back: to the first waiter, else to the lane. */
  private release(host: string, lane: Lane): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = lane.queue.shift();
      if (next) return next.go();
      lane.active--;
      if (lane.active === 0) this.lanes.delete(host);
    };
  }
}
