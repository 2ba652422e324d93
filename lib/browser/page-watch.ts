/**
 * A page's CPU cap, and its crash, watched while it loads (`watchPage`), and what stops its
 * scripts once any cap is reached (`stopScripts`).
 *
 * The CPU: every POLL_MS the page's DevTools session is asked for `Performance.getMetrics`, whose
 * `ProcessTime` is the CPU time of the page's renderer process (its main thread, workers and
 * compositor). Chromium answers it even while a script loops forever (it is served between V8's
 * interrupts, not by a task). Each browser context has renderers of its own, so that time is the
 * page's; a renderer replaced by a cross-site navigation counts from zero (`CpuMeter`). A page
 * whose renderer has used more than its cap (LINKPREVIEW_BROWSER_PAGE_CPU_MS), or that does not
 * answer for that long, is stopped: its load fails with that reason, and the lane is free for the
 * next page instead of waiting for the render's whole time cap.
 *
 * The crash: a renderer that V8 stopped at its heap cap, or that the memory watch killed
 * (lib/browser/memory-watch.ts), fires the page's `crash` event, which fails the load at once; so
 * does the browser's end (a single-process browser the memory watch killed, or that V8 stopped).
 */
import { closedHere } from './browser.js';
import { recentKill } from './memory-watch.js';
import { type PageLanes, pageLanes } from './page-lanes.js';
import type { Tab } from './tab.js';

/** How often the page's CPU time is read. A page passes its cap by at most about this much (and the time its scripts take to stop). */
const POLL_MS = 200;

/** The reason of a page stopped at its CPU cap. */
export const cpuCapReason = (capMs: number) => `the page passed its CPU cap (${capMs} ms): its scripts were stopped`;
/** The CPU watch's other stop: the renderer did not answer its poll for the cap's length (too busy to say how busy). */
export const unresponsiveReason = (capMs: number) => `the page stopped answering for ${capMs} ms: its scripts were stopped`;

/** The CPU time of a page's renderers, from successive readings of a renderer's cumulative `ProcessTime` (seconds). */
export class CpuMeter {
  private usedS = 0;
  private last: number | undefined;

  /** Adds a reading; returns the CPU time used since the first one, in ms. */
  add(processTimeS: number): number {
    if (this.last !== undefined) this.usedS += processTimeS >= this.last ? processTimeS - this.last : processTimeS;
    this.last = processTimeS;
    return this.usedS * 1000;
  }
}

/** Why the page's renderer died: the memory watch's kill when it came since `since`, else a crash (V8's heap cap, or the machine's memory). */
export function crashReason(since: number): string {
  const kill = recentKill(since);
  if (kill?.what === 'renderer') return `the page passed its memory cap (${kill.mb} MB of ${kill.capMb} MB): its renderer was stopped`;
  if (kill) return `the browser passed its memory cap (${kill.mb} MB of ${kill.capMb} MB): it was stopped`;
  return "the page crashed (its renderer died: the JavaScript heap cap, or the machine's memory)";
}

/**
 * Watches `tab` while it loads: calls `stop` with the reason once the page passes its CPU cap, stops
 * answering for as long, crashes, or gives its lane to a waiting page (lib/browser/page-lanes.ts).
 * Returns the function that ends the watch.
 */
export async function watchPage(tab: Tab, cpuCapMs: number, stop: (reason: string) => void, lanes: PageLanes = pageLanes): Promise<() => void> {
  const since = Date.now();
  const meter = new CpuMeter();
  const lane = lanes.enter(stop);
  let askedAt: number | undefined;
  // The renderer died, or the whole browser (a single-process one the memory watch killed). A
  // browser this process closes itself (closeBrowser under a load) is no page's doing: the load
  // fails as the browser's, and is tried once more on a fresh one (lib/browser/screenshot.ts).
  const onCrash = () => {
    if (!closedHere(tab.browser)) stop(crashReason(since));
  };
  tab.page.on('crash', onCrash);
  tab.browser.on('disconnected', onCrash);
  await tab.cdp.send('Performance.enable');
  const tick = async () => {
    const now = performance.now();
    if (askedAt !== undefined) {
      if (now - askedAt > cpuCapMs) stop(unresponsiveReason(cpuCapMs));
      return;
    }
    askedAt = now;
    try {
      const { metrics } = await tab.cdp.send('Performance.getMetrics');
      const processTime = metrics.find((m) => m.name === 'ProcessTime')?.value;
      if (processTime !== undefined) {
        const used = meter.add(processTime);
        if (used > cpuCapMs) stop(cpuCapReason(cpuCapMs));
        else lanes.used(lane.page, used);
      }
    } catch {
      /* the page is closing */
    } finally {
      askedAt = undefined;
    }
  };
  // The first reading at once: what the renderer used before the load is not the page's.
  void tick();
  const timer = setInterval(() => void tick(), POLL_MS);
  return () => {
    lane.leave();
    clearInterval(timer);
    tab.page.off('crash', onCrash);
    tab.browser.off('disconnected', onCrash);
  };
}

/**
 * Stops what the page's scripts are doing, before its tab is closed: the running script is
 * terminated (V8 interrupts it, even in an endless loop), no script runs after it, and the page
 * stops loading. Each step is sent without waiting; the tab's close follows.
 */
export function stopScripts(tab: Tab): void {
  void tab.cdp.send('Runtime.terminateExecution').catch(() => {});
  void tab.cdp.send('Emulation.setScriptExecutionDisabled', { value: true }).catch(() => {});
  void tab.cdp.send('Page.stopLoading').catch(() => {});
}
