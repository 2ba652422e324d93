/**
 * The browser's lanes (lib/browser/fair-lanes.ts) without a browser: which waiting load gets the
 * next lane, and with what CPU cap. Each load here is a promise the test settles: a looping page's
 * turn fails at its CPU cap, a real page's ends with its value. What is asserted is the order the
 * code decides and the turns it gives, never a time.
 */
import { FairLanes, type Turn } from '../../lib/browser/fair-lanes';
import { TooLateToStart } from '../../lib/jobs/concurrency-gate';

const SLICE = 500;
const FULL = 3000;
const CUT = (ms: number) => `cut at ${ms}`;
const cutAtSlice = (err: unknown, turn: Turn) => (err as Error).message === CUT(turn.cpuCapMs);

/** One load's turns as the lanes give them: which page, on which site, with which turn. */
interface Started {
  page: string;
  turn: Turn;
  ended: boolean;
  end(outcome: 'cut' | 'done'): void;
}

function harness(lanes: number, now: () => number = () => 0) {
  const fair = new FairLanes(lanes, { firstSliceCpuMs: SLICE, hostileMemoryMs: 60_000, now });
  const started: Started[] = [];
  const load = (page: string, site: string, extra: { giveUpAt?: number; signal?: AbortSignal } = {}) =>
    fair.run(
      { site, cpuCapMs: FULL, ...extra },
      (turn) =>
        new Promise<string>((resolve, reject) => {
          const started1: Started = {
            page,
            turn,
            ended: false,
            end: (o) => {
              started1.ended = true;
              if (o === 'cut') reject(new Error(CUT(turn.cpuCapMs)));
              else resolve(page);
            },
          };
          started.push(started1);
        }),
      cutAtSlice,
    );
  /** Ends the running turn of `page`, and lets the lanes hand the freed lane on. */
  const end = async (page: string, outcome: 'cut' | 'done') => {
    const turn = started.find((s) => s.page === page && !s.ended);
    if (!turn) throw new Error(`${page} is not running`);
    turn.end(outcome);
    await flush();
  };
  /** Ends the turn that started first of those running: a looping page's at its cap, the real page's with its page. */
  const endOldest = async () => {
    const turn = started.find((s) => !s.ended);
    if (!turn) return false;
    turn.end(turn.page === 'real' ? 'done' : 'cut');
    await flush();
    return true;
  };
  return { fair, started, load, end, endOldest, order: () => started.map((s) => `${s.page}${s.turn.firstSlice ? '' : '*'}`) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const looping = (n: number) => Array.from({ length: n }, (_, i) => `loop-${i}`);

test('a page that uses up its first slice loads again at the back, with its full cap, after the pages waiting for their first turn', async () => {
  const h = harness(1);
  const loop = h.load('loop', 'loop.test').catch((err: Error) => err.message);
  const real = h.load('real', 'real.test');
  await flush();
  expect(h.started.map((s) => s.turn)).toEqual([{ cpuCapMs: SLICE, firstSlice: true }]);
  await h.end('loop', 'cut');
  expect(h.order()).toEqual(['loop', 'real']);
  await h.end('real', 'done');
  expect(await real).toBe('real');
  expect(h.order()).toEqual(['loop', 'real', 'loop*']);
  expect(h.started[2].turn).toEqual({ cpuCapMs: FULL, firstSlice: false });
  await h.end('loop', 'cut');
  expect(await loop).toBe(CUT(FULL));
  expect(h.fair.isHostile('loop.test')).toBe(true);
  expect(h.fair.isHostile('real.test')).toBe(false);
});

/** Sends `loopers` looping pages (on `sites` of them), then one real page, and runs the lanes until the real page has its value: the turns in order. */
async function realBeside(loopers: number, sites: 'distinct' | 'one'): Promise<string[]> {
  const h = harness(2);
  const settled = looping(loopers).map((page) => h.load(page, sites === 'one' ? 'loop.test' : `${page}.test`).catch(() => 'cut'));
  await flush();
  const real = h.load('real', 'real.test');
  await flush();
  // Every looping turn is cut at its cap, the real page's ends with its page, until none runs.
  while (await h.endOldest()) {}
  expect(await real).toBe('real');
  await Promise.all(settled);
  expect(h.fair.inFlight).toBe(0);
  expect(h.fair.queued).toBe(0);
  return h.order();
}

describe.each([4, 8, 16])('one real page sent after %i looping pages', (loopers) => {
  test('on as many sites: it loads with its first slice before any looping page gets its full turn', async () => {
    const order = await realBeside(loopers, 'distinct');
    const at = order.indexOf('real');
    expect(order.slice(0, at).every((t) => !t.endsWith('*'))).toBe(true);
    expect(at).toBe(loopers);
    // Each looping page had its slice and then its full turn.
    expect(order.filter((t) => t.endsWith('*'))).toHaveLength(loopers);
  });

  test('on one site: it loads once a lane frees, after at most the two slices that held the lanes', async () => {
    const order = await realBeside(loopers, 'one');
    expect(order.indexOf('real')).toBe(2);
    // The site is remembered after its first cut: its pages still waiting then load with their full cap only.
    expect(order.slice(0, 2)).toEqual(['loop-0', 'loop-1']);
    expect(order.slice(3)).toEqual(
      expect.arrayContaining(
        looping(loopers)
          .slice(2)
          .map((p) => `${p}*`),
      ),
    );
    // Only the two that held the lanes had a first slice.
    expect(order.filter((t) => !t.endsWith('*'))).toEqual(['loop-0', 'loop-1', 'real']);
  });
});

test('a site remembered as hostile gets no first slice: its next page waits behind the first turns, with its full cap', async () => {
  const h = harness(1);
  const first = h.load('a', 'bad.test').catch(() => 'cut');
  await flush();
  await h.end('a', 'cut');
  await h.end('a', 'cut');
  await first;
  const blocker = h.load('blocker', 'other.test');
  await flush();
  const again = h.load('b', 'bad.test');
  const fresh = h.load('c', 'new.test');
  await flush();
  await h.end('blocker', 'done');
  await h.end('c', 'done');
  await h.end('b', 'done');
  await Promise.all([blocker, again, fresh]);
  expect(h.order()).toEqual(['a', 'a*', 'blocker', 'c', 'b*']);
});

test('of the pages waiting, one of a site that holds no lane goes first', async () => {
  const h = harness(2);
  const loads = [h.load('x1', 'x.test'), h.load('x2', 'x.test'), h.load('x3', 'x.test')];
  await flush();
  loads.push(h.load('y1', 'y.test'));
  await flush();
  expect(h.order()).toEqual(['x1', 'x2']);
  await h.end('x1', 'done');
  expect(h.order()).toEqual(['x1', 'x2', 'y1']);
  await h.end('x2', 'done');
  await h.end('y1', 'done');
  await h.end('x3', 'done');
  await Promise.all(loads);
  expect(h.order()).toEqual(['x1', 'x2', 'y1', 'x3']);
});

test('a page whose cap is no more than the slice gets one turn, and a cut ends it', async () => {
  const fair = new FairLanes(1, { firstSliceCpuMs: SLICE });
  const turns: Turn[] = [];
  const out = fair.run(
    { site: 'small.test', cpuCapMs: SLICE },
    async (turn) => {
      turns.push(turn);
      throw new Error(CUT(turn.cpuCapMs));
    },
    cutAtSlice,
  );
  await expect(out).rejects.toThrow(CUT(SLICE));
  expect(turns).toEqual([{ cpuCapMs: SLICE, firstSlice: false }]);
});

test('a load still waiting at its give-up time leaves the queue; one whose full turn cannot start fails with its first turn’s error', async () => {
  let now = 0;
  const h = harness(1, () => now);
  const holder = h.load('holder', 'holder.test');
  const late = h.load('late', 'late.test', { giveUpAt: 0 });
  await expect(late).rejects.toBeInstanceOf(TooLateToStart);
  const controller = new AbortController();
  const aborted = h.load('aborted', 'aborted.test', { signal: controller.signal });
  await flush();
  controller.abort();
  await expect(aborted).rejects.toThrow('never started');
  expect(h.fair.queued).toBe(0);
  await h.end('holder', 'done');
  await holder;
  // A looping page cut at its slice when its give-up time has come: no full turn.
  const loop = h.load('loop', 'loop.test', { giveUpAt: 10 }).catch((err: Error) => err.message);
  await flush();
  now = 20;
  await h.end('loop', 'cut');
  expect(await loop).toBe(CUT(SLICE));
  expect(h.order()).toEqual(['holder', 'loop']);
});
