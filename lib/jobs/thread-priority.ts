/**
 * The CPU pool's threads run at the lowest scheduling priority (nice 19), the requests' own work
 * at the process's. What the pool runs is a page's content (Readability, the versions: the
 * `page-content` job), which no card waits for; what the card waits for (the extraction on the
 * event loop, sharp's resizes and encodes on libvips' threads) runs at the normal priority. On a
 * machine whose cores are all busy, the kernel then gives the pool only what the card's work
 * leaves, so the page versions never slow a record down; on an idle core the pool runs at full
 * speed (nice weighs threads against each other, it does not throttle an idle machine).
 *
 * Linux gives each thread its own nice value: `setpriority(PRIO_PROCESS, tid)` with the thread's
 * id (from /proc/thread-self) lowers this thread only, never the process. Lowering needs no
 * privilege. Elsewhere (no /proc: macOS) the threads keep the process's priority.
 */
import { readlinkSync } from 'node:fs';
import os from 'node:os';

/** The nice value the pool's threads take (the lowest priority there is). */
export const POOL_THREAD_NICE = 19;

/** Lowers the calling thread to POOL_THREAD_NICE; its thread id, or undefined where threads have no priority of their own. */
export function lowerThreadPriority(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return undefined;
    os.setPriority(tid, POOL_THREAD_NICE);
    return tid;
  } catch {
    return undefined;
  }
}
