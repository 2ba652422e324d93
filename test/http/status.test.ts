/**
 * GET /status: the shallow check without a key costs nothing (no blob write, no job), the deep
 * check needs the bearer key of POST / and probes under a key of its own per call, a wrong key
 * is 401, and only the exact path (after the API Gateway stage prefix) is /status.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { buildLocalDeps } from '../../functions/wiring';
import { createApiHandler } from '../../lib/http/api-handler';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { BlobStore, JobRunner, PutOptions, RunOptions } from '../../lib/ports';
import { httpApiEvent, silentLog, startTestServer, TEST_KEY, testConfig } from '../helpers/service';

/** Wraps a blob store and a job runner and records every call. */
function counting(blobs: BlobStore, jobs: JobRunner) {
  const calls = { put: [] as string[], get: [] as string[], has: [] as string[], run: [] as RunOptions[] };
  const countedBlobs: BlobStore = {
    put: (key: string, body: Buffer | string, options: PutOptions) => {
      calls.put.push(key);
      return blobs.put(key, body, options);
    },
    get: (key: string) => {
      calls.get.push(key);
      return blobs.get(key);
    },
    has: (key: string) => {
      calls.has.push(key);
      return blobs.has(key);
    },
    head: (key: string) => {
      calls.has.push(key);
      return blobs.head(key);
    },
    publicUrl: (key: string) => blobs.publicUrl(key),
  };
  const countedJobs: JobRunner = {
    run: (j, options) => {
      calls.run.push(options);
      return jobs.run(j, options);
    },
  };
  return { calls, blobs: countedBlobs, jobs: countedJobs };
}

/**
 * An in-memory blob store whose puts all wait until `puts` of them have been made: concurrent
 * probes are forced to write before either reads back, so two probes sharing one key would read
 * each other's value.
 */
function interleavingBlobs(puts: number): BlobStore & { keys(): string[] } {
  const data = new Map<string, string>();
  let made = 0;
  let release!: () => void;
  const allMade = new Promise<void>((r) => {
    release = r;
  });
  return {
    async put(key, body) {
      data.set(key, body.toString());
      if (++made >= puts) release();
      await Promise.race([allMade, new Promise((r) => setTimeout(r, 1000))]);
    },
    async get(key) {
      const v = data.get(key);
      return v === undefined ? undefined : Buffer.from(v);
    },
    async has(key) {
      return data.has(key);
    },
    async head(key) {
      return data.has(key) ? { metadata: {} } : undefined;
    },
    publicUrl: (key) => `http://assets.test/${key}`,
    keys: () => [...data.keys()],
  };
}

function setup(over: { blobs?: BlobStore; jobs?: JobRunner } = {}) {
  const config = testConfig();
  const base = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
  const c = counting(over.blobs ?? base.blobs, over.jobs ?? base.jobs);
  let authFailures = 0;
  const handler = createApiHandler({
    ...base,
    blobs: c.blobs,
    jobs: c.jobs,
    onAuthFailure: () => {
      authFailures++;
    },
  });
  const call = async (event: unknown) => {
    const res = (await handler(event, { awsRequestId: 'lambda-req-1' })) as HttpResponse;
    return { ...res, json: JSON.parse(res.body) };
  };
  const get = (rawPath: string, headers: Record<string, string> = {}, stage = '$default') => {
    const event = httpApiEvent(headers, Buffer.alloc(0), 'GET', rawPath);
    event.requestContext.stage = stage;
    return call(event);
  };
  return { config, calls: c.calls, call, get, authFailures: () => authFailures, cleanup: () => config.cleanup() };
}

