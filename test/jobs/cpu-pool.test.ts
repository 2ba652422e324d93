/**
 * The CPU pool (lib/jobs/cpu-pool.ts) with a task module of the test's own: a step past its
 * deadline is stopped with its thread (its work never finishes), a queued one leaves the queue, a
 * full queue refuses at once with an expected transient failure; and the real task module, loaded
 * from the TypeScript sources by a pool thread, gives what it gives in-process.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { ExpectedFailure } from '../../lib/errors';
import { CpuPool, CpuPoolFull, CpuStepCancelled, cpuPool, cpuThreadCount, runCpuTask } from '../../lib/jobs/cpu-pool';
import { POOL_THREAD_NICE } from '../../lib/jobs/thread-priority';
import { readPageContent } from '../../lib/page/page-content-dom';
import { articlePage } from '../page/fixtures';

type Tasks = {
  spin: (input: { ms: number; started: string; finished: string }) => string;
  echo: (value: unknown) => unknown;
};

const FIXTURE = path.join(__dirname, 'cpu-tasks.fixture.cjs');
let dir: string;
let pool: CpuPool<Tasks>;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'linklens-cpu-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => pool?.close());

const files = (name: string) => ({ started: path.join(dir, `${name}.started`), finished: path.join(dir, `${name}.finished`) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(10);
}

test('a step past its deadline is stopped with its thread: its work never finishes, and the pool goes on', async () => {
  pool = new CpuPool<Tasks>({ threads: 1, maxQueue: 4, filename: FIXTURE });
  const f = files('cancelled');
  const deadline = new AbortController();
  const step = pool.run('spin', { ms: 600, ...f }, deadline.signal);
  const outcome = step.catch((err: unknown) => err);
  await until(() => existsSync(f.started));
  deadline.abort(new Error('deadline exceeded'));
  const err = await outcome;
  expect(err).toBeInstanceOf(CpuStepCancelled);
  expect(err).toMatchObject({ transient: true, message: 'spin cancelled: deadline exceeded' });
  // Well past the time the loop would have taken, it never got to write its mark: the thread is gone.
  await sleep(1500);
  expect(existsSync(f.finished)).toBe(false);
  // A new thread took its place.
  await expect(pool.run('echo', { ok: 1 })).resolves.toEqual({ ok: 1 });
  // The same step without a deadline does finish (the mark is how a finished loop shows).
  const g = files('finished');
  await expect(pool.run('spin', { ms: 10, ...g })).resolves.toBe('finished');
  expect(existsSync(g.finished)).toBe(true);
}, 20_000);

test('a full queue refuses a step at once with an expected transient failure; an aborted queued step leaves the queue unstarted', async () => {
  pool = new CpuPool<Tasks>({ threads: 1, maxQueue: 1, filename: FIXTURE });
  const running = new AbortController();
  const queued = new AbortController();
  const a = files('a');
  const b = files('b');
  const first = pool.run('spin', { ms: 10_000, ...a }, running.signal).catch((e: unknown) => e);
  const second = pool.run('spin', { ms: 10_000, ...b }, queued.signal).catch((e: unknown) => e);
  expect(pool.size).toBe(2);
  const third = await pool.run('echo', 'x').catch((e: unknown) => e);
  expect(third).toBeInstanceOf(CpuPoolFull);
  expect(third).toBeInstanceOf(ExpectedFailure);
  expect((third as ExpectedFailure).transient).toBe(true);
  await until(() => existsSync(a.started));
  queued.abort(new Error('deadline exceeded'));
  expect(await second).toBeInstanceOf(CpuStepCancelled);
  running.abort(new Error('deadline exceeded'));
  expect(await first).toBeInstanceOf(CpuStepCancelled);
  expect(existsSync(b.started)).toBe(false);
  expect(pool.size).toBe(0);
}, 20_000);

test('an already aborted step is not started', async () => {
  pool = new CpuPool<Tasks>({ threads: 1, maxQueue: 1, filename: FIXTURE });
  const f = files('pre-aborted');
  await expect(pool.run('spin', { ms: 10, ...f }, AbortSignal.abort(new Error('late')))).rejects.toBeInstanceOf(CpuStepCancelled);
  await expect(runCpuTask(undefined, 'readPageContent', { url: 'https://x.example/', bytesBase64: '' }, AbortSignal.abort())).rejects.toBeInstanceOf(
    CpuStepCancelled,
  );
  expect(existsSync(f.started)).toBe(false);
});

test('sized to the machine (in a Lambda, to the vCPUs its memory buys); 0 is in-process; one pool per process and settings', () => {
  const local = { cpuQueue: 8, functionMemoryMb: 0 };
  expect(cpuThreadCount({ ...local, cpuThreads: 'auto' })).toBe(availableParallelism());
  expect(cpuThreadCount({ ...local, cpuThreads: 3 })).toBe(3);
  expect(cpuThreadCount({ ...local, cpuThreads: 'auto', functionMemoryMb: 1769 })).toBe(1);
  expect(cpuThreadCount({ ...local, cpuThreads: 'auto', functionMemoryMb: 512 })).toBe(1);
  expect(cpuThreadCount({ ...local, cpuThreads: 'auto', functionMemoryMb: 10_240 })).toBe(Math.min(5, availableParallelism()));
  expect(cpuPool({ ...local, cpuThreads: 0 })).toBeUndefined();
  const p = cpuPool({ ...local, cpuThreads: 1 });
  expect(p).toBeDefined();
  expect(cpuPool({ ...local, cpuThreads: 1 })).toBe(p);
  expect(p!.options).toMatchObject({ threads: 1, maxQueue: 8 });
});

test('the real task module runs in a pool thread from the TypeScript sources and gives what it gives in-process', async () => {
  const source = {
    url: 'https://news.example/2024/rivers.html',
    bytesBase64: Buffer.from(articlePage()).toString('base64'),
    contentType: 'text/html; charset=utf-8',
  };
  const pooled = await runCpuTask({ cpuThreads: 1, cpuQueue: 4, functionMemoryMb: 0 }, 'readPageContent', source);
  expect(pooled).toEqual(readPageContent(source));
  expect(pooled.article).toBe(true);
  expect(pooled.images?.urls).toEqual(['https://news.example/2024/images/canyon.jpg']);
}, 30_000);

test("the pool's threads run at the lowest priority, the process at its own; in-process (the pool off) the main thread keeps its priority", async () => {
  const settings = { cpuThreads: 1, cpuQueue: 4, functionMemoryMb: 0 } as const;
  const before = getPriority(process.pid);
  // A nice value is per thread on Linux (the only platform the service and its tests run on).
  await expect(runCpuTask(settings, 'threadNice', undefined)).resolves.toBe(POOL_THREAD_NICE);
  expect(getPriority(process.pid)).toBe(before);
  await expect(runCpuTask({ ...settings, cpuThreads: 0 }, 'threadNice', undefined)).resolves.toBeUndefined();
  expect(getPriority(process.pid)).toBe(before);
  expect(POOL_THREAD_NICE).toBe(19);
}, 30_000);
