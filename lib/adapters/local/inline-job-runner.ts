import type { Job, JobOutcome, JobRunner, RunOptions } from '../../ports.js';
import { jobHandler, type JobContext } from '../../jobs/registry.js';

/**
 * Runs jobs in this process with a concurrency limit shared by all requests. A job still running
 * at the deadline is reported as failed (and signalled to stop); the record goes out without it.
 */
export class InlineJobRunner implements JobRunner {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly ctx: Omit<JobContext, 'signal'>, private readonly concurrency: number) {}

  private async slot(): Promise<() => void> {
    if (this.active >= this.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    return () => {
      this.active--;
      this.waiting.shift()?.();
    };
  }

  async run(jobs: Job[], options: RunOptions): Promise<Map<string, JobOutcome>> {
    const outcomes = await Promise.all(jobs.map((job) => this.runOne(job, options)));
    return new Map(outcomes.map((o) => [o.id, o]));
  }

  private async runOne(job: Job, options: RunOptions): Promise<JobOutcome> {
    const t0 = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<JobOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve({ id: job.id, ok: false, error: 'deadline exceeded', ms: performance.now() - t0 });
      }, Math.max(0, options.deadline - Date.now()));
    });
    const work = (async (): Promise<JobOutcome> => {
      const release = await this.slot();
      try {
        if (controller.signal.aborted) return { id: job.id, ok: false, error: 'deadline exceeded', ms: performance.now() - t0 };
        const result = await jobHandler(job.kind)(job.input as never, { ...this.ctx, signal: controller.signal });
        return { id: job.id, ok: true, result, ms: performance.now() - t0 } as JobOutcome;
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