/** Every file under dir, relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

const PROBE_KEY = /^jobs\/status-probe\/[0-9a-f-]{36}\.json$/;

describe('GET /status without a key: liveness and configuration only', () => {
  test('no blob is written or read, no job runs, nothing appears in the data dir', async () => {
    const s = setup();
    try {
      const before = filesUnder(s.config.dataDir);
      const res = await s.get('/status');
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json).toMatchObject({
        ok: true,
        deep: false,
        version: '1.0.0',
        dependencies: { blobStore: { ok: true, detail: 'not checked' }, jobRunner: { ok: true, detail: 'not checked' } },
      });
      expect(typeof res.json.uptimeSeconds).toBe('number');
      expect(s.calls.put).toEqual([]);
      expect(s.calls.get).toEqual([]);
      expect(s.calls.run).toEqual([]);
      expect(filesUnder(s.config.dataDir)).toEqual(before);
    } finally {
      s.cleanup();
    }
  });

  test('a broken blob store and job runner do not change the anonymous answer (they are not touched)', async () => {
    const boom = async (): Promise<never> => {
      throw new Error('down');
    };
    const s = setup({
      blobs: { put: boom, get: boom, has: boom, head: boom, publicUrl: (k) => k },
      jobs: { run: boom as unknown as JobRunner['run'] },
    });
    try {
      const res = await s.get('/status');
      expect(res.statusCode).toBe(200);
      expect(res.json.deep).toBe(false);
      expect(s.calls.put.length + s.calls.run.length).toBe(0);
    } finally {
      s.cleanup();
    }
  });

  test('an empty Authorization header is the anonymous check, not a 401', async () => {
    const s = setup();
    try {
      const res = await s.get('/status', { authorization: '' });
      expect(res.statusCode).toBe(200);
      expect(res.json.deep).toBe(false);
      expect(s.calls.put).toEqual([]);
    } finally {
      s.cleanup();
    }
  });
});

describe('GET /status with the key: the deep check', () => {
  test('probes the blob store and the job runner through the real local adapters', async () => {
    const s = setup();
    try {
      const res = await s.get('/status', { authorization: `Bearer ${TEST_KEY}` });
      expect(res.statusCode).toBe(200);
      expect(res.json).toMatchObject({ ok: true, deep: true, dependencies: { blobStore: { ok: true }, jobRunner: { ok: true } } });
      expect(res.json.dependencies.blobStore.detail).toBeUndefined();
      expect(res.json.dependencies.jobRunner.detail).toBeUndefined();
      expect(s.calls.put).toHaveLength(1);
      expect(s.calls.put[0]).toMatch(PROBE_KEY);
      expect(s.calls.get).toEqual(s.calls.put);
      expect(s.calls.run).toHaveLength(1);
      expect(filesUnder(s.config.dataDir)).toContain(s.calls.put[0]);
      expect(res.body).not.toContain(TEST_KEY);
      expect(res.body).not.toContain(s.config.dataDir);
    } finally {
      s.cleanup();
    }
  });

  test('two concurrent deep checks use two probe keys and two job request ids, and both succeed', async () => {
    const blobs = interleavingBlobs(2);
    const s = setup({ blobs });
    try {
      const auth = { authorization: `Bearer ${TEST_KEY}` };
      const [a, b] = await Promise.all([s.get('/status', auth), s.get('/status', auth)]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      expect([a.json.deep, b.json.deep]).toEqual([true, true]);
      expect([a.json.dependencies.blobStore, b.json.dependencies.blobStore]).toEqual([{ ok: true }, { ok: true }]);
      expect(s.calls.put).toHaveLength(2);
      for (const key of s.calls.put) expect(key).toMatch(PROBE_KEY);
      expect(new Set(s.calls.put).size).toBe(2);
      expect(blobs.keys().sort()).toEqual([...s.calls.put].sort());
      expect(s.calls.run).toHaveLength(2);
      expect(new Set(s.calls.run.map((o) => o.requestId)).size).toBe(2);
    } finally {
      s.cleanup();
    }
  });

  test('a failing dependency is 503 with a short reason, never the error text', async () => {
    const s = setup({ jobs: { run: async (jobs) => new Map(jobs.map((j) => [j.id, { id: j.id, ok: false, error: 'SQS /secret', ms: 1 }] as const)) } });
    try {
      const res = await s.get('/status', { authorization: `Bearer ${TEST_KEY}` });
      expect(res.statusCode).toBe(503);
      expect(res.json).toMatchObject({ ok: false, deep: true, dependencies: { blobStore: { ok: true }, jobRunner: { ok: false, detail: 'unavailable' } } });
      expect(res.body).not.toContain('/secret');
    } finally {
      s.cleanup();
    }
  });
});

describe('GET /status with a wrong key: 401 like POST /', () => {
  test.each([
    ['a wrong bearer key', 'Bearer not-the-key', 'The API key is not valid.'],
    ['a header that is not a bearer key', 'Basic dXNlcjpwYXNz', 'A valid "Authorization: Bearer <key>" header is required.'],
  ])('%s -> 401 UNAUTHORIZED, nothing probed', async (_name, authorization, message) => {
    const s = setup();
    try {
      const res = await s.get('/status', { authorization });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="linklens"');
      expect(res.headers['x-request-id']).toBe('apigw-req-1');
      expect(res.json).toEqual({ ok: false, status: 401, error: 'Unauthorized', errorCode: 'UNAUTHORIZED', message, requestId: 'apigw-req-1' });
      expect(s.authFailures()).toBe(1);
      expect(s.calls.put).toEqual([]);
      expect(s.calls.run).toEqual([]);
    } finally {
      s.cleanup();
    }
  });

  test('the same wrong key on POST / gets the same errorCode', async () => {
    const s = setup();
    try {
      const post = await s.call(
        httpApiEvent({ authorization: 'Bearer not-the-key', 'content-type': 'application/json' }, Buffer.from('{"link":"https://example.com/"}')),
      );
      const status = await s.get('/status', { authorization: 'Bearer not-the-key' });
      expect(status.statusCode).toBe(post.statusCode);
      expect(status.json.errorCode).toBe(post.json.errorCode);
      expect(status.json.message).toBe(post.json.message);
    } finally {
      s.cleanup();
    }
  });
});

describe('only the exact path is /status', () => {
  test.each(['/x/status', '/statusx', '/status/x', '/v1/status', '/prod/status'])(
    'GET %s is 404 NOT_FOUND (stage $default), with or without a key',
    async (p) => {
      const s = setup();
      try {
        for (const headers of [{}, { authorization: `Bearer ${TEST_KEY}` }] as Record<string, string>[]) {
          const res = await s.get(p, headers);
          expect(res.statusCode).toBe(404);
          expect(res.json).toMatchObject({ ok: false, status: 404, errorCode: 'NOT_FOUND' });
          expect(res.json.deep).toBeUndefined();
        }
        expect(s.calls.put).toEqual([]);
        expect(s.calls.run).toEqual([]);
      } finally {
        s.cleanup();
      }
    },
  );

  test('the stage prefix of a named HTTP API stage is removed, as for POST /', async () => {
    const s = setup();
    try {
      const anon = await s.get('/prod/status', {}, 'prod');
      expect(anon.statusCode).toBe(200);
      expect(anon.json.deep).toBe(false);
      const keyed = await s.get('/prod/status', { authorization: `Bearer ${TEST_KEY}` }, 'prod');
      expect(keyed.statusCode).toBe(200);
      expect(keyed.json.deep).toBe(true);
      // The prefix is removed only when it is the whole first segment, and only once.
      expect((await s.get('/production/status', {}, 'prod')).statusCode).toBe(404);
      expect((await s.get('/prod/x/status', {}, 'prod')).statusCode).toBe(404);
      // Without the prefix (REST v1 paths, custom domains) the path is taken as it is, as for POST /.
      expect((await s.get('/status', {}, 'prod')).statusCode).toBe(200);
    } finally {
      s.cleanup();
    }
  });

  test('a trailing slash is tolerated, as for POST /', async () => {
    const s = setup();
    try {
      const res = await s.get('/status/');
      expect(res.statusCode).toBe(200);
      expect(res.json.deep).toBe(false);
    } finally {
      s.cleanup();
    }
  });

  test('API Gateway REST (v1): path is /status without the stage', async () => {
    const s = setup();
    const rest = (p: string) => ({
      resource: p,
      path: p,
      httpMethod: 'GET',
      headers: {},
      multiValueHeaders: {},
      queryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      requestContext: { requestId: 'rest-req-1', stage: 'prod', path: `/prod${p}` },
      body: null,
      isBase64Encoded: false,
    });
    try {
      const ok = await s.call(rest('/status'));
      expect(ok.statusCode).toBe(200);
      expect(ok.json.deep).toBe(false);
      const other = await s.call(rest('/x/status'));
      expect(other.statusCode).toBe(404);
      expect(s.calls.put).toEqual([]);
    } finally {
      s.cleanup();
    }
  });
});

describe('through the local server (real HTTP, real adapters)', () => {
  test('anonymous GET /status leaves the data dir untouched; keyed GET /status writes one probe per call', async () => {
    const server = await startTestServer();
    try {
      const dataDir = (server.deps as { config?: { dataDir: string } }).config!.dataDir;
      const before = filesUnder(dataDir);
      const anon = await fetch(`${server.url}/status`);
      expect(anon.status).toBe(200);
      expect(await anon.json()).toMatchObject({ ok: true, deep: false });
      expect(filesUnder(dataDir)).toEqual(before);

      const auth = { authorization: `Bearer ${TEST_KEY}` };
      const [a, b] = await Promise.all([fetch(`${server.url}/status`, { headers: auth }), fetch(`${server.url}/status`, { headers: auth })]);
      expect([a.status, b.status]).toEqual([200, 200]);
      const [ja, jb] = (await Promise.all([a.json(), b.json()])) as { deep: boolean }[];
      expect([ja.deep, jb.deep]).toEqual([true, true]);
      const probes = filesUnder(dataDir).filter((f) => f.startsWith('jobs/status-probe/') && !f.endsWith('.meta.json'));
      expect(probes).toHaveLength(2);
      for (const p of probes) expect(p).toMatch(PROBE_KEY);

      const wrong = await fetch(`${server.url}/status`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toMatchObject({ errorCode: 'UNAUTHORIZED' });
      expect((await fetch(`${server.url}/x/status`)).status).toBe(404);
      expect((await fetch(`${server.url}/statusx`)).status).toBe(404);
    } finally {
      await server.close();
      server.cleanup();
    }
  });
});
