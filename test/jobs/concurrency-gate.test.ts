/**
 * The gate's give-up time, on an injected clock: a task whose start would come too late gives up
 * at once instead of running late, and its slot goes to the next task still in time.
 */
import { ConcurrencyGate, PriorityGate, TooLateToStart } from '../../lib/jobs/concurrency-gate';

/** A task that runs until `release()` is called. */
function held() {
  let release = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { release, fn: () => done };
}

test('a task handed a slot after its give-up time is refused, never run, and the slot goes to the next in time', async () => {
  let now = 1_000;
  const gate = new ConcurrencyGate(1, Number.POSITIVE_INFINITY, undefined, () => now);
  const a = held();
  const running = gate.run(a.fn);
  const ran: string[] = [];
  // No timers here: the give-up times are far, so only the hand-over decides.
  const b = gate.run(async () => void ran.push('b'), 1_000_000);
  const c = gate.run(async () => void ran.push('c'), 1_000_000);
  expect(gate.waiting).toBe(2);
  now = 1_000_001; // b's and c's time has passed while a ran
  const d = gate.run(async () => void ran.push('d'), Number.POSITIVE_INFINITY);
  a.release();
  await running;
  await expect(b).rejects.toBeInstanceOf(TooLateToStart);
  await expect(c).rejects.toThrow('not started: its deadline could no longer be met');
  await d;
  expect(ran).toEqual(['d']);
  expect({ gaveUp: gate.gaveUp, inFlight: gate.inFlight, waiting: gate.waiting }).toEqual({ gaveUp: 2, inFlight: 0, waiting: 0 });
});

test('a task whose give-up time has come before it asks is refused at once, even with a free slot', async () => {
  const gate = new ConcurrencyGate(2, Number.POSITIVE_INFINITY, undefined, () => 5_000);
  let ran = false;
  await expect(
    gate.run(async () => {
      ran = true;
    }, 5_000),
  ).rejects.toBeInstanceOf(TooLateToStart);
  expect(ran).toBe(false);
  expect(gate.inFlight).toBe(0);
});

describe('on fake timers', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a waiting task leaves the queue at its give-up time, while the slot is still held: the tasks behind it move up', async () => {
    const gate = new ConcurrencyGate(1);
    const a = held();
    const running = gate.run(a.fn);
    const b = gate.run(async () => 'b', Date.now() + 200);
    const outcome = b.then(
      () => 'ran',
      (err: Error) => err.name,
    );
    const c = gate.run(async () => 'c', Date.now() + 10_000);
    await jest.advanceTimersByTimeAsync(200);
    expect(await outcome).toBe('TooLateToStart');
    expect(gate.waiting).toBe(1); // c only
    a.release();
    await running;
    expect(await c).toBe('c');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('PriorityGate.whenCardsIdle', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    return { promise, resolve };
  };
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(() => {
      done = true;
    });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    return done;
  };

  test('at once when no card job runs or waits; else once the last card job ends (an extra running does not count)', async () => {
    const gate = new PriorityGate(2);
    await expect(settled(gate.whenCardsIdle(Date.now() + 60_000))).resolves.toBe(true);
    const extra = deferred();
    const extraJob = gate.run('extra', () => extra.promise);
    await expect(settled(gate.whenCardsIdle(Date.now() + 60_000))).resolves.toBe(true);
    const a = deferred();
    const b = deferred();
    const c = deferred();
    const jobs = [gate.run('card', () => a.promise), gate.run('card', () => b.promise), gate.run('card', () => c.promise)];
    const idle = gate.whenCardsIdle(Date.now() + 60_000);
    a.resolve();
    await expect(settled(idle)).resolves.toBe(false);
    b.resolve();
    // The third card job (it waited for a slot) still runs.
    await expect(settled(idle)).resolves.toBe(false);
    c.resolve();
    await Promise.all(jobs);
    await expect(settled(idle)).resolves.toBe(true);
    extra.resolve();
    await extraJob;
  });

  test('at `until` or on abort, whatever the card jobs do', async () => {
    jest.useFakeTimers();
    try {
      const gate = new PriorityGate(1);
      const card = deferred();
      const job = gate.run('card', () => card.promise);
      const byTime = gate.whenCardsIdle(Date.now() + 500);
      await jest.advanceTimersByTimeAsync(499);
      await expect(settled(byTime)).resolves.toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await expect(settled(byTime)).resolves.toBe(true);
      const stop = new AbortController();
      const byAbort = gate.whenCardsIdle(Date.now() + 60_000, stop.signal);
      await expect(settled(byAbort)).resolves.toBe(false);
      stop.abort();
      await expect(settled(byAbort)).resolves.toBe(true);
      card.resolve();
      await job;
    } finally {
      jest.useRealTimers();
    }
  });
});
