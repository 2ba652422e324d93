/**
 * Every response carries `x-request-id` and `Server-Timing` (README, "Headers on every
 * response"): each kind of answer of the local server and of the Lambda's API handler, those
 * made outside the preview handler included (413, /status, /openapi.json, assets, overload, 500s).
 */
import type http from 'node:http';
import { buildLocalDeps } from '../../functions/wiring';
import { createApiHandler } from '../../lib/http/api-handler';
import { PreviewGate } from '../../lib/http/overload';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { KeyStore } from '../../lib/ports';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { httpApiEvent, silentLog, startTestServer, TEST_KEY, testConfig } from '../helpers/service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMING = /(^|, )total;dur=\d+(\.\d+)?$/;

let site: FixtureServer;
let releaseHeld: () => void = () => {};
beforeAll(async () => {
  site = await startFixtureServer({
    '/': { body: html('<title>Headers page</title>') },
    // Answers only when the test lets it: a preview held in flight.
    '/held': async (_req: http.IncomingMessage, res: http.ServerResponse) => {
      await new Promise<void>((resolve) => {
        releaseHeld = resolve;
      });
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(html('<title>Held</title>'));
    },
  });
});
afterAll(() => site.close());

/** A key store that fails on chosen calls of verify (every call when `from` is 1). */
function breakKeys(keys: KeyStore, failing: (call: number) => boolean): () => void {
  const verify = keys.verify.bind(keys);
  let calls = 0;
  keys.verify = (key: string) => {
    if (failing(++calls)) throw new Error('key store down');
    return verify(key);
  };
  return () => {
    keys.verify = verify;
  };
}

test('the local server: every kind of answer has x-request-id and Server-Timing', async () => {
  const server = await startTestServer({ maxConcurrentPreviews: 1, maxQueuedPreviews: 0 });
  const seen = new Map<string, number>();
  const check = async (name: string, status: number, path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, init);
    const body = await res.text();
    const context = `${name}: ${init.method ?? 'GET'} ${path} -> ${res.status}`;
    expect([context, res.status]).toEqual([context, status]);
    expect([context, res.headers.get('x-request-id')]).toEqual([context, expect.stringMatching(UUID)]);
    expect([context, res.headers.get('server-timing')]).toEqual([context, expect.stringMatching(TIMING)]);
    // An error body names the same request id.
    if (res.headers.get('content-type')?.startsWith('application/json') && status >= 400) {
      expect([context, JSON.parse(body).requestId]).toEqual([context, res.headers.get('x-request-id')]);
    }
    seen.set(name, status);
    return res;
  };
  const keyed = (body: string, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'text/plain', ...headers },
    body,
  });
  try {
    await check('status', 200, '/status');
    await check('status (HEAD)', 200, '/status', { method: 'HEAD' });
    await check('status (deep)', 200, '/status', { headers: { authorization: `Bearer ${TEST_KEY}` } });
    await check('status (wrong key)', 401, '/status', { headers: { authorization: 'Bearer nope' } });
    await check('openapi', 200, '/openapi.json');

    await server.deps.blobs.put('assets/abc/thumbnail.webp', Buffer.from('RIFF....WEBP'), { contentType: 'image/webp' });
    const asset = await check('asset', 200, '/assets/abc/thumbnail.webp');
    await check('asset (HEAD)', 200, '/assets/abc/thumbnail.webp', { method: 'HEAD' });
    await check('asset not modified', 304, '/assets/abc/thumbnail.webp', { headers: { 'if-none-match': asset.headers.get('etag')! } });
    await check('no such asset', 404, '/assets/nope.webp');
    await check('asset directory', 404, '/assets/abc/');

    await check('preview', 200, '/', keyed(site.url('/')));
    await check('invalid request', 400, '/', keyed('{"link":""}', { 'content-type': 'application/json' }));
    // The API answers an unsupported body type with 400 UNSUPPORTED_MEDIA_TYPE (it has no 415).
    await check('unsupported media type', 400, '/', keyed('<link/>', { 'content-type': 'application/xml' }));
    await check('unsupported charset', 400, '/', keyed(site.url('/'), { 'content-type': 'text/plain; charset=utf-7' }));
    await check('no key', 401, '/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: site.url('/') });
    await check('wrong key, over the cap', 401, '/', {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'text/plain' },
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    await check('no such path', 404, '/nope', keyed(site.url('/')));
    await check('no such path (GET)', 404, '/nope');
    await check('method', 405, '/');
    await check('method (DELETE)', 405, '/', { method: 'DELETE', headers: { authorization: `Bearer ${TEST_KEY}` } });
    await check('not acceptable', 406, '/', keyed(site.url('/'), { accept: 'image/png' }));
    await check('too large', 413, '/', keyed('x'.repeat(1024 * 1024 + 10)));

    // Overload: one preview in flight, none may wait.
    const held = fetch(`${server.url}/`, keyed(site.url('/held')));
    for (let i = 0; i < 100 && !site.requests.some((r) => r.url === '/held'); i++) await new Promise((r) => setTimeout(r, 50));
    const overloaded = await check('overloaded', 503, '/', keyed(site.url('/')));
    expect(overloaded.headers.get('retry-after')).toBe('1');
    releaseHeld();
    expect((await held).status).toBe(200);

    // 500s, from a key store that throws: the local server's own (it checks the key before
    // reading the body), the preview handler's (the second check of the request fails) and /status's.
    let restore = breakKeys(server.deps.keys, () => true);
    await check('local server failure', 500, '/', keyed(site.url('/')));
    await check('status failure', 500, '/status', { headers: { authorization: `Bearer ${TEST_KEY}` } });
    restore();
    restore = breakKeys(server.deps.keys, (call) => call % 2 === 0);
    await check('handler failure', 500, '/', keyed(site.url('/')));
    restore();
  } finally {
    releaseHeld();
    await server.close();
    server.cleanup();
  }
  expect([...new Set(seen.values())].sort()).toEqual([200, 304, 400, 401, 404, 405, 406, 413, 500, 503]);
});

