/**
 * GET /oembed through the real handler (every answer checked against openapi.yaml by the test
 * helpers) and the local server, on loopback fixtures: a page is a `link`, an image a `photo`,
 * within maxwidth and maxheight; the key of POST / by header or by the `key` parameter (which
 * POST / never accepts); 401, 400, 404, 405 and 501 as documented; and no log line written
 * during any of these requests holds the key.
 */
import { Writable } from 'node:stream';
import { startLocalServer } from '../../functions/local-server';
import type { HttpResponse } from '../../lib/http/preview-handler';
import { createConsoleLogger } from '../../lib/log';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, recordingLog, TEST_KEY, type TestHandler, testConfig } from '../helpers/service';
import { jpeg } from '../media/fixtures';
import { oembedSpecErrors } from '../oembed/spec';

let site: FixtureServer;
let svc: TestHandler;
const log = recordingLog();
/** Released by the overload test: the page that holds the local server's only preview slot. */
let releaseSlow: () => void = () => {};

beforeAll(async () => {
  const photo = await jpeg(1600, 1000);
  site = await startFixtureServer({
    '/article': {
      body: html(
        '<title>Kites over the bay | Bay Herald</title><meta property="og:title" content="Kites over the bay"><meta property="og:site_name" content="Bay Herald"><meta name="description" content="A weekend of kites on the north beach."><meta name="author" content="Ines Duarte"><meta property="og:image" content="/kites.jpg">',
        '<article><p>The wind came in from the west.</p></article>',
        'en',
      ),
    },
    '/kites.jpg': { headers: { 'content-type': 'image/jpeg' }, body: photo },
    // A page whose player is YouTube's (its twitter:player), with a title that reads like size attributes.
    '/bridge': {
      body: html(
        '<title>Bridge width=300 height="20" style=x opens</title><meta name="twitter:card" content="player"><meta name="twitter:player" content="https://www.youtube.com/embed/dQw4w9WgXcQ">',
        '<p>The new bridge opened on Sunday.</p>',
        'en',
      ),
    },
    '/gone': { status: 404, body: html('<title>Not found</title>') },
    '/slow': (_req, res) => {
      releaseSlow = () => {
        releaseSlow = () => {};
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(html('<title>Slow</title>'));
      };
    },
  });
  svc = createTestHandler({ log });
});
afterAll(async () => {
  releaseSlow();
  await site.close();
  svc.cleanup();
});

const query = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** GET /oembed?<params> as API Gateway hands it to the Lambda (payload 2.0). */
async function oembed(params: Record<string, string | number>, headers: Record<string, string> = {}, path = '/oembed', stage = '$default') {
  const event = httpApiEvent(headers, Buffer.alloc(0), 'GET', path);
  event.rawQueryString = query(params);
  event.requestContext.stage = stage;
  const out = (await svc.invoke(event)) as HttpResponse;
  return { ...out, json: JSON.parse(out.body) };
}
const withKey = { authorization: `Bearer ${TEST_KEY}` };

describe('a 200 answer is a valid oEmbed 1.0 response', () => {
  test('a page is a link: title, author, provider, and the hosted thumbnail that fits maxwidth', async () => {
    const res = await oembed({ url: site.url('/article'), maxwidth: 500, format: 'json' }, withKey);
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-linklens-route': 'direct',
    });
    expect(oembedSpecErrors(res.json, { maxwidth: 500 })).toEqual([]);
    expect(res.json).toMatchObject({
      version: '1.0',
      type: 'link',
      title: 'Kites over the bay',
      author_name: 'Ines Duarte',
      provider_name: 'Bay Herald',
      provider_url: `${site.origin}/`,
      thumbnail_width: 320,
      thumbnail_height: 200,
    });
    expect(res.json.thumbnail_url).toMatch(/^http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/thumbnail\.webp$/);
    // Without bounds: the medium size.
    const wide = await oembed({ url: site.url('/article') }, withKey);
    expect(wide.json).toMatchObject({ thumbnail_width: 640, thumbnail_height: 400 });
  });

  test('an image link is a photo: the hosted size that fits maxwidth and maxheight', async () => {
    const res = await oembed({ url: site.url('/kites.jpg'), maxwidth: 700, maxheight: 700 }, withKey);
    expect(res.statusCode).toBe(200);
    expect(oembedSpecErrors(res.json, { maxwidth: 700, maxheight: 700 })).toEqual([]);
    expect(res.json).toMatchObject({ version: '1.0', type: 'photo', width: 640, height: 400 });
    expect(res.json.url).toMatch(/\/medium\.webp$/);
    const small = await oembed({ url: site.url('/kites.jpg'), maxheight: 100 }, withKey);
    expect(small.json).toMatchObject({ type: 'photo', width: 160, height: 100 });
    expect(oembedSpecErrors(small.json, { maxheight: 100 })).toEqual([]);
  });

  test('the key in the query (a consumer that cannot send a header); on a stage-prefixed path; from a REST (v1) event', async () => {
    const res = await oembed({ url: site.url('/article'), key: TEST_KEY });
    expect(res.statusCode).toBe(200);
    expect(res.json.type).toBe('link');
    expect((await oembed({ url: site.url('/article') }, withKey, '/prod/oembed', 'prod')).statusCode).toBe(200);
    const rest = (await svc.invoke({
      httpMethod: 'GET',
      path: '/oembed',
      headers: {},
      multiValueHeaders: {},
      queryStringParameters: { url: site.url('/article'), key: TEST_KEY },
      multiValueQueryStringParameters: { url: [site.url('/article')], key: [TEST_KEY] },
      requestContext: { requestId: 'rest-1', path: '/oembed' },
      body: null,
      isBase64Encoded: false,
    })) as HttpResponse;
    expect(rest.statusCode).toBe(200);
    expect(JSON.parse(rest.body).title).toBe('Kites over the bay');
  });
});

