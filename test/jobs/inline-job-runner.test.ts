/**
 * The inline runner on fake timers: what finished, and when on the fake clock, follows from the
 * jobs' delays, the concurrency and the deadline alone, whatever the machine's load. The
 * wall-clock figures are in `npm run bench` (test/bench/hostile.bench.ts).
 */
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import { IdleWork } from '../../lib/jobs/idle-work';
import { JOB_REGISTRY, withJobKind } from '../../lib/jobs/registry';
import { JOB_SPECS } from '../../lib/jobs/specs';
import { type Job, type JobOutcome, PARKED } from '../../lib/ports';
import { testConfig } from '../helpers/service';

const config = testConfig();
afterAll(() => config.cleanup());
const ctx = {
  fetch: async () => {
    throw new Error('no fetch');
  },
  blobs: {} as never,
  config,
};

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

/** A promise and whether (and with what) it has settled so far. */
function watch<T>(p: Promise<T>) {
  const w: { done: boolean; value?: T } = { done: false };
  void p.then((v) => {
    w.done = true;
    w.value = v;
  });
  return w;
}

test('runs jobs concurrently and returns every outcome by id', async () => {
  const runner = new InlineJobRunner(ctx as never, 4);
  const run = watch(
    runner.run(
      [
        { id: 'a', kind: 'echo', input: { value: 1, delayMs: 150 } },
        { id: 'b', kind: 'echo', input: { value: 2, delayMs: 150 } },
        { id: 'c', kind: 'echo', input: { value: 3, fail: true } },
      ],
      { requestId: 'r', deadline: Date.now() + 5000 },
    ),
  );
  await jest.advanceTimersByTimeAsync(149);
  expect(run.done).toBe(false);
  // Both 150 ms jobs are done 150 ms in: they ran side by side, not one after the other.
  await jest.advanceTimersByTimeAsync(1);
  expect(run.done).toBe(true);
  const out = run.value!;
  expect(out.get('a')).toMatchObject({ ok: true, result: { value: 1 } });
  expect(out.get('b')).toMatchObject({ ok: true, result: { value: 2 } });
  expect(out.get('c')).toMatchObject({ ok: false, error: 'echo job asked to fail' });
});

test('a job past the deadline is reported failed at the deadline, not when it finishes', async () => {
  const runner = new InlineJobRunner(ctx as never, 2);
  const run = watch(
    runner.run(
      [
        { id: 'fast', kind: 'echo', input: { value: 'x' } },
        { id: 'slow', kind: 'echo', input: { value: 'y', delayMs: 10_000 } },
      ],
      { requestId: 'r', deadline: Date.now() + 200 },
    ),
  );
  await jest.advanceTimersByTimeAsync(199);
  expect(run.done).toBe(false); // the fast job alone does not end the run
  await jest.advanceTimersByTimeAsync(1);
  // At the deadline, 9.8 s before the slow job would finish: it is left out, the fast one is in.
  expect(run.done).toBe(true);
  expect(run.value!.get('fast')).toMatchObject({ ok: true });
  expect(run.value!.get('slow')).toMatchObject({ ok: false, error: 'deadline exceeded' });
  // The slow job was told to stop: its timer is gone, nothing is left pending.
  expect(jest.getTimerCount()).toBe(0);
});

test('concurrency is bounded across calls', async () => {
  const runner = new InlineJobRunner(ctx as never, 1);
  const first = watch(runner.run([{ id: 'a', kind: 'echo', input: { value: 1, delayMs: 100 } }], { requestId: 'r1', deadline: Date.now() + 5000 }));
  const second = watch(runner.run([{ id: 'b', kind: 'echo', input: { value: 2, delayMs: 100 } }], { requestId: 'r2', deadline: Date.now() + 5000 }));
  await jest.advanceTimersByTimeAsync(100);
  // One slot: the second request's job waited for the first one's, so it is not done yet.
  expect([first.done, second.done]).toEqual([true, false]);
  await jest.advanceTimersByTimeAsync(100);
  expect([first.done, second.done]).toEqual([true, true]);
  expect((second.value as Map<string, JobOutcome>).get('b')).toMatchObject({ ok: true, result: { value: 2 } });
});

/** The echo kind as a browser job: it then runs on the browser's lane. */
const echoOnBrowser = withJobKind(JOB_REGISTRY, 'echo', { ...JOB_SPECS.echo, worker: 'browser' }, JOB_REGISTRY.handler('echo')!);

test("a kind with its own lane runs under that lane's limit, not the shared one", async () => {
  // One shared slot; echo runs on the browser's lane here, of two (as the local server gives browser jobs a lane).
  const runner = new InlineJobRunner(ctx as never, 1, { browser: 2 }, echoOnBrowser);
  const run = watch(
    runner.run(
      [
        { id: 'a', kind: 'echo', input: { value: 1, delayMs: 100 } },
        { id: 'b', kind: 'echo', input: { value: 2, delayMs: 100 } },
        { id: 'c', kind: 'echo', input: { value: 3, delayMs: 100 } },
      ],
      { requestId: 'r', deadline: Date.now() + 5000 },
    ),
  );
  await jest.advanceTimersByTimeAsync(100);
  // Two at a time: a and b are done at 100 ms, c waits for a slot of the lane.
  expect(run.done).toBe(false);
  await jest.advanceTimersByTimeAsync(100);
  expect(run.done).toBe(true);
  expect([...run.value!.values()].map((o) => o.ok)).toEqual([true, true, true]);
});

