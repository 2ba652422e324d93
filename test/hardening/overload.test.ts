import { OverloadedError, PreviewGate } from '../../lib/http/overload';

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
