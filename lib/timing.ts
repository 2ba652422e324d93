/**
 * Phase timings of one request, reported in the Server-Timing header. Phases may overlap (the
 * image jobs run beside the page's content job): each phase reports the time it was running,
 * its concurrent spans counted once, and `total` the request's wall time.
 */
import { validParts } from './jobs/context.js';
import { JOB_SPECS, type JobSpecs, jobSpec } from './jobs/specs.js';
import { type JobParts, type JobRunner, PARKED } from './ports.js';

/** The phases that are no job kind's: the platform's own code, and the sub-requests (oEmbed, the manifest). */
const STEP_PHASES = ['platform', 'subfetch'];

/**
 * After the ones asked for, the phases that ran, in this order (any other after them): the steps,
 * then the job kinds' phases in the order of JOB_SPECS (lib/jobs/specs.ts). openapi.yaml's
 * Server-Timing header lists them in this order (test/contract/openapi.test.ts checks it).
 */
export const PHASE_ORDER: readonly string[] = [...new Set([...STEP_PHASES, ...Object.values(JOB_SPECS).flatMap((spec) => spec.phase ?? [])])];

export class PhaseTimer {
  private readonly started = performance.now();
  private readonly spans = new Map<string, [number, number][]>();
  private readonly notes = new Map<string, string>();
  /** Per phase, each part's longest time among its jobs (JobParts): `images-download;dur=…` after the phases. */
  private readonly parts = new Map<string, Map<string, number>>();

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

  /** The parts a job of `phase` marked: each kept when it is that part's longest in the phase so far. */
  jobParts(phase: string, parts: JobParts): void {
    const kept = this.parts.get(phase) ?? new Map<string, number>();
    for (const [part, ms] of Object.entries(validParts(parts) ?? {})) kept.set(part, Math.max(kept.get(part) ?? 0, ms));
    this.parts.set(phase, kept);
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
   * `fetch;dur=12.3, extract;dur=4.0, jobs;dur=60.2, subfetch;dur=1.1, images;dur=48.9, content;dur=23.5,
   * images-download;dur=18.2, images-render;dur=26.0, images-store;dur=3.1, total;dur=77.9`: the phases of
   * `order` always, then those that ran, then each phase's parts in name order (JobParts: each one's longest time among its jobs).
   */
  header(order: string[] = ['fetch', 'extract', 'jobs']): string {
    const ran = [...this.spans.keys()].filter((p) => !order.includes(p));
    const known = PHASE_ORDER.filter((p) => ran.includes(p));
    const phases = [...order, ...known, ...ran.filter((p) => !known.includes(p))];
    const parts = phases.map((p) => `${p};dur=${this.duration(p).toFixed(1)}`);
    // Each part's longest time among the phase's jobs (the image jobs' download, render, store).
    for (const p of phases) {
      const marked = [...(this.parts.get(p) ?? [])].sort((a, b) => a[0].localeCompare(b[0]));
      for (const [part, ms] of marked) parts.push(`${p}-${part};dur=${ms.toFixed(1)}`);
    }
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
        // A job parked until the process is idle (RunOptions.idleKey) did not run for this request.
        if (phase && outcome && (outcome.ok || outcome.error !== PARKED)) timer.record(phase, submitted, submitted + outcome.ms);
        if (phase && outcome?.ok && outcome.parts) timer.jobParts(phase, outcome.parts);
      }
      return outcomes;
    },
  };
}