test('a job still waiting for its slot at its deadline never starts', async () => {
  const runner = new InlineJobRunner(ctx as never, 4, { browser: 1 }, echoOnBrowser);
  const first = watch(runner.run([{ id: 'a', kind: 'echo', input: { value: 1, delayMs: 300 } }], { requestId: 'r1', deadline: Date.now() + 5000 }));
  const queued = watch(runner.run([{ id: 'b', kind: 'echo', input: { value: 2, delayMs: 1000 } }], { requestId: 'r2', deadline: Date.now() + 100 }));
  await jest.advanceTimersByTimeAsync(100);
  expect(queued.value?.get('b')).toMatchObject({ ok: false, error: 'deadline exceeded' });
  await jest.advanceTimersByTimeAsync(200);
  expect(first.done).toBe(true);
  // The slot passed to b, whose deadline had gone: it returned at once, no 1 s echo was started.
  await jest.advanceTimersByTimeAsync(0);
  expect(jest.getTimerCount()).toBe(0);
});

/** The echo kind as a browser job that needs 1.5 s before its deadline to be worth starting, as a render does. */
const echoNeedingTime = withJobKind(JOB_REGISTRY, 'echo', { ...JOB_SPECS.echo, worker: 'browser', minRunMs: 1500 }, JOB_REGISTRY.handler('echo')!);

test('a browser job that can no longer meet its deadline gives up at once, before the deadline, and never starts', async () => {
  const runner = new InlineJobRunner(ctx as never, 4, { browser: 1 }, echoNeedingTime);
  const first = watch(runner.run([{ id: 'a', kind: 'echo', input: { value: 1, delayMs: 3000 } }], { requestId: 'r1', deadline: Date.now() + 10_000 }));
  // b waits behind a; it needs 1.5 s of its 2 s: it gives up 0.5 s in, not at its deadline.
  const queued = watch(runner.run([{ id: 'b', kind: 'echo', input: { value: 2, delayMs: 100 } }], { requestId: 'r2', deadline: Date.now() + 2000 }));
  // c has less than it needs from the start: refused at once.
  const late = watch(runner.run([{ id: 'c', kind: 'echo', input: { value: 3, delayMs: 100 } }], { requestId: 'r3', deadline: Date.now() + 1000 }));
  await jest.advanceTimersByTimeAsync(0);
  expect(late.value?.get('c')).toMatchObject({ ok: false, error: 'not started: its deadline could no longer be met' });
  expect(queued.done).toBe(false);
  await jest.advanceTimersByTimeAsync(500);
  expect(queued.value?.get('b')).toMatchObject({ ok: false, error: 'not started: its deadline could no longer be met' });
  expect(first.done).toBe(false);
  // a still holds the lane; the next job with time enough runs once a is done.
  const next = watch(runner.run([{ id: 'd', kind: 'echo', input: { value: 4, delayMs: 100 } }], { requestId: 'r4', deadline: Date.now() + 10_000 }));
  await jest.advanceTimersByTimeAsync(2600);
  expect(first.done).toBe(true);
  expect(next.value?.get('d')).toMatchObject({ ok: true, result: { value: 4 } });
});

/** The echo kind as an extra (the page versions' priority), beside the card's echo. */
const withExtraEcho = withJobKind(JOB_REGISTRY, 'slow-extra', { ...JOB_SPECS.echo, priority: 'extra' }, JOB_REGISTRY.handler('echo')!);

describe('priorities: the card first', () => {
  test('a backlog of slow extras never delays a card job: extras hold at most half of the slots', async () => {
    const runner = new InlineJobRunner(ctx as never, 4, {}, withExtraEcho);
    const extras = Array.from({ length: 6 }, (_, i) => ({ id: `x${i}`, kind: 'slow-extra', input: { value: i, delayMs: 1000 } }) as never as Job);
    const backlog = watch(runner.run(extras, { requestId: 'r-extras', deadline: Date.now() + 10_000 }));
    const card = watch(
      runner.run([{ id: 'image', kind: 'echo', input: { value: 'card', delayMs: 10 } }], { requestId: 'r-card', deadline: Date.now() + 10_000 }),
    );
    await jest.advanceTimersByTimeAsync(10);
    // The card's job ran at once, beside the two extras that run.
    expect(card.value?.get('image')).toMatchObject({ ok: true, result: { value: 'card' } });
    // Two extras at a time (half of 4): six take three rounds of 1 s.
    await jest.advanceTimersByTimeAsync(1990);
    expect(backlog.done).toBe(false);
    await jest.advanceTimersByTimeAsync(1000);
    expect(backlog.done).toBe(true);
  });

  test('a freed slot goes to a waiting card job before the extras that waited longer', async () => {
    // Two slots, one for extras: two card jobs fill them, an extra and then a card job wait.
    const runner = new InlineJobRunner(ctx as never, 2, {}, withExtraEcho);
    const deadline = Date.now() + 10_000;
    const first = watch(
      runner.run(
        [
          { id: 'c1', kind: 'echo', input: { value: 1, delayMs: 100 } },
          { id: 'c2', kind: 'echo', input: { value: 2, delayMs: 300 } },
        ],
        { requestId: 'r1', deadline },
      ),
    );
    const extra = watch(runner.run([{ id: 'x', kind: 'slow-extra', input: { value: 'x', delayMs: 100 } } as never as Job], { requestId: 'r2', deadline }));
    const late = watch(runner.run([{ id: 'c3', kind: 'echo', input: { value: 3, delayMs: 100 } }], { requestId: 'r3', deadline }));
    // c1 frees its slot at 100 ms: c3 takes it, the extra waits on.
    await jest.advanceTimersByTimeAsync(200);
    expect(late.done).toBe(true);
    expect(extra.done).toBe(false);
    // c3 is done at 200 ms: the extra starts then and is done at 300 ms.
    await jest.advanceTimersByTimeAsync(100);
    expect(extra.done).toBe(true);
    expect(first.done).toBe(true);
  });
});

