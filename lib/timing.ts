/**
 * Phase timings of one request, reported in the Server-Timing header. Phases may overlap (the
 * image jobs run beside the page's content job): each phase reports the time it was running,
 * its concurrent spans counted once, and `total` the request's wall time.
 */
import { type JobSpecs, jobSpec } from './jobs/specs.js';
import type { JobRunner } from './ports.js';

/** After the ones asked for, the phases that ran, in this order (any other after them). */
const PHASE_ORDER = ['platform', 'subfetch', 'images', 'content', 'screenshot'];

export class PhaseTimer {
  private readonly started = performance.now();
  private readonly spans = new Map<string, [number, number][]>();
  private readonly notes = new Map<string, string>();

  /** A metric with a description and no duration (`route;desc="proxy"`): what a phase decided. */
  note(name: string, desc: string): void {
    this.notes.set(name, desc);
  }

  async time<T>(phase: string, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.record(phase, t0, performance.now());
    }
  }

  /** A span of a phase, from `start` to `end` (performance.now() values). */
  record(phase: string, start: number, end: number): void {
    const spans = this.spans.get(phase) ?? [];
    spans.push([start, Math.max(start, end)]);
    this.spans.set(phase, spans);
  }

  /** The time the phase was running, in ms: its spans' union (0 when it did not run). */
  duration(phase: string): number {
    const spans = [...(this.spans.get(phase) ?? [])].sort((a, b) => a[0] - b[0]);
    let sum = 0;
    let from = -Infinity;
    let to = -Infinity;
    for (const [start, end] of spans) {
      if (start > to) {
        if (to > from) sum += to - from;
        from = start;
      }
      to = Math.max(to, end);
    }
    return to > from ? sum + to - from : sum;
  }

  /**
   * `fetch;dur=12.3, extract;dur=4.0, jobs;dur=60.2, subfetch;dur=1.1, images;dur=48.9, content;dur=23.5, total;dur=77.9`:
   * the phases of `order` always, then those that ran.
   */
  header(order: string[] = ['fetch', 'extract', 'jobs']): string {
    const ran = [...this.spans.keys()].filter((p) => !order.includes(p));
    const known = PHASE_ORDER.filter((p) => ran.includes(p));
    const phases = [...order, ...known, ...ran.filter((p) => !known.includes(p))];
    const parts = phases.map((p) => `${p};dur=${this.duration(p).toFixed(1)}`);
    for (const [name, desc] of this.notes) parts.push(`${name};desc="${desc.replace(/["\\]/g, '')}"`);
    parts.push(`total;dur=${(performance.now() - this.started).toFixed(1)}`);
    return parts.join(', ');
  }
}

/** A JobRunner that records each job's time (from its submission, as its outcome reports it) under its kind's phase (lib/jobs/specs.ts). */
export function timedJobRunner(jobs: JobRunner, timer: PhaseTimer, specs: JobSpecs = jobSpec): JobRunner {
  return {
    sharesCpu: jobs.sharesCpu,
    async run(list, options) {
      const submitted = performance.now();
      const outcomes = await jobs.run(list, options);
      for (const job of list) {
        const phase = specs(job.kind)?.phase;
        const outcome = outcomes.get(job.id);
        if (phase && outcome) timer.record(phase, submitted, submitted + outcome.ms);
      }
      return outcomes;
    },
  };
}
