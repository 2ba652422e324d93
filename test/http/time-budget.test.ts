/**
 * One time budget per request (lib/budget.ts): every phase draws from it, and when it ends the
 * record built so far is answered with a 200. An upstream that stalls each phase in turn, with a
 * 1.5 s budget and every phase's own timeout far larger (20 s), so only the budget can stop them.
 * Each preview must come back, a 200, with what was known before the stall, and show that the
 * budget (or a platform's slice of it) stopped the stall: the stalled upstream request was still
 * unanswered when the record came, its connection was then closed by our side (the fixture never
 * closes it), and the preview log line says `outOfTime` when the whole budget ran out. No elapsed
 * time is asserted; `npm run bench -- hostile` prints how long a stalled page and a stalled image take.
 * When a platform's slice stops the stall, the test checks what the rest of the budget was used
 * for (a fetch after the budget's end fails at once), not whether the generic preview's jobs
 * also finished before the end: that depends on the machine's load (a cold CPU pool alone can
 * take most of the rest).
 */

import type http from 'node:http';
import { createObservability } from '../../functions/observability';
import { createLambdaPreviewHandler } from '../../functions/preview';
import { buildLocalDeps } from '../../functions/wiring';
import { BUDGET_MARGIN_MS, budgetedFetcher, InvocationBudget, TimeBudget } from '../../lib/budget';
import type { Config } from '../../lib/config';
import { SUBFETCH_LIMITS } from '../../lib/extract/extract-page';
import { OEMBED_LIMITS } from '../../lib/extract/oembed-source';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import type { Fetcher } from '../../lib/fetch/types';
import { createApiHandler } from '../../lib/http/api-handler';
import type { HttpResponse } from '../../lib/http/preview-handler';
import type { JobRunner } from '../../lib/ports';
import { html } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, recordingLog, silentLog, TEST_KEY } from '../helpers/service';
import { image, page, startWorld, type World } from '../platforms/harness';

const BUDGET_MS = 1500;
const SLOW: Partial<Config> = { requestBudgetMs: BUDGET_MS, fetchTimeoutMs: 20_000, jobWaitMs: 20_000 };

/** A stalled upstream request: its response, and when our side closed its connection. */
interface Stall {
  path: string;
  res: http.ServerResponse;
  closedByClient: Promise<void>;
}
const stalls: Stall[] = [];
function track(req: http.IncomingMessage, res: http.ServerResponse): void {
  stalls.push({ path: req.url ?? '/', res, closedByClient: new Promise<void>((resolve) => res.on('close', () => resolve())) });
}
/** Never answers. */
const stall = (req: http.IncomingMessage, res: http.ServerResponse) => {
  track(req, res); /* the socket stays open until the client closes it */
};
/** Answers the headers and the start of the body, then stalls. */
const stallAfter = (contentType: string, start: string | Buffer) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  track(req, res);
  res.writeHead(200, { 'content-type': contentType });
  res.write(start);
};
const log = recordingLog();

const REPO_PAGE = html('<title>skyfolk/paper-kite: the generic page</title><meta name="description" content="Read generically">', '<p>repository</p>');

let w: World;
const saved = { oembed: OEMBED_LIMITS.timeoutMs, manifest: SUBFETCH_LIMITS.timeoutMs };

