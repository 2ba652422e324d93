/**
 * A page's memory cap, kept from outside the browser. V8 stops a page's JavaScript heap itself
 * (`--js-flags=--max-old-space-size`, lib/browser/switches.ts), but what a page holds outside that
 * heap (typed arrays, a huge text node and its layout, images) has no cap in Chromium: a page of
 * typed arrays took 3.2 GB of private memory, and a 200 MB text node took Chromium to 4.5 GB
 * (`npm run bench -- browser-caps`, the table in docs/architecture.md).
 *
 * While pages are loading, the browser's processes are listed every POLL_MS (50 ms) (the DevTools
 * `SystemInfo.getProcessInfo`, answered by the browser process even while a renderer loops) and
 * each renderer's private memory is read from /proc (`RssAnon`: what its page allocated, not the
 * libraries it shares). A renderer past the page cap is killed (SIGKILL): Chromium reports the
 * renderer gone, the page's `crash` event fails its load (lib/browser/page-watch.ts says why, from
 * `recentKill`), and the browser and the other pages go on. Every browser context has renderers of
 * its own, so a kill takes no other preview's page. Where the whole browser is one process (the
 * AWS layer's `--single-process`, one page at a time) there is no renderer to kill: past Chromium's
 * own memory plus its lanes' pages, the browser itself is killed, and the next job launches a new one.
 *
 * Without /proc (not Linux) nothing is read and only the heap cap holds.
 */
import { readFileSync } from 'node:fs';
import type { Browser, CDPSession } from 'playwright-core';

/**
 * How often the processes are read while pages load (a listing costs the browser under a
 * millisecond, and Node about 0.3 ms of CPU). A page that touches memory as fast as it can (about
 * 3 GB/s of typed arrays here) passes its cap by what it touches in that time and the kill's.
 */
const POLL_MS = 50;

export interface MemoryLimits {
  /** A renderer's private memory, at most (LINKPREVIEW_BROWSER_PAGE_MB). */
  pageMb: number;
  /** The one process of a single-process browser, at most. */
  singleProcessMb: number;
}

/** A process of the browser as sampled: its type (`browser`, `renderer`, `GPU`, a utility's service name), pid and private memory. */
export interface ProcessSample {
  type: string;
  pid: number;
  mb: number | undefined;
}

export interface MemoryKill {
  what: 'renderer' | 'browser';
  pid: number;
  mb: number;
  capMb: number;
  /** Date.now() at the kill. */
  at: number;
}

/** A process's private resident memory (RssAnon) in MB, or undefined when it cannot be read. */
export function privateMb(pid: number, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number | undefined {
  try {
    const kb = /^RssAnon:\s+(\d+)\s+kB/m.exec(read(`/proc/${pid}/status`))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * Which process is over its cap in a sample, or undefined: the first renderer past the page cap;
 * with no renderer process of its own (a single-process browser, which lists its renderer under its
 * own pid), the browser process past its cap.
 */
export function overCap(sample: readonly ProcessSample[], limits: MemoryLimits): Omit<MemoryKill, 'at'> | undefined {
  const browser = sample.find((p) => p.type === 'browser');
  // A single-process browser lists its in-process renderer under its own pid: that is no renderer to kill alone.
  const renderers = sample.filter((p) => p.type === 'renderer' && p.pid !== browser?.pid);
  if (renderers.length > 0) {
    const over = renderers.find((p) => (p.mb ?? 0) > limits.pageMb);
    return over && { what: 'renderer', pid: over.pid, mb: Math.round(over.mb ?? 0), capMb: limits.pageMb };
  }
  if (browser && (browser.mb ?? 0) > limits.singleProcessMb)
    return { what: 'browser', pid: browser.pid, mb: Math.round(browser.mb ?? 0), capMb: limits.singleProcessMb };
  return undefined;
}

let lastKill: MemoryKill | undefined;

/** The last kill for memory when it came at or after `since` (Date.now() ms), else undefined. */
export function recentKill(since: number): MemoryKill | undefined {
  return lastKill && lastKill.at >= since ? lastKill : undefined;
}

/**
 * Watches the memory of `browser`'s processes while `loading()` says pages are loading, and kills
 * what passes its cap. Stops when the browser disconnects, or when the returned function is called.
 */
export async function watchMemory(browser: Browser, limits: MemoryLimits, loading: () => boolean): Promise<() => void> {
  const cdp: CDPSession = await browser.newBrowserCDPSession();
  let busy = false;
  const tick = async () => {
    if (busy || !loading()) return;
    busy = true;
    try {
      const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
      const over = overCap(
        processInfo.map((p) => ({ type: p.type, pid: p.id, mb: privateMb(p.id) })),
        limits,
      );
      if (over) {
        lastKill = { ...over, at: Date.now() };
        process.kill(over.pid, 'SIGKILL');
      }
    } catch {
      /* the browser is closing, or the process is gone already */
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), POLL_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  browser.on('disconnected', stop);
  return stop;
}
