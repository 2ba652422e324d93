/**
 * An origin's "slow down" heard (lib/fetch/slow-down.ts) and at most N requests at once to one host
 * (lib/fetch/host-gate.ts), in the guarded fetcher against a loopback origin that counts requests.
 * Time is the memo's injected clock, never the machine's.
 */
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { HostGate } from '../../lib/fetch/host-gate';
import { RouteState } from '../../lib/fetch/proxy-route';
import { retryAfterMs, SlowDownMemo } from '../../lib/fetch/slow-down';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher, createTestHandler } from '../helpers/service';

describe('Retry-After, read and remembered', () => {
  test('both forms: delta-seconds and an HTTP date', () => {
    const now = Date.parse('2026-11-29T08:00:00Z');
    expect(retryAfterMs('60', now)).toBe(60_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 08:02:00 GMT', now)).toBe(120_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 07:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  test('honoured, capped, and forgotten after its time', () => {
    let now = 0;
    const memo = new SlowDownMemo(300_000, () => now);
    memo.heard('a.test', 429, '60');
    memo.heard('b.test', 503, '86400');
    memo.heard('c.test', 503, undefined);
    memo.heard('d.test', 429, undefined);
    memo.heard('e.test', 200, '60');
    expect(memo.held('a.test')).toEqual({ status: 429, until: 60_000 });
    expect(memo.held('b.test')?.until).toBe(300_000); // capped
    expect(memo.held('c.test')).toBeUndefined(); // no time said: not remembered
    expect(memo.held('d.test')).toBeUndefined();
    expect(memo.held('e.test')).toBeUndefined();
    now = 59_500;
    expect(memo.secondsLeft(memo.held('a.test')!)).toBe(1);
    now = 60_000;
    expect(memo.held('a.test')).toBeUndefined();
    expect(memo.held('b.test')).toBeDefined();
  });

  test('0 forgets at once', () => {
    const memo = new SlowDownMemo(0);
    memo.heard('a.test', 429, '60');
    expect(memo.held('a.test')).toBeUndefined();
  });
});

describe('the gate: at most N at once per host, first come first served', () => {
  test('the N+1st waits for a place, in order; a waiter whose time runs out leaves the queue', async () => {
    const gate = new HostGate(2);
    const order: string[] = [];
    const a = await gate.enter('h', 1000, () => new Error('late'));
    const b = await gate.enter('h', 1000, () => new Error('late'));
    expect(gate.active('h')).toBe(2);
    const noted = <T>(name: string, value: T) => {
      order.push(name);
      return value;
    };
    const c = gate.enter('h', 60_000, () => new Error('late')).then((leave) => noted('c', leave));
    const late = gate.enter('h', 0, () => new Error('late')).catch((e) => noted('late', e));
    const d = gate.enter('h', 60_000, () => new Error('late')).then((leave) => noted('d', leave));
    expect((await late).message).toBe('late');
    const other = await gate.enter('other', 0, () => new Error('late'));
    a();
    (await c)();
    b();
    (await d)();
    other();
    expect(order).toEqual(['late', 'c', 'd']);
    expect(gate.peak).toBe(2);
    expect(gate.active('h')).toBe(0);
  });
});

describe('in the fetcher', () => {
  let site: FixtureServer;
  let open = 0;
  let most = 0;
  beforeAll(async () => {
    site = await startFixtureServer({
      '/busy': { status: 429, headers: { 'retry-after': '60' }, body: 'slow down' },
      '/page': { body: html('<title>ok</title>') },
    });
    // Each answer is held until six are open at once (then none is): the most seen at once is the gate's, not the machine's speed.
    let six!: () => void;
    const sixOpen = new Promise<void>((r) => {
      six = r;
    });
    site.route('/slow', async (_req, res) => {
      open++;
      most = Math.max(most, open);
      if (open >= 6) six();
      await sixOpen;
      open--;
      res.end('done');
    });
  });
  afterAll(() => site.close());
  beforeEach(() => {
    site.requests.length = 0;
  });
  const opts = { maxBytes: 10_000, onTooLarge: 'fail' as const, timeoutMs: 10_000 };

  test('a host that answered 429 Retry-After: 60 is asked again only after 60 s; its other URLs wait too', async () => {
    let now = 1_000_000;
    const slowDown = new SlowDownMemo(600_000, () => now);
    const fetch = closedGuardFetcher([site.port], { 'busy.test': '127.0.0.1', 'calm.test': '127.0.0.1' }, { slowDown });
    expect((await fetch(`http://busy.test:${site.port}/busy`, opts)).status).toBe(429);
    for (const path of ['/busy', '/page']) {
      const err = await fetch(`http://busy.test:${site.port}${path}`, opts).catch((e) => e);
      expect(err).toBeInstanceOf(FetchFailure);
      expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfter: 60 });
    }
    expect((await fetch(`http://calm.test:${site.port}/page`, opts)).status).toBe(200);
    now += 59_000;
    await expect(fetch(`http://busy.test:${site.port}/page`, opts)).rejects.toMatchObject({ retryAfter: 1 });
    now += 1_000;
    expect((await fetch(`http://busy.test:${site.port}/page`, opts)).status).toBe(200);
    expect(site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`)).toEqual(['busy.test/busy', 'calm.test/page', 'busy.test/page']);
  });

  test('a preview’s route names each host it did not ask because of a slow-down, once (the log line and the SlowDownSkips metric)', async () => {
    const slowDown = new SlowDownMemo(600_000, () => 1_000_000);
    const fetch = closedGuardFetcher([site.port], { 'busy.test': '127.0.0.1', 'calm.test': '127.0.0.1' }, { slowDown });
    const route = new RouteState();
    expect((await fetch(`http://busy.test:${site.port}/busy`, { ...opts, route })).status).toBe(429);
    expect(route.summary().slowedDown).toBeUndefined();
    await fetch(`http://calm.test:${site.port}/page`, { ...opts, route });
    for (const path of ['/page', '/busy'])
      await expect(fetch(`http://BUSY.test.:${site.port}${path}`, { ...opts, route })).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(route.summary().slowedDown).toEqual(['busy.test']);
  });

  test('20 fetches of one host at once: the host sees at most 6 at a time, and every one is answered', async () => {
    most = 0;
    const fetch = closedGuardFetcher([site.port], { 'one.test': '127.0.0.1' }, { hostGate: new HostGate(6) });
    const all = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://one.test:${site.port}/slow`, opts)));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(most).toBe(6);
  });

  test('previews of a host that said 429 Retry-After: 60, one after another: one request, every record says when', async () => {
    const h = createTestHandler({ resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      const link = `http://busy.test:${site.port}/busy`;
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await h.post(JSON.stringify({ link })));
      expect(site.requests).toHaveLength(1);
      expect(answers[0].json).toMatchObject({ ok: false, status: 429, retryAfter: 60 });
      for (const a of answers.slice(1)) {
        expect(a.json).toMatchObject({ ok: false, status: 429 });
        expect(a.json.retryAfter).toBeGreaterThanOrEqual(59);
        expect(a.headers['x-linklens-upstream-error']).toBe('RATE_LIMITED');
        expect(Number(a.headers['x-linklens-retry-after'])).toBe(a.json.retryAfter);
      }
    } finally {
      h.cleanup();
    }
  });
});