beforeAll(async () => {
  OEMBED_LIMITS.timeoutMs = 20_000;
  SUBFETCH_LIMITS.timeoutMs = 20_000;
  // codehost's API and repository page on hosts of their own, apart from the generic fetch of the link.
  w = await startWorld({ config: SLOW, env: { LINKPREVIEW_GITHUB_API_URL: 'https://gh-api', LINKPREVIEW_GITHUB_BASE_URL: 'https://gh' } });
  Object.assign(w.handler.deps, { log });
  const s = w.server;
  // The page fetch.
  s.route('/page-stalls', stall);
  s.route(
    '/body-stalls',
    stallAfter(
      'text/html; charset=utf-8',
      '<!doctype html><html><head><title>Known before the stall</title><meta name="description" content="Head arrived"></head><body><p>',
    ),
  );
  // A redirect hop's target.
  s.route('/hop', { status: 302, headers: { location: '/hop-target' } });
  s.route('/hop-target', stall);
  // Platform (codehost): the API and the repository page stall; the generic page answers.
  s.route('/gh-api/repos/stalled/api', stall);
  s.route('/gh/stalled/api', stall);
  s.route('/github.com/stalled/api', page(REPO_PAGE));
  // The generic fallback after the platform failed (an API error, no repository page): it stalls.
  s.route('/gh-api/repos/broken/api', { status: 500, headers: { 'content-type': 'application/json' }, body: '{}' });
  s.route('/gh/broken/api', { status: 404, body: 'no' });
  s.route('/github.com/broken/api', stall);
  // A short link resolved to a platform URL: the second resolution's API stalls.
  s.route('/sho.rt/kite', { status: 301, headers: { location: `${w.origin}/github.com/short/kite` } });
  s.route('/github.com/short/kite', page(html('<title>Fetched through the short link</title><link rel="manifest" href="/kite.webmanifest">')));
  s.route('/github.com/kite.webmanifest', { headers: { 'content-type': 'application/manifest+json' }, body: '{"name":"Kite"}' });
  s.route('/gh-api/repos/short/kite', stall);
  s.route('/gh/short/kite', stall);
  // Sub-fetches: the oEmbed endpoint and the manifest stall.
  s.route(
    '/with-oembed',
    page(
      html(
        `<title>Page with an oEmbed</title><link rel="alternate" type="application/json+oembed" href="/oembed-stalls"><link rel="manifest" href="/manifest-stalls">`,
      ),
    ),
  );
  s.route('/oembed-stalls', stall);
  s.route('/manifest-stalls', stallAfter('application/manifest+json', '{"name":'));
  // A job: the og:image never finishes downloading (the icon does).
  s.route('/with-image', page(html('<title>Page with a slow image</title><meta property="og:image" content="/slow.png"><link rel="icon" href="/icon.png">')));
  // The same with a player its og:video names (found in the extract step, no fetch).
  s.route(
    '/with-player',
    page(
      html(
        '<title>Page with a player</title><meta property="og:image" content="/slow.png"><meta property="og:video:url" content="https://www.youtube.com/embed/dQw4w9WgXcQ"><meta property="og:video:type" content="text/html">',
      ),
    ),
  );
  s.route('/slow.png', stallAfter('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])));
  s.route('/icon.png', await image(32, 32));
});
afterAll(async () => {
  OEMBED_LIMITS.timeoutMs = saved.oembed;
  SUBFETCH_LIMITS.timeoutMs = saved.manifest;
  await w?.close();
});

/**
 * The preview, its `preview` log line, and the upstream requests that stalled during it, each
 * with whether its response had ended when the record came back.
 */
async function preview(link: string) {
  const [stalled, logged] = [stalls.length, log.lines.length];
  const res = await w.handler.post(JSON.stringify({ link }));
  const during = stalls.slice(stalled).map((st) => ({ ...st, endedAtAnswer: st.res.writableEnded }));
  return { res, record: res.json, stalls: during, logged: log.lines.slice(logged).find((l) => l.message === 'preview')?.extra ?? {} };
}

/**
 * Each of `paths` was asked for, stalled, and was still unanswered when the record came back;
 * then our side closed its connection (the abort of the budget or its slice: the fixture never
 * ends these responses, and the phases' own timeouts are 20 s).
 */
async function expectStopped(stalled: { path: string; endedAtAnswer: boolean; closedByClient: Promise<void> }[], paths: string[]) {
  expect(stalled.map((st) => st.path)).toEqual(expect.arrayContaining(paths));
  const mine = stalled.filter((st) => paths.includes(st.path));
  for (const st of mine) expect(st.endedAtAnswer).toBe(false);
  await Promise.all(mine.map((st) => st.closedByClient));
}

describe('each phase stalls in turn: a 200 with the record so far, at the budget', () => {
  test('the page never answers: ok:false, status 0, TIMEOUT', async () => {
    const link = w.server.url('/page-stalls');
    const { res, record, stalls: stalled, logged } = await preview(link);
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: false, type: 'UNKNOWN', status: 0, url: link, domain: '127.0.0.1', redirected: false });
    expect(res.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/page-stalls']);
  });

  test('the page sends its head, then stalls: the head is read (ok, title, description)', async () => {
    const { res, record, stalls: stalled, logged } = await preview(w.server.url('/body-stalls'));
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: true, type: 'PAGE', status: 200, title: 'Known before the stall', description: 'Head arrived' });
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/body-stalls']);
  });

  test("a redirect hop's target stalls: ok:false with the trail so far and the redirect's status", async () => {
    const { res, record, stalls: stalled, logged } = await preview(w.server.url('/hop'));
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: false, status: 302, redirected: true, redirectionTrail: [w.server.url('/hop'), w.server.url('/hop-target')] });
    expect(res.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/hop-target']);
  });

  test("a platform's API (and its page) stall: the platform gets part of the budget, the generic preview the rest", async () => {
    const { res, record, stalls: stalled } = await preview('https://github.com/stalled/api');
    expect(res.statusCode).toBe(200);
    // The platform's slice ended its stalled API call before the budget's end: the generic page
    // was then fetched in the rest, and read into the record.
    await expectStopped(stalled, ['/gh-api/repos/stalled/api']);
    expect(w.asked()).toEqual(expect.arrayContaining(['/gh-api/repos/stalled/api', '/github.com/stalled/api']));
    expect(record).toMatchObject({ ok: true, type: 'PAGE', status: 200, title: 'skyfolk/paper-kite: the generic page', description: 'Read generically' });
  });

  test('the generic fallback after a platform failure stalls: ok:false, TIMEOUT', async () => {
    const { res, record, stalls: stalled, logged } = await preview('https://github.com/broken/api');
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: false, status: 0, url: 'https://github.com/broken/api', domain: 'github.com' });
    expect(res.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/github.com/broken/api']);
  });

  test("a short link's second resolution stalls: the page already fetched is read generically", async () => {
    const { res, record, stalls: stalled, logged } = await preview('https://sho.rt/kite');
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({
      ok: true,
      type: 'PAGE',
      title: 'Fetched through the short link',
      redirected: true,
      redirectionUrl: 'https://github.com/short/kite',
    });
    // The second resolution's slice ended its stalled API call before the budget's end: the page
    // already fetched was read, and its manifest asked for in the rest, unless a loaded machine
    // spent the rest first (then the whole budget ran out: outOfTime). Which one is the machine's
    // speed, not the code's decision (the file's comment).
    await expectStopped(stalled, ['/gh-api/repos/short/kite']);
    expect(w.asked()).toContain('/gh-api/repos/short/kite');
    if (!w.asked().includes('/github.com/kite.webmanifest')) expect(logged.outOfTime).toBe(true);
  });

  test('the oEmbed and manifest sub-fetches stall: the page metadata is there', async () => {
    const { res, record, stalls: stalled, logged } = await preview(w.server.url('/with-oembed'));
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: true, type: 'PAGE', title: 'Page with an oEmbed' });
    expect(w.asked()).toEqual(expect.arrayContaining(['/oembed-stalls', '/manifest-stalls']));
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/oembed-stalls', '/manifest-stalls']);
  });

  test('an image job never finishes downloading: the record goes out without the image', async () => {
    const { res, record, stalls: stalled, logged } = await preview(w.server.url('/with-image'));
    expect(res.statusCode).toBe(200);
    expect(record).toMatchObject({ ok: true, type: 'PAGE', title: 'Page with a slow image' });
    expect(record.image).toBeUndefined();
    expect(w.asked()).toContain('/slow.png');
    expect(logged.outOfTime).toBe(true);
    await expectStopped(stalled, ['/slow.png']);
  });
});

