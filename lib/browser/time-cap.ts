/**
 * A page load's caps in one signal: it aborts at the time cap, with the job's own signal, when a
 * watch stops the page (its CPU or memory cap, a crash: `stop`), or when the load ends (what the
 * page still fetches stops then). Whatever is raced against it fails with the first reason.
 */

/** The reason of a load stopped at its time cap. */
export const TIME_CAP_REACHED = 'browser time cap reached';

export class TimeCap {
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private readonly over: Promise<never>;
  private why: string | undefined;
  private readonly atCap = () => this.stop(TIME_CAP_REACHED);
  private readonly onOuter = () => this.stop(TIME_CAP_REACHED);

  constructor(
    private readonly ms: number,
    private readonly outer?: AbortSignal,
  ) {
    this.over = new Promise<never>((_, reject) =>
      this.controller.signal.addEventListener('abort', () => reject(new Error(this.why ?? TIME_CAP_REACHED)), { once: true }),
    );
    this.over.catch(() => {});
    this.timer = setTimeout(this.atCap, ms);
    if (outer?.aborted) this.onOuter();
    else outer?.addEventListener('abort', this.onOuter, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the load was stopped (the first reason), or undefined while it runs or when it ended on its own. */
  get reason(): string | undefined {
    return this.why;
  }

  left(): number {
    return this.ms - (performance.now() - this.started);
  }

  /** `p`, unless a cap is reached first. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.over]);
  }

  /** Stops the load for `reason` (the first reason wins). */
  stop(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.why = reason;
    this.controller.abort();
  }

  /** The load has ended: timers and listeners off, and what the page still fetches stops. */
  end(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuter);
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}
