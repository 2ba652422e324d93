import { routedFetcher } from '../../fetch/safe-fetch.js';
import { ConcurrencyGate } from '../../http/overload.js';
import type { JobContext } from '../../jobs/context.js';
import type { JobKind } from '../../jobs/kinds.js';
import { jobHandler } from '../../jobs/registry.js';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../../ports.js';

/**
 * Runs jobs in this process with a concurrency limit shared by all requests. A job still running
 * at the deadline is reported as failed (and signalled to stop); the record goes out without it.
 *
 * A kind given its own lane (`lanes`: the screenshot, whose Chromium capture takes a second or
 * more) runs under that lane's limit instead, so a backlog of captures never holds up the image
 * and page-content jobs of the requests behind them, as the screenshot worker Lambda does not on
 * AWS. A job still waiting for its slot at its deadline never starts.
 */
export class InlineJobRunner implements JobRunner {
  /** The jobs share this process's cores with the requests. */
  readonly sharesCpu = true;
  private readonly shared: ConcurrencyGate;
  private readonly lanes: Partial<Record<JobKind, ConcurrencyGate>>;

  constructor(
    private readonly ctx: Omit<JobContext, 'signal'>,
    concurrency: number,
    lanes: Partial<Record<JobKind, number>> = {},
  ) {
    this.shared = new ConcurrencyGate(concurrency, Number.POSITIVE_INFINITY);
    this.lanes = Object.fromEntries(Object.entries(lanes).map(([kind, size]) => [kind, new ConcurrencyGate(size, Number.POSITIVE_INFINITY)]));
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
    const work = (this.lanes[job.kind] ?? this.shared).run(async (): Promise<JobOutcome<K>> => {
      if (controller.signal.aborted) return { id: job.id, ok: false, error: 'deadline exceeded', ms: performance.now() - t0 };
      try {
        // The preview's route: a host it sent through the proxy goes there for this job's fetches too.
        const fetch = routedFetcher(this.ctx.fetch, options.route);
        const result = await jobHandler(job.kind)(job.input as never, { ...this.ctx, fetch, signal: controller.signal });
        // The handler of job.kind gave this kind's result (TypeScript cannot follow K through the lookup).
        return { id: job.id, kind: job.kind, ok: true, result, ms: performance.now() - t0 } as JobOutcome<K>;
      } catch (err) {
        return { id: job.id, ok: false, error: (err as Error).message, ms: performance.now() - t0 };
      }
    });
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
