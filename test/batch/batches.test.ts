/**
 * POST /previews and GET /previews/{batchId} on the real local server: items queued in the data
 * dir, previewed as POST / previews them, and delivered as webhooks that the `standardwebhooks`
 * package verifies, at least once, retried, stopped by a 410.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { assertConforms, conformanceErrors } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { previewOn, startTestServer, TEST_KEY } from '../helpers/service';
import { type Receiver, startReceiver } from './receiver';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER_KEY = 'other-key-0123456789';
/** Retries at once in tests (the schedule is a setting; its default is hours: docs/batches.md). */
const RETRIES = [20, 20, 20, 20];

let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer();
  for (let i = 0; i < 12; i++) site.route(`/page/${i}`, { body: html(`<title>Page ${i}</title><meta name="description" content="The page numbered ${i}.">`) });
});
afterAll(() => site.close());

type Server = Awaited<ReturnType<typeof startTestServer>>;

async function submit(server: Server, body: unknown, key = TEST_KEY) {
  const res = await fetch(`${server.url}/previews`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, json: (await res.json()) as any };
}

async function batchOf(server: Server, id: string, key = TEST_KEY) {
  const res = await fetch(`${server.url}/previews/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { res, json: (await res.json()) as any };
}

/** Polls the batch until it is done. */
async function finished(server: Server, id: string): Promise<any> {
  for (;;) {
    const { json } = await batchOf(server, id);
    if (json.state === 'done') return json;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a batch with a callback', () => {
  let server: Server;
  let receiver: Receiver;
  beforeAll(async () => {
    server = await startTestServer({ apiKeys: [TEST_KEY, OTHER_KEY], webhookSecrets: [SECRET], webhookRetries: RETRIES });
    // Items 1 and 4: their first 3 deliveries fail (500); item 3: 410 (no more); the rest 2xx.
    receiver = await startReceiver(SECRET, (id, attempt) => {
      if (/_3$/.test(id)) return 410;
      if (/_[14]$/.test(id) && attempt <= 3) return 500;
      return 200;
    });
  });
  afterAll(async () => {
    await receiver.close();
    await server.close();
    server.cleanup();
  });

  test('is accepted at once (202, Location), previewed as POST / would, and every item and the batch delivered, signed, at least once', async () => {
    const links = [...Array.from({ length: 6 }, (_, i) => site.url(`/page/${i}`)), 'ftp://nope.example/', { link: site.url('/page/7'), source: 'WEB' }];
    const { res, json } = await submit(server, { links, callbackUrl: receiver.url });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/previews/${json.batchId}`);
    expect(json).toMatchObject({ state: 'queued', counts: { queued: 7, failed: 1, done: 0, running: 0 }, callbackUrl: receiver.url });
    expect(json.items).toHaveLength(8);
    // The invalid link is refused alone, with POST /'s own errorCode.
    expect(json.items[6]).toMatchObject({ id: `${json.batchId}.6`, index: 6, state: 'failed', errorCode: 'LINK_INVALID' });
    expect(json.items[0]).toMatchObject({ id: `${json.batchId}.0`, state: 'queued', link: site.url('/page/0') });

    const batch = await finished(server, json.batchId);
    expect(batch.counts).toEqual({ queued: 0, running: 0, done: 7, failed: 1 });
    expect(batch.completedAt).toEqual(expect.any(String));
    for (const item of batch.items.filter((i: any) => i.state === 'done')) {
      expect(item.record).toMatchObject({ ok: true, requestId: item.id, title: `Page ${item.index === 7 ? 7 : item.index}` });
      assertConforms(item.record);
    }
    // The record is the one POST / gives for the link (but for its request id and time).
    const direct = await previewOn(server, site.url('/page/2'));
    const strip = ({ requestId: _r, updatedAt: _u, ...rest }: any) => rest;
    expect(strip(batch.items[2].record)).toEqual(strip(direct));

    // Every item's webhook and the batch's: 7 items (the refused one has no preview, but is in the batch's).
    const wanted = [0, 1, 2, 3, 4, 5, 7].map((i) => `msg_${json.batchId}_${i}`).concat(`msg_${json.batchId}_batch`);
    await receiver.until(() =>
      wanted.every((id) =>
        receiver
          .byId()
          .get(id)
          ?.some((d) => d.answered < 300 || d.answered === 410),
      ),
    );
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
    const byId = receiver.byId();
    // Failed three times, delivered on the fourth, under one webhook-id; the 410 stopped after one.
    expect(byId.get(`msg_${json.batchId}_1`)?.map((d) => d.answered)).toEqual([500, 500, 500, 200]);
    expect(byId.get(`msg_${json.batchId}_3`)?.map((d) => d.answered)).toEqual([410]);
    const first = byId.get(`msg_${json.batchId}_0`)?.[0].event;
    expect(first).toMatchObject({ type: 'preview.completed', data: { batchId: json.batchId, item: { index: 0, state: 'done', record: { title: 'Page 0' } } } });
    expect(conformanceErrors('PreviewCompletedEvent', first)).toEqual([]);
    const done = byId.get(`msg_${json.batchId}_batch`)?.[0].event;
    expect(done).toMatchObject({ type: 'batch.completed', data: { batchId: json.batchId, counts: { done: 7, failed: 1 } } });
    expect(conformanceErrors('BatchCompletedEvent', done)).toEqual([]);
    // The same event body on every retry (only the attempt's timestamp and signature change).
    const retried = byId.get(`msg_${json.batchId}_1`) ?? [];
    expect(new Set(retried.map((d) => d.body)).size).toBe(1);

    // What became of each delivery is kept with its item.
    const after = await batchOf(server, json.batchId);
    expect(after.json.items[1].delivery).toMatchObject({ state: 'delivered', attempts: 4, lastStatus: 200 });
    expect(after.json.items[3].delivery).toMatchObject({ state: 'gone', attempts: 1, lastStatus: 410 });
  });

  test('is read only by its own key, and a batch id that is not one is 404', async () => {
    const { json } = await submit(server, { links: [site.url('/page/9')] });
    expect((await batchOf(server, json.batchId, OTHER_KEY)).res.status).toBe(404);
    expect((await batchOf(server, 'bat_AAAAAAAAAAAAAAAAAAAAAA')).json).toMatchObject({ status: 404, errorCode: 'BATCH_NOT_FOUND' });
    expect((await batchOf(server, '..%2F..%2Fetc')).res.status).toBe(404);
    const unauthorized = await fetch(`${server.url}/previews/${json.batchId}`);
    expect(unauthorized.status).toBe(401);
  });

  test('a body that is not a batch is 400, naming why', async () => {
    expect((await submit(server, ['x'])).json).toMatchObject({ status: 400, errorCode: 'BODY_INVALID' });
    expect((await submit(server, {})).json).toMatchObject({ status: 400, errorCode: 'LINKS_REQUIRED' });
    expect((await submit(server, { links: [] })).json).toMatchObject({ status: 400, errorCode: 'LINKS_REQUIRED' });
    expect((await submit(server, { links: 'https://example.com' })).json).toMatchObject({ status: 400, errorCode: 'LINKS_INVALID' });
    const many = Array.from({ length: 101 }, (_, i) => `https://example.com/${i}`);
    expect((await submit(server, { links: many })).json).toMatchObject({ status: 400, errorCode: 'BATCH_TOO_LARGE' });
    expect((await submit(server, { links: ['example.com'], callbackUrl: 'javascript:alert(1)' })).json).toMatchObject({ errorCode: 'CALLBACK_URL_INVALID' });
    const res = await fetch(`${server.url}/previews`, { method: 'GET', headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(res.status).toBe(405);
  });
});

