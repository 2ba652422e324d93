import type { JobContext } from '../../jobs/context.js';
import type { JobKind } from '../../jobs/kinds.js';
import { jobHandler } from '../../jobs/registry.js';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../../ports.js';

/**
 * Runs jobs in this process with a concurrency limit shared by all requests. A job still running
 * at the deadline is reported as failed (and signalled to stop); the record goes out without it.
 */
export class InlineJobRunner implements JobRunner {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly ctx: Omit<JobContext, 'signal'>,
    private readonly concurrency: number,
  ) {}

  private async slot(): Promise<() => void> {
    if (this.active >= this.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    return () => {
      this.active--;
      this.waiting.shift()?.();
    };
  }

  async run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    const outcomes = await Promise.all(jobs.map((job) => this.runOne(job, options)));
    return new Map(outcomes.map((o) => [o.id, o]));
  }

  private async runOne<K extends JobKind>(job: Job<K>, options: RunOptions): Promise<JobOutcome<K>> {
    const t0 = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<JobOutcome<K>>((resolve) => {
      timer = setTimeout(
        () => {
          controller.abort();
          resolve({ id: job.id, ok: false, error: 'deadline exceeded', ms: performance.now() - t0 });
        },
        Math.max(0, options.deadline - Date.now()),
      );
    });
    const work = (async (): Promise<JobOutcome<K>> => {
      const release = await this.slot();
      try {
        if (controller.signal.aborted) return { id: job.id, ok: false, error: 'deadline exceeded', ms: performance.now() - t0 };
        const result = await jobHandler(job.kind)(job.input as never, { ...this.ctx, signal: controller.signal });
        // The handler of job.kind gave this kind's result (TypeScript cannot follow K through the lookup).
        return { id: job.id, kind: job.kind, ok: true, result, ms: performance.now() - t0 } as JobOutcome<K>;
      } catch (err) {
        return { id: job.id, ok: false, error: (err as Error).message, ms: performance.now() - t0 };
      } finally {
        release();
      }
    })();
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
