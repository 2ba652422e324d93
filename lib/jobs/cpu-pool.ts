/**
 * The CPU pool: the jobs' CPU-heavy steps (lib/jobs/cpu-worker.ts: a page's content) run in worker
 * threads (piscina), so the event loop stays free for requests and I/O and every core works.
 *
 * - Sized to the machine: LINKPREVIEW_CPU_THREADS threads (`auto`: os.availableParallelism(); in
 *   a Lambda, one per 1,769 MB of its memory, a vCPU's worth), started at the first step and kept
 *   warm; `0` runs the steps in-process, on the event loop.
 * - Bounded: at most LINKPREVIEW_CPU_QUEUE steps wait for a thread; one more fails at once with
 *   CpuPoolFull, an expected transient failure (its job fails, the record goes out without it).
 * - Deadlines: a step is given its job's AbortSignal (the runners abort it at the job's deadline);
 *   a waiting step leaves the queue, a running one is stopped with its thread (piscina terminates
 *   it and starts another), so nothing runs on in the background. The step fails with
 *   CpuStepCancelled.
 *
 * One pool per process and settings: the threads are the machine's, shared by all jobs.
 */
import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { LAMBDA_MB_PER_VCPU } from '../core-settings.js';
import { ExpectedFailure } from '../errors.js';
import type * as cpuTasks from './cpu-worker.js';

/** The tasks a pool runs, by name: each takes one structured-cloneable input. */
type TaskMap = Record<string, (input: never) => unknown>;
type CpuTasks = typeof cpuTasks;
type TaskInput<T extends TaskMap, N extends keyof T> = Parameters<T[N]>[0];
type TaskOutput<T extends TaskMap, N extends keyof T> = Awaited<ReturnType<T[N]>>;

/**
 * The file the threads load: cpu-worker.mjs beside the bundle (dist/ and the worker Lambda's code:
 * scripts/build.mjs and cdk/constructs/bundling.ts build it there), or, running from the
 * TypeScript sources, the loader that registers tsx first.
 */
const CPU_WORKER_FILE = __filename.endsWith('.ts') ? path.join(__dirname, 'cpu-worker-tsx.cjs') : path.join(__dirname, 'cpu-worker.mjs');

/** Every thread is busy and the queue is full: the step is refused at once. */
export class CpuPoolFull extends ExpectedFailure {}

/** The step was aborted (its job's deadline): taken out of the queue, or stopped with its thread. */
export class CpuStepCancelled extends ExpectedFailure {}

export interface CpuPoolOptions {
  threads: number;
  /** Steps waiting for a thread at most. */
  maxQueue: number;
  /** The task module (default CPU_WORKER_FILE); tests give their own. */
  filename?: string;
}

export class CpuPool<T extends TaskMap = CpuTasks> {
  private readonly piscina: Piscina;
  private inFlight = 0;

  constructor(readonly options: CpuPoolOptions) {
    const threads = Math.max(1, options.threads);
    this.piscina = new Piscina({
      filename: options.filename ?? CPU_WORKER_FILE,
      minThreads: threads,
      maxThreads: threads,
      // The bound is kept here (CpuPoolFull), before piscina's queue.
      maxQueue: Infinity,
    });
  }

  /** Steps running or waiting. */
  get size(): number {
    return this.inFlight;
  }

  /** Runs the task `name` on a thread; rejects with CpuPoolFull when the queue is full, CpuStepCancelled when `signal` aborts. */
  async run<N extends keyof T & string>(name: N, input: TaskInput<T, N>, signal?: AbortSignal): Promise<TaskOutput<T, N>> {
    if (signal?.aborted) throw cancelled(name, signal);
    if (this.inFlight >= Math.max(1, this.options.threads) + this.options.maxQueue) {
      throw new CpuPoolFull(`CPU pool full: ${this.inFlight} steps running or waiting`, { transient: true });
    }
    this.inFlight++;
    try {
      return (await this.piscina.run(input, { name, signal })) as TaskOutput<T, N>;
    } catch (err) {
      if (signal?.aborted) throw cancelled(name, signal, err);
      throw err;
    } finally {
      this.inFlight--;
    }
  }

  /** Stops the threads (running steps fail). */
  close(): Promise<void> {
    return this.piscina.destroy();
  }
}

function cancelled(name: string, signal: AbortSignal, cause?: unknown): CpuStepCancelled {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  return new CpuStepCancelled(`${name} cancelled: ${reason}`, { transient: true, cause });
}

type CpuSettings = Pick<Config, 'cpuThreads' | 'cpuQueue' | 'functionMemoryMb'>;

/** The threads a configuration asks for (`auto`: one per core; on Lambda, one per vCPU its memory buys). */
export function cpuThreadCount(config: CpuSettings): number {
  if (config.cpuThreads !== 'auto') return config.cpuThreads;
  const cores = os.availableParallelism();
  if (!config.functionMemoryMb) return cores;
  // Below LAMBDA_MB_PER_VCPU, a share of one vCPU (the OS shows two cores all the same).
  return Math.max(1, Math.min(cores, Math.floor(config.functionMemoryMb / LAMBDA_MB_PER_VCPU)));
}

const pools = new Map<string, CpuPool>();

/** The process's pool for these settings (created at the first call), or undefined when the pool is off. */
export function cpuPool(config: CpuSettings): CpuPool | undefined {
  const threads = cpuThreadCount(config);
  if (threads === 0) return undefined;
  const key = `${threads}/${config.cpuQueue}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new CpuPool({ threads, maxQueue: config.cpuQueue });
    pools.set(key, pool);
  }
  return pool;
}

/** Closes every pool of the process (tests; a server that stops). */
export async function closeCpuPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close()));
}

/**
 * Runs a CPU step: in the process's pool, or in-process when the pool is off or there is no
 * configuration (a caller outside the job runners).
 */
export async function runCpuTask<N extends keyof CpuTasks & string>(
  config: CpuSettings | undefined,
  name: N,
  input: TaskInput<CpuTasks, N>,
  signal?: AbortSignal,
): Promise<TaskOutput<CpuTasks, N>> {
  const pool = config && cpuPool(config);
  if (pool) return pool.run(name, input, signal);
  if (signal?.aborted) throw cancelled(name, signal);
  const tasks = await import('./cpu-worker.js');
  return (tasks[name] as (input: TaskInput<CpuTasks, N>) => TaskOutput<CpuTasks, N>)(input);
}
