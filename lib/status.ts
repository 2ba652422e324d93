/**
 * GET /status: version, uptime and the state of each dependency. Anyone may ask, so it says only
 * ok/not ok per dependency and a short reason, never paths, keys or configuration.
 *
 * Two depths. The shallow check (no key) costs nothing: liveness, the version and whether the
 * optional binaries are present; the blob store and the job runner are not touched (reported
 * `ok` with detail "not checked": they are configured, or the process would not have started).
 * The deep check (a valid key; the handler decides) writes and reads back a probe blob under a
 * key of its own and runs an echo job under a request id of its own, so concurrent deep checks
 * never share an object.
 */
import { randomUUID } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import pkg from '../package.json';
import type { BlobStore, JobRunner } from './ports.js';
import { statusProbeKey } from './storage-keys.js';

export interface DependencyState {
  ok: boolean;
  detail?: string;
}

export interface ServiceStatus {
  ok: boolean;
  /** true when the blob store and the job runner were probed (a keyed request). */
  deep: boolean;
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

const notChecked = (): DependencyState => ({ ok: true, detail: 'not checked' });

async function check(fn: () => Promise<void>, timeoutMs = 3000): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
      }),
    ]);
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

export async function serviceStatus(deps: StatusDeps, options: { deep?: boolean } = {}): Promise<ServiceStatus> {
  const deep = options.deep === true;
  const [blobStore, jobRunner, ffprobe, browser] = await Promise.all([
    deep ? probeBlobStore(deps.blobs) : notChecked(),
    deep ? probeJobRunner(deps.jobs) : notChecked(),
    executable(deps.ffprobePath),
    executable(deps.browserPath),
  ]);
  return {
    ok: blobStore.ok && jobRunner.ok,
    deep,
    version: pkg.version,
    uptimeSeconds: Math.round((Date.now() - started) / 1000),
    dependencies: { blobStore, jobRunner, ffprobe, browser },
  };
}

function probeBlobStore(blobs: BlobStore): Promise<DependencyState> {
  return check(async () => {
    // One per deep check, under jobs/ (which expires after a day in S3).
    const key = statusProbeKey(randomUUID());
    const stamp = JSON.stringify({ probe: randomUUID(), at: new Date().toISOString() });
    await blobs.put(key, stamp, { contentType: 'application/json', cacheControl: 'no-store', durable: true });
    const back = await blobs.get(key);
    if (back?.toString() !== stamp) throw new Error('read back a different value');
  });
}

function probeJobRunner(jobs: JobRunner): Promise<DependencyState> {
  return check(async () => {
    const out = await jobs.run([{ id: 'status', kind: 'echo', input: { value: 'ping' } }], {
      requestId: `status-${randomUUID()}`,
      deadline: Date.now() + 2500,
    });
    if (!out.get('status')?.ok) throw new Error('echo job failed');
  });
}