describe('callback URLs are links like any other', () => {
  let server: Server;
  beforeAll(async () => {
    // The guard as deployed but for loopback (the receiver's): private, link-local and metadata closed.
    server = await startTestServer(
      {
        allowPrivateNetworks: false,
        allowLoopback: true,
        webhookSecrets: [SECRET],
        hostRules: loadConfig({ LINKPREVIEW_HOST_RULES: 'denied.test=deny' }).hostRules,
      },
      async (host) => {
        const table: Record<string, string> = {
          'private.test': '10.1.2.3',
          'metadata.test': '169.254.169.254',
          'mapped.test': '::ffff:169.254.169.254',
          'denied.test': '127.0.0.1',
        };
        if (table[host]) return [{ address: table[host], family: table[host].includes(':') ? 6 : 4 }];
        throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      },
    );
  });
  afterAll(async () => {
    await server.close();
    server.cleanup();
  });

  test.each([
    ['a private address', 'http://10.0.0.7/hook', 'CALLBACK_URL_NOT_ALLOWED'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/', 'CALLBACK_URL_NOT_ALLOWED'],
    ['an IPv6 form of the metadata address', 'http://[::ffff:a9fe:a9fe]/', 'CALLBACK_URL_NOT_ALLOWED'],
    ['a name resolving to a private address', 'https://private.test/hook', 'CALLBACK_URL_NOT_ALLOWED'],
    ['a name resolving to the metadata address', 'https://metadata.test/hook', 'CALLBACK_URL_NOT_ALLOWED'],
    ['a name resolving to its IPv4-mapped IPv6 form', 'https://mapped.test/hook', 'CALLBACK_URL_NOT_ALLOWED'],
    ['a host a rule denies', 'https://denied.test/hook', 'CALLBACK_URL_NOT_ALLOWED'],
    ['a name that does not resolve', 'https://nowhere.test/hook', 'CALLBACK_URL_UNRESOLVED'],
    ['a port not allowed', 'http://receiver.example:25/hook', 'CALLBACK_URL_NOT_ALLOWED'],
  ])('%s is refused at submit, and nothing is queued', async (_what, callbackUrl, errorCode) => {
    const { res, json } = await submit(server, { links: [site.url('/page/1')], callbackUrl });
    expect(res.status).toBe(400);
    expect(json).toMatchObject({ errorCode, details: { field: 'callbackUrl' } });
    expect(await server.batches.deps.store.meta(String(json.batchId))).toBeUndefined();
  });

  test('a redirecting callback is not followed: each attempt fails, until the delivery is dead', async () => {
    const target = await startReceiver(SECRET);
    const redirecting = await startReceiver(SECRET, () => 307);
    const dying = await startTestServer({ allowLoopback: true, allowPrivateNetworks: false, webhookSecrets: [SECRET], webhookRetries: [10, 10] });
    try {
      const { json } = await submit(dying, { links: [site.url('/page/5')], callbackUrl: redirecting.url });
      const id = `msg_${json.batchId}_0`;
      await redirecting.until(() => (redirecting.byId().get(id)?.length ?? 0) >= 3);
      // Three tries (the first and two retries), then dead: kept with its item.
      for (;;) {
        const { json: batch } = await batchOf(dying, json.batchId);
        if (batch.items[0].delivery?.state === 'dead') {
          expect(batch.items[0].delivery).toMatchObject({ attempts: 3, lastStatus: 307 });
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(redirecting.byId().get(id)).toHaveLength(3);
      expect(target.deliveries).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
      await dying.close();
      dying.cleanup();
    }
  });
});

test('a key past its limit of queued items is refused the whole batch: 429 with Retry-After', async () => {
  const server = await startTestServer({ batchMaxQueued: 3, batchConcurrency: 1 });
  try {
    // Its pages answer only once the test lets them: the batch's items stay queued (or running) until then.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startFixtureServer({
      '/slow': async (_req, res) => {
        await released;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<title>slow</title>');
      },
    });
    try {
      const first = await submit(server, { links: [slow.url('/slow'), slow.url('/slow?2'), slow.url('/slow?3')] });
      expect(first.res.status).toBe(202);
      const over = await submit(server, { links: [site.url('/page/1')] });
      expect(over.res.status).toBe(429);
      expect(over.res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(over.json).toMatchObject({ errorCode: 'TOO_MANY_QUEUED' });
      // Once its items are done, the key may submit again.
      release();
      await finished(server, first.json.batchId);
      expect((await submit(server, { links: [site.url('/page/1')] })).res.status).toBe(202);
    } finally {
      await slow.close();
    }
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('a batch item starts while no POST / is in flight, and under a steady stream of them once every 2 s', async () => {
  const { afterCallers, BATCH_STARVATION_MS } = await import('../../functions/local-batches');
  let busy = false;
  let now = 0;
  const mayStart = afterCallers(
    () => busy,
    () => now,
  );
  expect(mayStart()).toBe(true);
  busy = true;
  now = 100;
  expect(mayStart()).toBe(false);
  now = BATCH_STARVATION_MS - 1;
  expect(mayStart()).toBe(false);
  now = BATCH_STARVATION_MS;
  expect(mayStart()).toBe(true);
  now += 10;
  expect(mayStart()).toBe(false);
  busy = false;
  expect(mayStart()).toBe(true);
});
