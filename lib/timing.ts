/** Phase timings of one request, reported in the Server-Timing header. */
export class PhaseTimer {
  private readonly started = performance.now();
  private readonly phases = new Map<string, number>();

  async time<T>(phase: string, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.phases.set(phase, (this.phases.get(phase) ?? 0) + performance.now() - t0);
    }
  }

  /** `fetch;dur=12.3, extract;dur=4.0, jobs;dur=0.0, total;dur=17.9` */
  header(order: string[] = ['fetch', 'extract', 'jobs']): string {
    const parts = order.map((p) => `${p};dur=${(this.phases.get(p) ?? 0).toFixed(1)}`);
    for (const [p, d] of this.phases) if (!order.includes(p)) parts.push(`${p};dur=${d.toFixed(1)}`);
    parts.push(`total;dur=${(performance.now() - this.started).toFixed(1)}`);
    return parts.join(', ');
  }
}