test("the Lambda's API handler: every HTTP answer has x-request-id and Server-Timing", async () => {
  const config = testConfig();
  try {
    const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
    const handler = createApiHandler(deps);
    const gated = createApiHandler({ ...deps, gate: new PreviewGate(0, 0) });
    const call = async (name: string, status: number, event: unknown, h = handler) => {
      const res = (await h(event, { awsRequestId: 'lambda-req-1' })) as HttpResponse;
      expect([name, res.statusCode]).toEqual([name, status]);
      // The API Gateway request id of the event.
      expect([name, res.headers['x-request-id']]).toEqual([name, 'apigw-req-1']);
      expect([name, res.headers['server-timing']]).toEqual([name, expect.stringMatching(TIMING)]);
      if (status >= 400) expect([name, JSON.parse(res.body).requestId]).toEqual([name, 'apigw-req-1']);
    };
    const auth = { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'text/plain' };
    await call('preview', 200, httpApiEvent(auth, Buffer.from(site.url('/'))));
    await call('invalid', 400, httpApiEvent({ ...auth, 'content-type': 'application/json' }, Buffer.from('{"link":""}')));
    await call('unsupported media type', 400, httpApiEvent({ ...auth, 'content-type': 'application/xml' }, Buffer.from('<a/>')));
    await call('no key', 401, httpApiEvent({ 'content-type': 'text/plain' }, Buffer.from(site.url('/'))));
    await call('no such path', 404, httpApiEvent(auth, Buffer.from(''), 'GET', '/nope'));
    await call('method', 405, httpApiEvent(auth, Buffer.from(''), 'GET', '/'));
    await call('status', 200, httpApiEvent({}, Buffer.from(''), 'GET', '/status'));
    await call('status (wrong key)', 401, httpApiEvent({ authorization: 'Bearer nope' }, Buffer.from(''), 'GET', '/status'));
    await call('openapi', 200, httpApiEvent({}, Buffer.from(''), 'GET', '/openapi.json'));
    await call('overloaded', 503, httpApiEvent(auth, Buffer.from(site.url('/'))), gated);
    const restore = breakKeys(deps.keys, () => true);
    await call('handler failure', 500, httpApiEvent(auth, Buffer.from(site.url('/'))));
    // /status with a key store that throws is a 500 answer, not a thrown invocation error.
    await call('status failure', 500, httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.from(''), 'GET', '/status'));
    restore();
  } finally {
    config.cleanup();
  }
});
