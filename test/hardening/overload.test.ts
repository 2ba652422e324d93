import { BUDGET_MARGIN_MS } from '../../lib/budget';
import { MIN_PREVIEW_MS, OverloadedError, PreviewGate } from '../../lib/http/overload';
import { arrivalBudgetMs } from '../../lib/http/preview-handler';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('at most maxActive run at once; up to maxQueued wait; the rest are refused at once', async () => {
  const gate = new PreviewGate(2, 3);
  let running = 0;
  let peak = 0;
  const job = async () => {
    running++;
    peak = Math.max(peak, running);
    await sleep(50);
    running--;
    return 'done';
  };
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => gate.run(job)));
  expect(peak).toBe(2);
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  expect(refused).toHaveLength(3);
  for (const r of refused) {
    expect(r.reason).toBeInstanceOf(OverloadedError);
    expect(r.reason).toMatchObject({ status: 503, errorCode: 'OVERLOADED' });
  }
  expect(gate.rejected).toBe(3);
  expect(gate.inFlight).toBe(0);
  expect(gate.waiting).toBe(0);
});

test('a failing job frees its slot', async () => {
  const gate = new PreviewGate(1, 0);
  await expect(
    gate.run(async () => {
      throw new Error('x');
    }),
  ).rejects.toThrow('x');
  await expect(gate.run(async () => 1)).resolves.toBe(1);
});

/** A clock the test moves: `advance` fires the timers that come due, in order. */
function manualClock() {
  let t = 0;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => t,
    setTimer(fn: () => void, ms: number) {
      const timer = { at: t + ms, fn };
      timers.push(timer);
      return () => {
        timers = timers.filter((x) => x !== timer);
      };
    },
    async advance(ms: number) {
      t += ms;
      const due = timers.filter((x) => x.at <= t).sort((a, b) => a.at - b.at);
      timers = timers.filter((x) => x.at > t);
      for (const x of due) x.fn();
      await new Promise((r) => setImmediate(r));
    },
  };
}

/** A preview that runs until the test ends it. */
function held() {
  let end: () => void = () => {};
  const done = new Promise<void>((r) => {
    end = r;
  });
  return { fn: () => done, end };
}

describe('the wait counts against the budget (an injected clock)', () => {
  test('a request still queued when its budget could no longer cover a preview is refused then, and leaves the queue', async () => {
    const clock = manualClock();
    const gate = new PreviewGate(1, 10, clock);
    const first = held();
    const running = gate.admit(first.fn, 25_000);
    const queued = gate.admit(async () => 'ran', 5_000);
    const settled = queued.then(
      () => 'ran',
      (e) => e,
    );
    expect(gate.waiting).toBe(1);
    await clock.advance(5_000 - MIN_PREVIEW_MS - 1);
    expect(gate.waiting).toBe(1);
    await clock.advance(1);
    expect(await settled).toBeInstanceOf(OverloadedError);
    expect(gate.waiting).toBe(0);
    expect(gate.rejected).toBe(1);
    first.end();
    await running;
    expect(gate.inFlight).toBe(0);
  });

  test('a queue expected to take longer than the budget allows: refused at once', async () => {
    const clock = manualClock();
    const gate = new PreviewGate(1, 10, clock);
    // One preview took 4 s: a slot frees about every 4 s.
    const took = held();
    const first = gate.admit(took.fn);
    await clock.advance(4_000);
    took.end();
    await first;
    expect(gate.expectedWaitMs()).toBe(0);
    const busy = held();
    const running = gate.admit(busy.fn, 25_000);
    expect(gate.expectedWaitMs()).toBe(4_000);
    // 5 s of budget leaves 3 s to wait: 4 s expected is too long, at once.
    await expect(gate.admit(async () => 'ran', 5_000)).rejects.toBeInstanceOf(OverloadedError);
    expect(gate.waiting).toBe(0);
    // 10 s of budget leaves 8 s: it waits.
    const waits = gate.admit(async (waitedMs) => waitedMs, 10_000);
    expect(gate.waiting).toBe(1);
    await clock.advance(1_500);
    busy.end();
    await running;
    // Admitted late, it is told how long it waited: its budget is what is left.
    expect(await waits).toBe(1_500);
  });

  test('before any preview has ended, one is taken to last half the budget: a cold burst fills only what that allows', async () => {
    const clock = manualClock();
    const gate = new PreviewGate(1, 10, clock);
    const busy = held();
    const running = gate.admit(busy.fn, 25_000);
    // 12.5 s expected for the first waiter: within its 23 s; 25 s for the second: refused at once.
    const first = gate.admit(async () => 'ran', 25_000);
    await expect(gate.admit(async () => 'ran', 25_000)).rejects.toBeInstanceOf(OverloadedError);
    expect(gate.waiting).toBe(1);
    busy.end();
    await running;
    expect(await first).toBe('ran');
  });

  test("a request's budget on arrival: the configured one, within what is left of the invocation less the margin", () => {
    expect(arrivalBudgetMs({ requestBudgetMs: 25_000 }, { getRemainingTimeInMillis: () => 29_000 })).toBe(25_000);
    expect(arrivalBudgetMs({ requestBudgetMs: 25_000 }, { getRemainingTimeInMillis: () => 10_000 })).toBe(10_000 - BUDGET_MARGIN_MS);
    expect(arrivalBudgetMs({ requestBudgetMs: 25_000 }, undefined)).toBe(25_000);
  });
});
