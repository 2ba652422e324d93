/**
 * GET /status: version, uptime and the state of each dependency. It needs no key, so it says
 * only ok/not ok per dependency and a short reason, never paths, keys or configuration.
 */
import { constants, promises as fs } from 'node:fs';
import pkg from '../package.json';
import type { BlobStore, JobRunner } from './ports.js';

export interface DependencyState { ok: boolean; detail?: string }

export interface ServiceStatus {
  ok: boolean;
  version: string;
  uptimeSeconds: number;
  dependencies: { blobStore: DependencyState; jobRunner: DependencyState; ffprobe: DependencyState; browser: DependencyState };
}

export interface StatusDeps {
  blobs: BlobStore;
  jobs: JobRunner;
  /** Paths of optional binaries, when known. */
  ffprobePath?: string;
  browserPath?: string;
}

const started = Date.now();

async function check(fn: () => Promise<void>, timeoutMs = 3000): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([fn(), new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), timeoutMs); })]);
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error).message === 'timed out' ? 'timed out' : 'unavailable' };
  } finally {
    clearTimeout(timer);
  }
}

async function executable(path: string | undefined): Promise<DependencyState> {
  if (!path) return { ok: false, detail: 'not configured' };
  try {
    await fs.access(path, constants.X_OK);
    return { ok: true };
  } catch {
    return { ok: false, detail: 'not found' };
  }
}

export async function serviceStatus(deps: StatusDeps): Promise<ServiceStatus> {
  const [blobStore, jobRunner, ffprobe, browser] = await Promise.all([
    check(async () => {
      const key = 'jobs/status-probe.json';
      const stamp = String(Date.now());
      await deps.blobs.put(key, stamp, { contentType: 'application/json', cacheControl: 'no-store' });
      const back = await deps.blobs.get(key);
      if (back?.toString() !== stamp) throw new Error('read back a different value');
    }),
    check(async () => {
      const out = await deps.jobs.run([{ id: 'status', kind: 'echo', input: { value: 'ping' } }], { requestId: `status-${Date.now()}`, deadline: Date.now() + 2500 });
      if (!out.get('status')?.ok) throw new Error('echo job failed');
    }),
    executable(deps.ffprobePath),
    executable(deps.browserPath),
  ]);
  return {
    ok: blobStore.ok && jobRunner.ok,
    version: pkg.version,
    uptimeSeconds: Math.round((Date.now() - started) / 1000),
    dependencies: { blobStore, jobRunner, ffprobe, browser },
  };
}
