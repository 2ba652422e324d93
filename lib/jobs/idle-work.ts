/**
 * Work a process does when it has nothing better to do, or when someone asks for its result: the
 * local server's page content (the `page-content` job: Readability, the versions and their
 * content images: lib/page/page-content.ts), which no card shows and most records never have
 * followed, when the record goes without it (lib/adapters/local/inline-job-runner.ts,
 * RunOptions.idleKey), and the versions' build of a content read at once. On AWS the worker Lambda builds them at once,
 * on cores of its own; in the local server they would share the cores with the next previews
 * (their image downloads, renders and writes), so they are parked here instead, by a key (the
 * page's digest), and run:
 *
 *  - at once when their result is asked for (`want`: the local server's /assets/ asked for one of
 *    the page's versions, and holds the request until it is built);
 *  - when the process has been idle for `idleMs` (no preview in flight: `busy`), oldest first, one
 *    at a time, each only while the process is still idle when it starts;
 *  - when more than `maxParked` are waiting, or they hold more than `maxBytes`, the oldest at once
 *    (the memory they hold is bounded);
 *  - all of them when the server stops (`drain`, within a time cap).
 *
 * A parked piece of work holds what it needs in memory (the page's content), so one that never
 * runs (the process killed) is lost; whoever serves its result then stores what could be made
 * (lib/page/page-versions.ts `awaitVersion`: stand-ins), and the next preview of the page makes it again.
 */

/** Schedules `fn` after `ms`; returns its cancel (tests drive it by hand). */
export type IdleTimer = (fn: () => void, ms: number) => () => void;

const realTimer: IdleTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};

export interface IdleWorkOptions {
  /** How long the process must have had no preview in flight before a parked piece starts. */
  idleMs: number;
  /** Parked at most; past it, the oldest starts at once. */
  maxParked: number;
  /** The bytes the parked pieces hold at most (what `park` is told); past it, the oldest start at once. */
  maxBytes?: number;
  timer?: IdleTimer;
}

interface Parked {
  work: () => Promise<void>;
  bytes: number;
}

export class IdleWork {
  private inFlight = 0;
  private readonly parked = new Map<string, Parked>();
  private parkedBytes = 0;
  private readonly running = new Map<string, Promise<void>>();
  /** The idle timer's cancel while it is armed. */
  private armed: (() => void) | undefined;
  /** A piece started because the process was idle is running (the next waits for it). */
  private draining = false;
  private readonly timer: IdleTimer;

  constructor(private readonly options: IdleWorkOptions) {
    this.timer = options.timer ?? realTimer;
  }

  /** Pieces parked (not started). */
  get waiting(): number {
    return this.parked.size;
  }

  /** Parks `work`, which holds `bytes` meanwhile, under `key` (nothing when a piece of that key is parked or running already). */
  park(key: string, work: () => Promise<void>, bytes = 0): void {
    if (this.parked.has(key) || this.running.has(key)) return;
    this.parked.set(key, { work, bytes });
    this.parkedBytes += bytes;
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    while (this.parked.size > this.options.maxParked || (this.parked.size > 1 && this.parkedBytes > maxBytes)) this.start(this.oldest() as string);
    this.armIfIdle();
  }

  /** The piece of `key` once done: started now if parked; undefined when none is parked or running. */
  want(key: string): Promise<void> | undefined {
    return this.running.get(key) ?? (this.parked.has(key) ? this.start(key) : undefined);
  }

  /** A preview starts: nothing parked starts until every one in flight has ended (call the returned function then). */
  busy(): () => void {
    this.inFlight++;
    this.armed?.();
    this.armed = undefined;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight--;
      this.armIfIdle();
    };
  }

  /**
   * Starts everything parked and waits for all of it, at most `capMs`: what is still running then
   * goes on, unwaited for. Nothing parked starts by itself afterwards.
   */
  async drain(capMs: number): Promise<void> {
    this.armed?.();
    this.armed = undefined;
    for (const key of [...this.parked.keys()]) this.start(key);
    let cancel = () => {};
    const cap = new Promise<void>((resolve) => {
      cancel = this.timer(resolve, capMs);
    });
    await Promise.race([Promise.all(this.running.values()), cap]);
    cancel();
  }

  private oldest(): string | undefined {
    return this.parked.keys().next().value;
  }

  private armIfIdle(): void {
    if (this.inFlight > 0 || this.armed || this.draining || this.parked.size === 0) return;
    this.armed = this.timer(() => {
      this.armed = undefined;
      this.nextWhileIdle();
    }, this.options.idleMs);
  }

  /** The oldest parked piece, if the process is still idle; then the next, as long as it stays idle. */
  private nextWhileIdle(): void {
    const key = this.oldest();
    if (this.inFlight > 0 || key === undefined) return;
    this.draining = true;
    void this.start(key).finally(() => {
      this.draining = false;
      if (this.inFlight === 0) this.nextWhileIdle();
      else this.armIfIdle();
    });
  }

  private start(key: string): Promise<void> {
    const piece = this.parked.get(key);
    if (!piece) return this.running.get(key) ?? Promise.resolve();
    this.parked.delete(key);
    this.parkedBytes -= piece.bytes;
    const done = Promise.resolve()
      .then(piece.work)
      .catch(() => undefined)
      .finally(() => this.running.delete(key));
    this.running.set(key, done);
    return done;
  }
}
