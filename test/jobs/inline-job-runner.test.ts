import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import { testConfig } from '../helpers/service';

const config = testConfig();
afterAll(() => config.cleanup());
const ctx = { fetch: async () => { throw new Error('no fetch'); }, blobs: {} as never, config };

test('runs jobs concurrently and returns every outcome by id', async () => {
  const runner = new InlineJobRunner(ctx as never, 4);
  const t0 = Date.now();
  const out = await runner.run(
    [
      { id: 'a', kind: 'echo', input: { value: 1, delayMs: 150 } },
      { id: 'b', kind: 'echo', input: { value: 2, delayMs: 150 } },
      { id: 'c', kind: 'echo', input: { value: 3, fail: true } },
    ],
    { requestId: 'r', deadline: Date.now() + 5000 },
  );
  expect(Date.now() - t0).toBeLessThan(290); // in parallel, not 300 ms in sequence
  expect(out.get('a')).toMatchObject({ ok: true, result: { value: 1 } });
  expect(out.get('b')).toMatchObject({ ok: true, result: { value: 2 } });
  expect(out.get('c')).toMatchObject({ ok: false, error: 'echo job asked to fail' });
});

test('a job past the deadline is reported failed at the deadline, not when it finishes', async () => {
  const runner = new InlineJobRunner(ctx as never, 2);
  const t0 = Date.now();
  const out = await runner.run(
    [
      { id: 'fast', kind: 'echo', input: { value: 'x' } },
      { id: 'slow', kind: 'echo', input: { value: 'y', delayMs: 10_000 } },
    ],
    { requestId: 'r', deadline: Date.now() + 200 },
  );
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(out.get('fast')).toMatchObject({ ok: true });
  expect(out.get('slow')).toMatchObject({ ok: false, error: 'deadline exceeded' });
});

test('concurrency is bounded across calls', async () => {
  const runner = new InlineJobRunner(ctx as never, 1);
  const t0 = Date.now();
  await Promise.all([
    runner.run([{ id: 'a', kind: 'echo', input: { value: 1, delayMs: 100 } }], { requestId: 'r1', deadline: Date.now() + 5000 }),
    runner.run([{ id: 'b', kind: 'echo', input: { value: 2, delayMs: 100 } }], { requestId: 'r2', deadline: Date.now() + 5000 }),
  ]);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(195);
});
