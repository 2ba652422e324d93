import { routedFetcher } from '../../fetch/safe-fetch.js';
import { ConcurrencyGate, PriorityGate } from '../../jobs/concurrency-gate.js';
import { type DeferOptions, type JobContext, partsRecorder } from '../../jobs/context.js';
import { untilDeadline } from '../../jobs/deadline.js';
import type { IdleWork } from '../../jobs/idle-work.js';
import type { JobKind } from '../../jobs/kinds.js';
import { JOB_REGISTRY, type JobRegistry } from '../../jobs/registry.js';
import type { JobWorker } from '../../jobs/specs.js';
import { type Job, type JobOutcome, type JobRunner, PARKED, type RunOptions } from '../../ports.js';

/**
 * Runs jobs in this process with a concurrency limit shared by all requests. A job still running
 * at its deadline is reported as failed (and signalled to stop); the record goes out without it.
 *
 * A kind whose worker has a lane of its own (`lanes`: the browser's, whose Chromium page loads
 * take a second or more) runs under that lane's limit instead, so a backlog of captures never
 * holds up the image and page-content jobs of the requests behind them, as the browser worker
 * Lambda does not on AWS. A job still waiting for its slot when its deadline can no longer be met
 * (less than its kind's `minRunMs` left) gives up at once, and never starts.
 *
 * In the shared lanes the card's jobs come first (their kind's `priority`, lib/jobs/specs.ts): an
 * extra (the page versions with their images) holds at most half of the slots and waits behind
 * every card job waiting, so a slow extra never delays the image and icon of any record.
 *
 * Deferred work with a key (the page versions' build) is parked in `idle` when the context has one
 * (the local server: lib/jobs/idle-work.ts), so it runs when no preview is in flight or when its
 * result is asked for; without one, at once. So are whole jobs the caller goes without for now
 * (RunOptions.idleKey: the page's content, when the record needs neither its excerpt nor its
 * reading time): their outcome is PARKED at once.
 */
export class InlineJobRunner implements JobRunner {
  /** The jobs share this process's cores with the requests. */
  readonly sharesCpu = true;
  private readonly shared: PriorityGate;
  /** What a handler is given of the runner's context (not its idle work). */
  private readonly jobContext: Omit<JobContext, 'signal'>;
  private readonly lanes: Partial<Record<JobWorker, ConcurrencyGate>>;

  constructor(
    private readonly ctx: Omit<JobContext, 'signal'> & { idle?: IdleWork },
    concurrency: number,
    lanes: Partial<Record<JobWorker, number>> = {},
    private readonly registry: JobRegistry = JOB_REGISTRY,
  ) {
    const { idle: _idle, ...jobContext } = ctx;
    this.jobContext = jobContext;
    this.shared = new PriorityGate(concurrency);
    this.lanes = Object.fromEntries(Object.entries(lanes).map(([worker, size]) => [worker, new ConcurrencyGate(size)]));
  }

  /** Jobs waiting for a lane of `worker` (the browser's: lib/browser/page-lanes.ts asks a greedy page to give its lane). */
  waiting(worker: JobWorker): number {
    return this.lanes[worker]?.waiting ?? 0;
  }

  async run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>> {
    const { idle } = this.ctx;
    const { idleKey } = options;
    if (idle && idleKey !== undefined) {
      for (const job of jobs) this.park(idle, idleKey, job, options);
      return new Map(jobs.map((job) => [job.id, { id: job.id, ok: false, error: PARKED, ms: 0 }]));
    }
    const outcomes = await Promise.all(jobs.map((job) => this.runOne(job, options)));
    return new Map(outcomes.map((o) => [o.id, o]));
  }

  /**
   * Parks a job the caller goes without (RunOptions.idleKey) until the process is idle or its key
   * is asked for. It then runs with as much time as it had when it was submitted (its deadline,
   * and its input's own `deadline`, the page-content job's, move with it), and the piece ends with
   * the work it deferred (the versions' build), so whoever asked for the key has them.
   */
  private park<K extends JobKind>(idle: IdleWork, key: string, job: Job<K>, options: RunOptions): void {
    const submitted = Date.now();
    const later = () => {
      const late = Math.max(0, Date.now() - submitted);
      const input = job.input as { deadline?: unknown };
      const moved = typeof input.deadline === 'number' ? { ...job, input: { ...job.input, deadline: input.deadline + late } } : job;
      return this.runOne(moved as Job<K>, { ...options, idleKey: undefined, deadline: options.deadline + late }, true).then(() => undefined);
    };
    idle.park(key, later, inputBytes(job.input));
  }

  private async runOne<K extends JobKind>(job: Job<K>, options: RunOptions, fromIdle = false): Promise<JobOutcome<K>> {
    const t0 = performance.now();
    const spec = this.registry.spec(job.kind);
    const handler = this.registry.handler(job.kind);
    if (!spec || !handler) return { id: job.id, ok: false, error: `Unknown job kind: ${job.kind}`, ms: 0 };
    const lane = this.lanes[spec.worker];
    // A lane's job gives up at once when it could only start too late to meet its deadline.
    const inLane = <T>(fn: () => Promise<T>) => (lane ? lane.run(fn, options.deadline - (spec.minRunMs ?? 0)) : this.shared.run(spec.priority, fn));
    // The preview's route: a host it sent through the proxy goes there for this job's fetches too.
    const fetch = routedFetcher(this.ctx.fetch, options.route);
    const deferred: (() => Promise<void>)[] = [];
    const { idle } = this.ctx;
    const defer = (work: () => Promise<void>, options?: DeferOptions) => {
      if (idle && options?.key !== undefined && !fromIdle) idle.park(options.key, () => this.shared.run('extra', work));
      else deferred.push(work);
    };
    const { mark, parts } = partsRecorder();
    const outcome = await untilDeadline(options.deadline, (signal) =>
      inLane(async () => {
        if (signal.aborted) throw new Error('never started');
        return handler(job.input as never, { ...this.jobContext, fetch, signal, defer, mark });
      }),
    );
    // What the job left for after its result: in the background, in an extra's slot (a parked
    // job's piece ends with it).
    if (deferred.length) {
      const rest = this.shared.run('extra', () => Promise.all(deferred.map((w) => w().catch(() => undefined))));
      if (fromIdle) await rest;
    }
    const ms = performance.now() - t0;
    const marked = parts();
    // The handler of job.kind gave this kind's result (TypeScript cannot follow K through the lookup).
    return outcome.ok
      ? ({ id: job.id, kind: job.kind, ok: true, result: outcome.value, ms, ...(marked ? { parts: marked } : {}) } as JobOutcome<K>)
      : { id: job.id, ok: false, error: outcome.error, ms };
  }
}

/** What a parked job's input holds in memory, roughly: its strings (a page's bytes, as base64). */
function inputBytes(input: unknown): number {
  if (!input || typeof input !== 'object') return 0;
  return Object.values(input).reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0);
}
