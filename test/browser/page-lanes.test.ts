/**
 * The fair browser's decisions without a browser (lib/browser/page-lanes.ts): while pages wait for
 * a lane, the greediest loading page past the minimum CPU gives its lane, one per waiting page.
 */
import { PageLanes, YIELD_MIN_CPU_MS, yieldReason } from '../../lib/browser/page-lanes';

function lanesWith(waiting: { n: number }) {
  const lanes = new PageLanes(500);
  lanes.setDemand(() => waiting.n);
  const stopped: string[] = [];
  const page = (name: string) => lanes.enter((reason) => stopped.push(`${name}: ${reason}`));
  return { lanes, stopped, page };
}

test('no page waits: nothing yields, however greedy', () => {
  const waiting = { n: 0 };
  const { lanes, stopped, page } = lanesWith(waiting);
  const loop = page('loop');
  lanes.used(loop.page, 2900);
  expect(stopped).toEqual([]);
});

test('one page waits: the greediest past the minimum yields, once', () => {
  const waiting = { n: 1 };
  const { lanes, stopped, page } = lanesWith(waiting);
  const a = page('a');
  const b = page('b');
  const real = page('real');
  lanes.used(real.page, 300);
  lanes.used(a.page, 700);
  expect(stopped).toEqual([`a: ${yieldReason(700)}`]);
  // b passes a: still one page waits and one is yielding, so nothing more.
  lanes.used(b.page, 900);
  expect(stopped).toHaveLength(1);
  // a's stop ended and the waiter took its lane; another comes: b goes, never the real page below the minimum.
  a.leave();
  lanes.used(b.page, 950);
  expect(stopped).toEqual([`a: ${yieldReason(700)}`, `b: ${yieldReason(950)}`]);
  expect(stopped.some((s) => s.startsWith('real'))).toBe(false);
});

test('as many yield as pages wait, greediest first; none below the minimum', () => {
  const waiting = { n: 3 };
  const { lanes, stopped, page } = lanesWith(waiting);
  const pages = [page('p1'), page('p2'), page('p3'), page('p4')];
  for (const [i, ms] of [600, 1200, 400, 900].entries()) pages[i].page.cpuMs = ms;
  lanes.reconsider();
  expect(stopped.map((s) => s.split(':')[0])).toEqual(['p2', 'p4', 'p1']);
});

test('the default minimum is above a shell’s render', () => {
  expect(YIELD_MIN_CPU_MS).toBeGreaterThanOrEqual(500);
  expect(yieldReason(812.4)).toBe('the page gave its lane to a page waiting for one, after 812 ms of CPU: its scripts were stopped');
});
