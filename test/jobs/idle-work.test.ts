/**
 * Work parked until the process is idle (lib/jobs/idle-work.ts), with the idle timer driven by
 * hand: nothing parked starts while a preview is in flight or before the idle time has passed;
 * it starts at once when asked for by its key, when too many are parked, and when drained.
 */
import { type IdleTimer, IdleWork } from '../../lib/jobs/idle-work';

/** A timer the test fires itself: the armed callbacks with their delays. */
function handTimer(): { timer: IdleTimer; armed: { fn: () => void; ms: number }[]; fire: () => void } {
  const armed: { fn: () => void; ms: number }[] = [];
  const timer: IdleTimer = (fn, ms) => {
    const entry = { fn, ms };
    armed.push(entry);
    return () => {
      const at = armed.indexOf(entry);
      if (at >= 0) armed.splice(at, 1);
    };
  };
  const fire = () => {
    const due = armed.splice(0);
    for (const e of due) e.fn();
  };
  return { timer, armed, fire };
}

/** A piece of work that records its start and ends when the test says so. */
function piece(log: string[], name: string): { work: () => Promise<void>; end: () => void } {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  return {
    work: async () => {
      log.push(name);
      await ended;
    },
    end,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('parked work starts only once no preview has been in flight for the idle time, oldest first, one at a time', async () => {
  const { timer, armed, fire } = handTimer();
  const idle = new IdleWork({ idleMs: 250, maxParked: 10, timer });
  const log: string[] = [];
  const busy = idle.busy();
  const a = piece(log, 'a');
  const b = piece(log, 'b');
  idle.park('a', a.work);
  idle.park('b', b.work);
  idle.park('a', piece(log, 'a again').work); // a key parked already: nothing more
  expect(armed).toEqual([]); // a preview in flight: no idle timer
  busy();
  expect(armed.map((e) => e.ms)).toEqual([250]);
  const second = idle.busy(); // a preview before the timer fired: disarmed
  expect(armed).toEqual([]);
  second();
  fire();
  await settle();
  expect(log).toEqual(['a']);
  expect(idle.waiting).toBe(1);
  // A preview arrives while `a` runs: `b` waits for the next idle time.
  const third = idle.busy();
  a.end();
  await settle();
  expect(log).toEqual(['a']);
  third();
  fire();
  await settle();
  expect(log).toEqual(['a', 'b']);
  b.end();
  await settle();
  expect(idle.waiting).toBe(0);
  expect(armed).toEqual([]);
});

test('wanted by its key, parked work starts at once, busy or not; asked again, the same run; unknown keys: undefined', async () => {
  const { timer } = handTimer();
  const idle = new IdleWork({ idleMs: 250, maxParked: 10, timer });
  const log: string[] = [];
  const release = idle.busy();
  const a = piece(log, 'a');
  idle.park('a', a.work);
  const wanted = idle.want('a');
  expect(wanted).toBeDefined();
  await settle();
  expect(log).toEqual(['a']);
  expect(idle.want('a')).toBe(wanted);
  let done = false;
  void wanted?.then(() => {
    done = true;
  });
  await settle();
  expect(done).toBe(false);
  a.end();
  await wanted;
  expect(idle.want('a')).toBeUndefined();
  expect(idle.want('never')).toBeUndefined();
  release();
});

test('past maxParked the oldest starts at once; a failure of the work is its own (want still resolves)', async () => {
  const { timer } = handTimer();
  const idle = new IdleWork({ idleMs: 250, maxParked: 2, timer });
  const log: string[] = [];
  const release = idle.busy();
  idle.park('a', async () => {
    log.push('a');
    throw new Error('boom');
  });
  idle.park('b', piece(log, 'b').work);
  await settle();
  expect(log).toEqual([]);
  idle.park('c', piece(log, 'c').work);
  await settle();
  expect(log).toEqual(['a']);
  expect(idle.waiting).toBe(2);
  release();
});

test('drain starts everything parked and waits for it, at most its cap', async () => {
  const { timer, fire } = handTimer();
  const idle = new IdleWork({ idleMs: 250, maxParked: 10, timer });
  const log: string[] = [];
  idle.busy();
  const a = piece(log, 'a');
  const b = piece(log, 'b');
  idle.park('a', a.work);
  idle.park('b', b.work);
  let drained = false;
  const draining = idle.drain(5000).then(() => {
    drained = true;
  });
  await settle();
  expect(log).toEqual(['a', 'b']);
  a.end();
  await settle();
  expect(drained).toBe(false);
  b.end();
  await draining;
  expect(drained).toBe(true);

  // One that never ends: the cap (fired by hand) ends the wait.
  idle.park('stuck', piece(log, 'stuck').work);
  const capped = idle.drain(5000);
  await settle();
  fire();
  await capped;
  expect(log).toEqual(['a', 'b', 'stuck']);
});