const markingEcho = withJobKind(JOB_REGISTRY, 'marking', { ...JOB_SPECS.echo }, async (input: unknown, c) => {
  c.mark?.('download', 3);
  c.mark?.('render', 4);
  c.mark?.('download', 2);
  return input as never;
});

test("a job's marked parts come back with its outcome, summed per part; a job that marks none has no parts", async () => {
  const runner = new InlineJobRunner(ctx as never, 2, {}, markingEcho);
  const out = await runner.run(
    [
      { id: 'm', kind: 'marking' as never, input: { value: 1 } as never },
      { id: 'e', kind: 'echo', input: { value: 2 } },
    ],
    { requestId: 'r', deadline: Date.now() + 5000 },
  );
  expect(out.get('m')).toMatchObject({ ok: true, parts: { download: 5, render: 4 } });
  expect(out.get('e')).not.toHaveProperty('parts');
});

/** A job that records when it ran, with which deadline in its input, and defers work of its own. */
const seen: { input: { deadline?: number }; deferredDone: boolean }[] = [];
const deferring = withJobKind(JOB_REGISTRY, 'deferring', { ...JOB_SPECS.echo, priority: 'extra' }, async (input: unknown, c) => {
  const entry = { input: input as { deadline?: number }, deferredDone: false };
  seen.push(entry);
  c.defer?.(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      entry.deferredDone = true;
    },
    { key: 'page-1' },
  );
  return input as never;
});

describe('jobs the caller goes without for now (RunOptions.idleKey), with idle work', () => {
  test('parked: PARKED at once; asked for by the key, the job runs with the time it had, and the piece ends with its deferred work', async () => {
    seen.length = 0;
    const idle = new IdleWork({ idleMs: 250, maxParked: 10 });
    const runner = new InlineJobRunner({ ...ctx, idle } as never, 2, {}, deferring);
    const busy = idle.busy();
    const submitted = Date.now();
    const out = await runner.run([{ id: 'c', kind: 'deferring' as never, input: { value: 1, deadline: submitted + 5000 } as never }], {
      requestId: 'r',
      deadline: submitted + 5000,
      idleKey: 'page-1',
    });
    expect(out.get('c')).toMatchObject({ ok: false, error: PARKED });
    await jest.advanceTimersByTimeAsync(3000);
    expect(seen).toEqual([]); // a preview in flight: not run
    const wanted = watch(idle.want('page-1') as Promise<void>);
    await jest.advanceTimersByTimeAsync(0);
    // Run 3 s after it was submitted: its input's deadline moved by as much.
    expect(seen).toHaveLength(1);
    expect(seen[0].input.deadline).toBe(submitted + 8000);
    expect(wanted.done).toBe(false);
    await jest.advanceTimersByTimeAsync(100);
    expect(seen[0].deferredDone).toBe(true);
    expect(wanted.done).toBe(true);
    busy();
  });

  test('without idle work, or without a key, a job runs as usual', async () => {
    seen.length = 0;
    const plain = new InlineJobRunner(ctx as never, 2, {}, deferring);
    const out = await plain.run([{ id: 'c', kind: 'deferring' as never, input: { value: 2 } as never }], {
      requestId: 'r',
      deadline: Date.now() + 5000,
      idleKey: 'page-1',
    });
    expect(out.get('c')).toMatchObject({ ok: true, result: { value: 2 } });
    const idle = new IdleWork({ idleMs: 250, maxParked: 10 });
    const withIdle = new InlineJobRunner({ ...ctx, idle } as never, 2, {}, deferring);
    const out2 = await withIdle.run([{ id: 'd', kind: 'deferring' as never, input: { value: 3 } as never }], { requestId: 'r', deadline: Date.now() + 5000 });
    expect(out2.get('d')).toMatchObject({ ok: true, result: { value: 3 } });
    // Its keyed deferred work is parked (the versions' build of a read made at once).
    expect(idle.waiting).toBe(1);
  });
});
