/**
 * One flight per link (lib/preview/flights.ts): previews of one link that overlap share one
 * pipeline. The flight logic with previews of its own making (no network, no clock but the
 * follower's budget), then whole previews through the handler against a loopback origin that
 * counts every request and holds the page until the herd is in the air.
 */

import { BadRequestError } from '../../lib/errors';
import type { Resolver } from '../../lib/fetch/address-guard';
import { createApiHandler } from '../../lib/http/api-handler';
import { Flights, flightKey } from '../../lib/preview/flights';
import type { PreviewOutcome, SoFar } from '../../lib/preview/types';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, TEST_KEY } from '../helpers/service';
import { png } from '../platforms/harness';

const outcome = (title: string, requestId = 'leader'): PreviewOutcome => ({
  record: { id: 1, requestId, url: 'https://a.test/', domain: 'a.test', ok: true, type: 'PAGE', status: 200, title } as PreviewOutcome['record'],
  route: { taken: 'direct', proxied: 0, walls: [], proxyHosts: [] },
});

/** A preview that lands when told to, counting how often it was flown. */
function heldPreview() {
  let land!: (o: PreviewOutcome) => void;
  let fail!: (e: unknown) => void;
  const flown: number[] = [];
  const fly = (watch: (s: SoFar) => void) => {
    flown.push(1);
    watch({ outcome: () => ({ record: outcome('so far').record, upstreamError: 'TIMEOUT' }) });
    return new Promise<PreviewOutcome>((ok, no) => {
      land = ok;
      fail = no;
    });
  };
  return { fly, flown, land: (o: PreviewOutcome) => land(o), fail: (e: unknown) => fail(e) };
}

const LONG = () => 60_000;
const tick = () => new Promise((r) => setImmediate(r));

describe('the flights of one process', () => {
  test('followers get the leader’s record, and the preview is flown once', async () => {
    const flights = new Flights();
    const held = heldPreview();
    const all = Array.from({ length: 5 }, () => flights.preview('k', LONG, held.fly));
    await tick();
    expect(flights.waiting).toBe(4);
    held.land(outcome('The story'));
    const done = await Promise.all(all);
    expect(held.flown).toHaveLength(1);
    expect(done.map((d) => d.role).sort()).toEqual(['follower', 'follower', 'follower', 'follower', 'leader']);
    expect(new Set(done.map((d) => d.outcome.record.title))).toEqual(new Set(['The story']));
    // Each follower has its own copy.
    expect(done[1].outcome.record).not.toBe(done[2].outcome.record);
    expect(flights.size).toBe(0);
  });

  test('a follower whose leader fails takes over, the others follow it', async () => {
    const flights = new Flights();
    const first = heldPreview();
    const second = heldPreview();
    const leader = flights.preview('k', LONG, first.fly);
    const followers = [flights.preview('k', LONG, second.fly), flights.preview('k', LONG, second.fly)];
    await tick();
    first.fail(new Error('the process lost its store'));
    await expect(leader).rejects.toThrow('the process lost its store');
    await tick();
    expect(second.flown).toHaveLength(1);
    second.land(outcome('Flown again'));
    const done = await Promise.all(followers);
    expect(done.map((d) => d.role).sort()).toEqual(['follower', 'takeover']);
    expect(done.every((d) => d.outcome.record.title === 'Flown again')).toBe(true);
  });

  test('the link’s own 4xx is every follower’s answer; nobody flies again', async () => {
    const flights = new Flights();
    const held = heldPreview();
    const all = [flights.preview('k', LONG, held.fly), flights.preview('k', LONG, held.fly)];
    await tick();
    held.fail(new BadRequestError('LINK_NOT_ALLOWED', 'denied'));
    for (const p of all) await expect(p).rejects.toBeInstanceOf(BadRequestError);
    expect(held.flown).toHaveLength(1);
  });

  test('a preview after the flight landed flies anew (nothing older than in flight is served)', async () => {
    const flights = new Flights();
    const held = heldPreview();
    const first = flights.preview('k', LONG, held.fly);
    held.land(outcome('First'));
    await first;
    const again = heldPreview();
    const second = flights.preview('k', LONG, again.fly);
    again.land(outcome('Second'));
    expect(await second).toMatchObject({ role: 'alone', outcome: { record: { title: 'Second' } } });
    expect(again.flown).toHaveLength(1);
  });

  test('a follower whose budget ends first gets what the leader has so far, out of time', async () => {
    const flights = new Flights();
    const held = heldPreview();
    void flights.preview('k', LONG, held.fly);
    const follower = await flights.preview('k', () => 0, held.fly);
    expect(follower).toMatchObject({ role: 'follower', outcome: { outOfTime: true, upstreamError: 'TIMEOUT', record: { title: 'so far' } } });
    held.land(outcome('late'));
  });

  test('the key: the canonical link and everything that changes the record', () => {
    const req = { link: 'https://a.test/x#one', source: 'API', forceNewSnapshot: true, forceNewSnapshotRecursive: true } as const;
    expect(flightKey(req, 'en', undefined)).toBe(flightKey({ ...req, link: 'https://a.test/x#two' }, 'en', undefined));
    expect(flightKey(req, 'en', undefined)).not.toBe(flightKey(req, 'fr', undefined));
    expect(flightKey(req, 'en', undefined)).not.toBe(flightKey({ ...req, source: 'WEB' }, 'en', undefined));
    expect(flightKey(req, 'en', undefined)).not.toBe(flightKey(req, 'en', 'a.test=render'));
    expect(flightKey(req, 'en', undefined)).not.toBe(flightKey({ ...req, link: 'https://a.test/y' }, 'en', undefined));
  });
});

