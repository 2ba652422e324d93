/**
 * The gate's give-up time, on an injected clock: a task whose start would come too late gives up
 * at once instead of running late, and its slot goes to the next task still in time.
 */
import { ConcurrencyGate, TooLateToStart } from '../../lib/jobs/concurrency-gate';

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