describe('the key: the one of POST /', () => {
  /** POST / with these headers and this query; its body is a valid request. */
  const post = async (headers: Record<string, string>, rawQuery = '') => {
    const event = httpApiEvent({ 'content-type': 'application/json', ...headers }, Buffer.from(JSON.stringify({ link: site.url('/article') })));
    event.rawQueryString = rawQuery;
    const out = (await svc.invoke(event)) as HttpResponse;
    return { ...out, json: JSON.parse(out.body) };
  };
  const without = ({ requestId: _r, ...body }: Record<string, unknown>) => body;

  test('none: 401 with the error body and WWW-Authenticate of POST / without a key', async () => {
    const res = await oembed({ url: site.url('/article') });
    const ref = await post({});
    expect(res.statusCode).toBe(401);
    expect(ref.statusCode).toBe(401);
    expect(without(res.json)).toEqual(without(ref.json));
    expect(res.headers['www-authenticate']).toBe(ref.headers['www-authenticate']);
  });

  test('a wrong one, by header or by query: 401 as POST / with a wrong key; a header, when sent, decides', async () => {
    const ref = await post({ authorization: 'Bearer wrong-key-4321' });
    for (const res of [
      await oembed({ url: site.url('/article') }, { authorization: 'Bearer wrong-key-4321' }),
      await oembed({ url: site.url('/article'), key: 'wrong-key-4321' }),
      await oembed({ url: site.url('/article'), key: TEST_KEY }, { authorization: 'Bearer wrong-key-4321' }),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(without(res.json)).toEqual(without(ref.json));
      expect(res.headers['www-authenticate']).toBe('Bearer realm="linklens"');
    }
  });

  test('a blank Authorization header is a wrong key: 401, never the query key (the header, when sent, decides)', async () => {
    const ref = await post({ authorization: 'Bearer wrong-key-4321' });
    for (const blank of ['', '   ']) {
      const res = await oembed({ url: site.url('/article'), key: TEST_KEY }, { authorization: blank });
      expect(res.statusCode).toBe(401);
      expect(res.json.errorCode).toBe(ref.json.errorCode);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="linklens"');
    }
  });

  test('POST / never takes the key from the query', async () => {
    expect((await post({}, query({ key: TEST_KEY }))).statusCode).toBe(401);
    expect((await post(withKey, query({ key: 'anything' }))).statusCode).toBe(200);
  });
});

describe('the errors of the route', () => {
  test('a link that cannot be previewed (ok false): 404 LINK_UNAVAILABLE', async () => {
    const res = await oembed({ url: site.url('/gone') }, withKey);
    expect(res.statusCode).toBe(404);
    expect(res.json).toMatchObject({ ok: false, status: 404, errorCode: 'LINK_UNAVAILABLE', details: { status: 404 } });
  });

  test('a url that is no http(s) link, or that the guard refuses: 404; a missing or blank url: 400', async () => {
    const invalid = await oembed({ url: 'ftp://files.example.com/a' }, withKey);
    expect(invalid.statusCode).toBe(404);
    expect(invalid.json).toMatchObject({ errorCode: 'LINK_INVALID', message: 'url must be an http or https URL', details: { field: 'url' } });
    const refused = await oembed({ url: 'http://169.254.169.254/latest/meta-data/' }, withKey);
    expect(refused.statusCode).toBe(404);
    expect(refused.json.errorCode).toBe('LINK_NOT_ALLOWED');
    for (const params of [{}, { url: '  ' }] as Record<string, string>[]) {
      const missing = await oembed(params, withKey);
      expect(missing.statusCode).toBe(400);
      expect(missing.json).toMatchObject({ errorCode: 'LINK_REQUIRED', details: { field: 'url' } });
    }
  });

  test('maxwidth or maxheight that is not a positive integer: 400', async () => {
    for (const [params, code] of [
      [{ maxwidth: 'wide' }, 'MAXWIDTH_INVALID'],
      [{ maxwidth: 0 }, 'MAXWIDTH_INVALID'],
      [{ maxheight: '12.5' }, 'MAXHEIGHT_INVALID'],
    ] as const) {
      const res = await oembed({ url: site.url('/article'), ...params }, withKey);
      expect(res.statusCode).toBe(400);
      expect(res.json.errorCode).toBe(code);
    }
  });

  test('a maxwidth or maxheight past 4000 is read as 4000: the player stays within it; the title keeps its text', async () => {
    const huge = 9_007_199_254_740_991;
    const res = await oembed({ url: site.url('/bridge'), maxwidth: huge, maxheight: `${huge}99999` }, withKey);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ type: 'video', width: 4000, height: 2250 });
    expect(oembedSpecErrors(res.json, { maxwidth: 4000, maxheight: 4000 })).toEqual([]);
    expect(res.json.html).toMatch(/^<iframe src="https:\/\/www\.youtube-nocookie\.com\/embed\/dQw4w9WgXcQ" /);
    expect(res.json.html).toContain(' width="4000" height="2250"');
    expect(res.json.html).toContain('title="YouTube: Bridge width=300 height=&quot;20&quot; style=x opens"');
    expect(res.json.html).not.toContain(String(huge));
    // maxwidth alone, the largest safe integer: the same bound.
    const wide = await oembed({ url: site.url('/bridge'), maxwidth: huge }, withKey);
    expect(wide.json).toMatchObject({ type: 'video', width: 4000, height: 2250 });
  });

  test('format=xml (any format but json): 501, as the specification says; after the key', async () => {
    const res = await oembed({ url: site.url('/article'), format: 'xml' }, withKey);
    expect(res.statusCode).toBe(501);
    expect(res.json).toMatchObject({ ok: false, status: 501, error: 'Not Implemented', errorCode: 'FORMAT_NOT_IMPLEMENTED' });
    expect((await oembed({ url: site.url('/article'), format: 'xml' })).statusCode).toBe(401);
  });

  test('another method on /oembed is 405; /oembedx and /x/oembed are 404', async () => {
    const event = httpApiEvent(withKey, Buffer.alloc(0), 'POST', '/oembed');
    expect(((await svc.invoke(event)) as HttpResponse).statusCode).toBe(405);
    expect((await oembed({ url: site.url('/article') }, withKey, '/oembedx')).statusCode).toBe(404);
    expect((await oembed({ url: site.url('/article') }, withKey, '/x/oembed')).statusCode).toBe(404);
  });

  test('no log line written during any request of this file holds the key (or a wrong one sent in the query)', () => {
    // Runs last: every request above, the previews' lines included, logged into `log`.
    expect(log.lines.length).toBeGreaterThan(10);
    expect(log.lines.some((l) => l.message === 'preview')).toBe(true);
    // None of them is a fault: a 501 is the specification's answer, logged as a rejected request.
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(log.lines.some((l) => l.message === 'request rejected' && l.extra?.errorCode === 'FORMAT_NOT_IMPLEMENTED')).toBe(true);
    const text = JSON.stringify(log.lines);
    expect(text).not.toContain(TEST_KEY);
    expect(text).not.toContain('wrong-key-4321');
  });
});