describe('a herd of previews through the handler: one page GET, one GET per image', () => {
  let site: FixtureServer;
  let release!: () => void;
  const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

  beforeAll(async () => {
    site = await startFixtureServer();
    const image = await png(640, 360);
    const held = new Promise<void>((r) => {
      release = r;
    });
    site.route('/story', async (_req, res) => {
      await held;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        html(
          `<title>The story</title><meta name="description" content="What it says."><meta property="og:image" content="http://news.test:${site.port}/og.png">`,
          `<article><h1>The story</h1><p>${'Words of the story. '.repeat(40)}</p></article>`,
        ),
      );
    });
    site.route('/og.png', { headers: { 'content-type': 'image/png' }, body: image });
  });
  afterAll(() => site.close());

  test('100 previews of one link at once', async () => {
    const flights = new Flights();
    const h = createTestHandler({ resolver });
    const roles: string[] = [];
    const handler = createApiHandler({ ...h.deps, flights, onFlight: (r) => roles.push(r) });
    try {
      const link = `http://news.test:${site.port}/story`;
      const body = Buffer.from(JSON.stringify({ link }));
      const event = (i: number) => {
        const e = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, body);
        return { ...e, requestContext: { ...e.requestContext, requestId: `req-${i}` } };
      };
      const answers = Array.from({ length: 100 }, (_, i) => handler(event(i), { awsRequestId: `req-${i}` }));
      while (flights.waiting < 99) await new Promise((r) => setTimeout(r, 5));
      release();
      const out = (await Promise.all(answers)) as { statusCode: number; headers: Record<string, string>; body: string }[];
      const records = out.map((o) => JSON.parse(o.body));
      expect(out.every((o) => o.statusCode === 200)).toBe(true);
      expect(records[0]).toMatchObject({ ok: true, title: 'The story', image: { original: { url: expect.any(String) } } });
      expect(records.every((r) => r.ok && r.title === 'The story' && r.image?.original?.url === records[0].image.original.url)).toBe(true);
      expect(new Set(records.map((r) => r.requestId)).size).toBe(100);
      expect(records[7].requestId).toBe('req-7');
      expect(roles.filter((r) => r === 'follower')).toHaveLength(99);
      expect(out.filter((o) => o.headers['x-linklens-flight'] === 'follower')).toHaveLength(99);
      const asked = site.requests.map((r) => r.url);
      expect(asked.filter((u) => u === '/story')).toHaveLength(1);
      expect(asked.filter((u) => u === '/og.png')).toHaveLength(1);
    } finally {
      h.cleanup();
    }
  });
});
