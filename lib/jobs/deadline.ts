/**
 * A job's deadline, as both runners keep it (the in-process runner, lib/adapters/local, and the
 * worker Lambda, lib/adapters/aws/sqs-job-worker.ts): at the deadline the job's signal aborts and
 * its outcome is DEADLINE_EXCEEDED, whether or not its code has stopped by then.
 */

/** The error of a job that was still running (or still waiting for its turn) at its deadline. */
export const DEADLINE_EXCEEDED = 'deadline exceeded';

export type DeadlineOutcome<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Runs `work` with a signal that aborts at `deadline` (epoch ms). Settles with its value or its
 * error's message, or with DEADLINE_EXCEEDED at the deadline, whichever comes first: a job that
 * does not heed the signal no longer holds its caller. `waitForWork`: the outcome is the work's
 * own once it has ended (DEADLINE_EXCEEDED when it failed after the abort).
 */
export async function untilDeadline<T>(
  deadline: number,
  work: (signal: AbortSignal) => Promise<T>,
  options: { now?: () => number; waitForWork?: boolean } = {},
): Promise<DeadlineOutcome<T>> {
  const now = options.now ?? Date.now;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<DeadlineOutcome<T>>((resolve) => {
    timer = setTimeout(
      () => {
        controller.abort();
        resolve({ ok: false, error: DEADLINE_EXCEEDED });
      },
      Math.max(0, deadline - now()),
    );
  });
  const run = (async (): Promise<DeadlineOutcome<T>> => {
    if (controller.signal.aborted) return { ok: false, error: DEADLINE_EXCEEDED };
    try {
      return { ok: true, value: await work(controller.signal) };
    } catch (err) {
      // A job stopped by its deadline says so, whatever its code threw on the abort.
      return { ok: false, error: controller.signal.aborted ? DEADLINE_EXCEEDED : (err as Error).message || 'job failed' };
    }
  })();
  try {
    // A worker Lambda must not return while its job still runs (the runtime would freeze it mid-way).
    return await (options.waitForWork ? run : Promise.race([run, late]));
  } finally {
    clearTimeout(timer);
  }
}
