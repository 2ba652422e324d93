/**
 * A fair browser: a page that has had its share of the CPU gives its lane to a page waiting for one.
 *
 * Each page loads in a lane of its own (lib/browser/lanes.ts), and the lanes are many more than
 * the cores, so pages that load together share the CPU: a real page beside pages that loop forever
 * is slowed, not stopped behind them. When every lane is taken and pages wait, the page that has
 * used the most CPU, once past `YIELD_MIN_CPU_MS`, is stopped (`yieldReason`) and its lane goes to
 * the first page waiting: one page stopped per page waiting, never more. A page that loops forever
 * uses CPU as fast as its share allows, so it is the first to go; a page that renders in a few
 * hundred ms is done before it is ever the greediest past the minimum. Without pages waiting,
 * nothing is stopped but by the page's own caps (CPU, memory, time). Slowing a greedy page instead
 * (DevTools' CPU throttling, 16 times) was tried and changed nothing measurable: 8.5–9.0 s for the
 * real shell beside 8 loopers, with it or without.
 *
 * The pages are those whose CPU watch runs (lib/browser/page-watch.ts registers them); the demand
 * is the job runner's queue for the browser's lanes (functions/wiring.ts wires `setPageDemand`).
 * On AWS the browser worker takes one page at a time and its instances are the lanes: nothing
 * waits in a process there, and nothing yields.
 */

/** The CPU a page may use before it may be asked to give its lane to a waiting page: a shell's render takes a few hundred ms. */
export const YIELD_MIN_CPU_MS = 500;

/** The reason of a page stopped to give its lane to a waiting one. */
export const yieldReason = (cpuMs: number) =>
  `the page gave its lane to a page waiting for one, after ${Math.round(cpuMs)} ms of CPU: its scripts were stopped`;

/** A page loading now: its CPU so far, and how it is stopped. */
export interface LoadingPage {
  cpuMs: number;
  /** Asked to yield: its stop is under way. */
  yielded: boolean;
  stop(reason: string): void;
}

export class PageLanes {
  private readonly loading = new Set<LoadingPage>();
  private demand: () => number = () => 0;

  constructor(private readonly minCpuMs: number = YIELD_MIN_CPU_MS) {}

  /** How many page loads wait for a lane (the job runner's queue for the browser). */
  setDemand(demand: () => number): void {
    this.demand = demand;
  }

  /** A page whose load is watched: it may be asked to yield (`stop(yieldReason)`) until `leave()`. */
  enter(stop: (reason: string) => void): { page: LoadingPage; leave: () => void } {
    const page: LoadingPage = { cpuMs: 0, yielded: false, stop };
    this.loading.add(page);
    return { page, leave: () => this.loading.delete(page) };
  }

  /** A page's CPU reading: while pages wait and fewer are yielding than wait, the greediest past the minimum yields. */
  used(page: LoadingPage, cpuMs: number): void {
    page.cpuMs = cpuMs;
    this.reconsider();
  }

  /** Stops the greediest pages past the minimum, one per waiting page not yet given a lane by a page stopping. */
  reconsider(): void {
    const waiting = this.demand();
    if (waiting <= 0) return;
    let yielding = 0;
    for (const p of this.loading) if (p.yielded) yielding++;
    while (yielding < waiting) {
      let greediest: LoadingPage | undefined;
      for (const p of this.loading) if (!p.yielded && p.cpuMs >= this.minCpuMs && (!greediest || p.cpuMs > greediest.cpuMs)) greediest = p;
      if (!greediest) return;
      greediest.yielded = true;
      yielding++;
      greediest.stop(yieldReason(greediest.cpuMs));
    }
  }
}

/** This process's page lanes (the local server's browser). */
export const pageLanes = new PageLanes();

/** Wires the demand: how many browser jobs wait for a lane (functions/wiring.ts). */
export function setPageDemand(demand: () => number): void {
  pageLanes.setDemand(demand);
}