describe('the local server answers it through the same handler', () => {
  test('over HTTP with the key in the query: the same answer; its log (every level) never holds the key; the preview gate applies', async () => {
    let written = '';
    const stream = new Writable({
      write(chunk, _enc, done) {
        written += chunk.toString();
        done();
      },
    });
    const config = testConfig({ maxConcurrentPreviews: 1, maxQueuedPreviews: 0 });
    const server = await startLocalServer({ host: '127.0.0.1', port: 0, env: {}, config, log: createConsoleLogger('debug', stream) });
    try {
      const res = await fetch(`${server.url}/oembed?${query({ url: site.url('/article'), maxwidth: 400, key: TEST_KEY })}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const body = (await res.json()) as Record<string, unknown>;
      expect(oembedSpecErrors(body, { maxwidth: 400 })).toEqual([]);
      expect(body).toMatchObject({ type: 'link', title: 'Kites over the bay', thumbnail_width: 320 });
      expect((await fetch(`${server.url}/oembed?${query({ url: site.url('/article'), key: 'wrong-key-4321' })}`)).status).toBe(401);
      // The only preview slot taken by a page that does not answer yet: the next GET /oembed is refused at once.
      const slow = fetch(`${server.url}/oembed?${query({ url: site.url('/slow'), key: TEST_KEY })}`);
      await waitFor(() => site.requests.some((r) => r.url === '/slow'));
      const refused = await fetch(`${server.url}/oembed?${query({ url: site.url('/article'), key: TEST_KEY })}`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await refused.json()).toMatchObject({ errorCode: 'OVERLOADED' });
      releaseSlow();
      expect((await slow).status).toBe(200);
      expect(written).toContain('"message":"preview"');
      expect(written).not.toContain(TEST_KEY);
      expect(written).not.toContain('wrong-key-4321');
    } finally {
      await server.close();
      config.cleanup();
    }
  });
});

/** Polls `done` on the event loop (no clock in the assertion: it only waits for the fixture to be asked). */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
}