describe('a phase that ignores the budget', () => {
  test('a job runner that never answers: the record so far goes out just after the budget', async () => {
    let asked = 0;
    const never: JobRunner = {
      run: () => {
        asked++;
        return new Promise(() => {});
      },
    };
    const stuckLog = recordingLog();
    const h = createTestHandler({ config: SLOW });
    const handler = createApiHandler({ ...h.deps, jobs: never, log: stuckLog });
    const out = (await handler(
      httpApiEvent(
        { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
        Buffer.from(JSON.stringify({ link: w.server.url('/with-image') })),
      ),
      { awsRequestId: 'stuck' },
    )) as HttpResponse;
    h.cleanup();
    expect(out.statusCode).toBe(200);
    expect(JSON.parse(out.body)).toMatchObject({ ok: true, type: 'PAGE', title: 'Page with a slow image' });
    // The jobs were asked for and never answered: the budget's cut-off sent the record without them.
    expect(asked).toBeGreaterThan(0);
    expect(stuckLog.lines.find((l) => l.message === 'preview')?.extra).toMatchObject({ ok: true, outOfTime: true });

    // A page with a player: the record cut off keeps the player, found before the cut.
    const withPlayer = createTestHandler({ config: SLOW });
    const cut = (await createApiHandler({ ...withPlayer.deps, jobs: never, log: silentLog })(
      httpApiEvent(
        { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
        Buffer.from(JSON.stringify({ link: w.server.url('/with-player') })),
      ),
      { awsRequestId: 'stuck-player' },
    )) as HttpResponse;
    withPlayer.cleanup();
    expect(JSON.parse(cut.body)).toMatchObject({
      ok: true,
      title: 'Page with a player',
      embed: { type: 'video', url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', provider: 'YouTube' },
    });
  });
});

describe('the Lambda: the budget is cut to the invocation remaining time', () => {
  test('createLambdaPreviewHandler with 3 s left answers a 200 before they run out, whatever the configured budget', async () => {
    const config = { ...w.handler.config, requestBudgetMs: 25_000 };
    const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' });
    const budget = new InvocationBudget(config.requestBudgetMs);
    const handler = createLambdaPreviewHandler({
      config,
      obs: createObservability('linklens-budget-test', { ...config, logLevel: 'silent' }),
      budget,
      deps,
    });
    const event = httpApiEvent(
      { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      Buffer.from(JSON.stringify({ link: w.server.url('/page-stalls') })),
    );
    const before = stalls.length;
    const invocationEnds = Date.now() + 3000;
    const out = (await handler(event, { awsRequestId: 'lambda-short', getRemainingTimeInMillis: () => invocationEnds - Date.now() } as never)) as HttpResponse;
    const stalled = stalls.slice(before).map((st) => ({ ...st, endedAtAnswer: st.res.writableEnded }));
    expect(out.statusCode).toBe(200);
    expect(JSON.parse(out.body)).toMatchObject({ ok: false, status: 0, url: w.server.url('/page-stalls') });
    expect(out.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
    // The request's budget ended the margin before the invocation (no Lambda timeout), although the
    // configured budget (25 s) and the fetch timeout (20 s) are far longer: the remaining time cut it.
    expect(budget.deadline()).toBeLessThanOrEqual(invocationEnds - BUDGET_MARGIN_MS);
    await expectStopped(stalled, ['/page-stalls']);
  });
});

describe('TimeBudget', () => {
  test('the deadline is the earlier of the configured budget and the remaining time less the margin', () => {
    const now = Date.now();
    const a = TimeBudget.start({ budgetMs: 25_000, remainingMs: 10_000, marginMs: 1500, now });
    const b = TimeBudget.start({ budgetMs: 5000, remainingMs: 28_000, now });
    const c = TimeBudget.start({ budgetMs: 5000, now });
    expect([a.deadline - now, b.deadline - now, c.deadline - now]).toEqual([8500, 5000, 5000]);
    for (const x of [a, b, c]) x.end();
    expect(a.expired).toBe(true);
  });

  test('a slice ends with its parent; a phase timeout is cut to what is left', () => {
    const parent = new TimeBudget(Date.now() + 60_000);
    const part = parent.slice(0.5);
    expect(part.deadline).toBeLessThanOrEqual(parent.deadline);
    expect(parent.cap(1000)).toBe(1000);
    expect(parent.cap(120_000)).toBeLessThanOrEqual(60_000);
    parent.end();
    expect(part.signal.aborted).toBe(true);
  });

  test('a fetch under a spent budget fails at once as a TIMEOUT; otherwise its timeout is cut and the budget signal passed', async () => {
    const seen: { timeoutMs: number; signal?: AbortSignal }[] = [];
    const inner: Fetcher = async (url, options) => {
      seen.push({ timeoutMs: options.timeoutMs, signal: options.signal });
      return { url, finalUrl: url, status: 200, headers: {}, body: Buffer.alloc(0), truncated: false, trail: [url] };
    };
    const live = new TimeBudget(Date.now() + 2000);
    await budgetedFetcher(inner, live)('http://x.test/', { maxBytes: 1, timeoutMs: 20_000 });
    expect(seen[0].timeoutMs).toBeLessThanOrEqual(2000);
    expect(seen[0].signal).toBeDefined();
    live.end();
    const spent = new TimeBudget(Date.now() - 1);
    await expect(budgetedFetcher(inner, spent)('http://x.test/', { maxBytes: 1, timeoutMs: 20_000 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    await expect(budgetedFetcher(inner, spent)('http://x.test/', { maxBytes: 1, timeoutMs: 20_000 })).rejects.toBeInstanceOf(FetchFailure);
    expect(seen).toHaveLength(1);
  });
});
