/**
 * The proxy route in whole previews, wired as the local server wires it (LINKPREVIEW_PROXY_URL,
 * LINKPREVIEW_PROXY_MODE, the walled-host memo in the local blob store): a site that walls direct
 * requests (it tells a proxied one by its source, 127.0.0.2) gives an ok record with its own fields
 * and hosted images through a real forward proxy on loopback, and every later request of the
 * preview to it (image, icon, the page's content images, the browser's requests) goes through the
 * proxy too; without a proxy the wall stays ok:false; a failing proxy is an ok:false record with
 * PROXY_FAILURE; the proxy's credentials appear in no log line, header or record.
 */
import type http from 'node:http';
import { browserAvailable } from '../../lib/browser/availability';
import { closeBrowser } from '../../lib/browser/browser';
import { loadConfig } from '../../lib/config';
import type { Resolver } from '../../lib/fetch/address-guard';
import { recordVersionsStored } from '../../lib/page/page-versions';
import { WALLS, walled } from '../fetch/wall-fixtures';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { type ForwardProxy, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { createTestHandler, recordingLog, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';

const HAS_BROWSER = browserAvailable(loadConfig(process.env));
const withBrowser = HAS_BROWSER ? test : test.skip;
jest.setTimeout(60_000);

const SECRET = 'pr0xy-Secret-77';
const CREDENTIALS = `linklens:${SECRET}`;
const CLOUDFLARE = WALLS.find((w) => w.kind === 'cloudflare-challenge')!;
const HOST = CLOUDFLARE.host;

/** Every test name is the fixture server. */
const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

let site: FixtureServer;
let proxy: ForwardProxy;
/** `path direct|proxy` for each request the walled site saw. */
const seen: string[] = [];

beforeAll(async () => {
  site = await startFixtureServer();
  proxy = await startForwardProxy({ credentials: CREDENTIALS });
  const image = await png(800, 420);
  const icon = await png(64, 64, { r: 20, g: 120, b: 200 });
  const note = (req: http.IncomingMessage) => seen.push(`${(req.url ?? '').split('?')[0]} ${viaProxy(req) ? 'proxy' : 'direct'}`);
  const real = (type: string, body: string | Buffer) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  };
  const routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
    [CLOUDFLARE.path]: real(
      'text/html; charset=utf-8',
      html(
        '<title>A walled product page</title><meta name="description" content="The page behind the challenge."><meta property="og:image" content="/og.png"><link rel="icon" href="/favicon.png"><script src="/app.js"></script>',
        `<article><h1>A walled product page</h1><p>${'Words of the article, long enough to be read. '.repeat(30)}</p><img src="/inline.png" alt="inline" width="800" height="420"><p>${'More words after the figure. '.repeat(30)}</p></article>`,
      ),
    ),
    '/og.png': real('image/png', image),
    '/inline.png': real('image/png', image),
    '/favicon.png': real('image/png', icon),
    '/app.js': real('text/javascript', 'document.title = document.title;'),
  };
  for (const [path, answer] of Object.entries(routes)) {
    site.route(path, (req, res) => {
      note(req);
      walled(CLOUDFLARE, viaProxy, answer)(req, res);
    });
  }
});

afterAll(async () => {
  await closeBrowser();
  await site.close();
  await proxy.close();
});

beforeEach(() => {
  seen.length = 0;
  proxy.log.length = 0;
  proxy.behaviour = 'ok';
});

const link = () => `http://${HOST}:${site.port}${CLOUDFLARE.path}`;

function handler(config: Record<string, unknown>, log = recordingLog()): TestHandler & { log: ReturnType<typeof recordingLog> } {
  return Object.assign(createTestHandler({ config, resolver, log }), { log });
}

test('fallback: the wall, then the page through the proxy: its own fields and hosted images; every later request to the host goes through the proxy', async () => {
  const h = handler({ proxyUrl: proxy.url(CREDENTIALS), proxyMode: 'fallback' });
  try {
    const res = await h.post(JSON.stringify({ link: link() }));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, type: 'PAGE', status: 200, title: 'A walled product page', description: 'The page behind the challenge.' });
    expect(res.json.image?.medium?.url).toMatch(/^http:\/\/assets\.test\//);
    expect(res.json.icon?.url).toMatch(/^http:\/\/assets\.test\//);
    expect(res.json.page?.markdownUrl).toBeDefined();
    expect(res.headers['x-linklens-route']).toBe('proxy-after-wall');
    expect(res.headers['server-timing']).toContain('route;desc="proxy-after-wall"');
    // The versions (with the content's image) are built after the record: once they are stored,
    // one direct request (the wall); the image, icon and the content's image jobs all went through the proxy.
    await recordVersionsStored(h.deps.blobs, res.json.page);
    expect(seen[0]).toBe(`${CLOUDFLARE.path} direct`);
    expect(seen.slice(1).filter((s) => s.endsWith('direct'))).toEqual([]);
    expect(seen).toEqual(expect.arrayContaining([`${CLOUDFLARE.path} proxy`, '/og.png proxy', '/favicon.png proxy', '/inline.png proxy']));
    // The log line says what the route saw; the proxy's credentials are nowhere.
    const preview = h.log.lines.find((l) => l.message === 'preview');
    expect(preview?.extra).toMatchObject({ route: 'proxy-after-wall', walls: [{ host: HOST, wall: 'cloudflare-challenge' }] });
    // The page, its image and icon before the record went out (the content's image comes after it).
    expect((preview?.extra?.proxied as number) >= 3).toBe(true);
    const everything = JSON.stringify({ lines: h.log.lines, headers: res.headers, body: res.body });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(Buffer.from(CREDENTIALS).toString('base64'));

    // The next preview of the host: the memo sends it to the proxy first, one round trip.
    seen.length = 0;
    const again = await h.post(JSON.stringify({ link: link() }));
    expect(again.json).toMatchObject({ ok: true, title: 'A walled product page' });
    expect(again.headers['x-linklens-route']).toBe('proxy');
    expect(seen[0]).toBe(`${CLOUDFLARE.path} proxy`);
    expect(seen.filter((s) => s.endsWith('direct'))).toEqual([]);
  } finally {
    h.cleanup();
  }
});

test('without a proxy the wall stays ok:false, and its title is never the record title', async () => {
  const h = handler({});
  try {
    const res = await h.post(JSON.stringify({ link: link() }));
    expect(res.json).toMatchObject({ ok: false, status: 403 });
    expect(String(res.json.title ?? '')).not.toMatch(/just a moment/i);
    expect(res.headers['x-linklens-route']).toBe('direct');
    expect(proxy.log).toEqual([]);
  } finally {
    h.cleanup();
  }
});

test.each([
  ['answers 502', 'status-502' as const, undefined],
  ['refuses the credentials (407)', 'ok' as const, 'linklens:wrong'],
])('a proxy that %s: an ok:false record with PROXY_FAILURE, never a 5xx', async (_name, behaviour, credentials) => {
  proxy.behaviour = behaviour;
  const h = handler({ proxyUrl: proxy.url(credentials ?? CREDENTIALS), proxyMode: 'always' });
  try {
    const res = await h.post(JSON.stringify({ link: link() }));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false, status: 0 });
    expect(res.headers['x-linklens-upstream-error']).toBe('PROXY_FAILURE');
    expect(res.headers['x-linklens-route']).toBe('proxy');
    expect(JSON.stringify({ lines: h.log.lines, res })).not.toContain(SECRET);
  } finally {
    h.cleanup();
  }
});

describe('each wall, as a whole preview', () => {
  let sites: FixtureServer;
  beforeAll(async () => {
    sites = await startFixtureServer();
    const image = await png(600, 315);
    // One server for every walled host: the Host header tells them apart.
    for (const w of WALLS) {
      // The image by its absolute URL: a platform's own rules (the retailer's) take it as it is.
      const realPage = html(
        `<title>The real page of ${w.host}</title><meta name="description" content="What ${w.host} shows a reader."><meta property="og:image" content="http://${w.host}:${sites.port}/og.png">`,
        `<p>${'Words of the page. '.repeat(30)}</p>`,
      );
      sites.route(w.path, (req, res) => {
        walled(w, viaProxy, (_q, r) => {
          r.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          r.end(realPage);
        })(req, res);
      });
    }
    sites.route('/accounts/login/', { body: html('<title>Login • Instagram</title>') });
    sites.route('/og.png', (req, res) => {
      const wall = WALLS[0];
      walled(wall, viaProxy, (_q, r) => {
        r.writeHead(200, { 'content-type': 'image/png' });
        r.end(image);
      })(req, res);
    });
  });
  afterAll(() => sites.close());

  const linkOf = (w: (typeof WALLS)[number]) => `http://${w.host}:${sites.port}${w.path}`;

  test.each(WALLS.map((w) => [w.kind, w] as const))('%s: without a proxy, ok:false and never the wall as the preview', async (_kind, w) => {
    const h = handler({});
    try {
      const res = await h.post(JSON.stringify({ link: linkOf(w) }));
      expect(res.statusCode).toBe(200);
      expect(res.json.ok).toBe(false);
      expect(String(res.json.title ?? '')).not.toMatch(/just a moment|access denied|robot|blocked|login|too many/i);
      expect(String(res.json.title ?? '')).not.toContain('The real page');
    } finally {
      h.cleanup();
    }
  });

  test.each(WALLS.map((w) => [w.kind, w] as const))("%s: through the proxy, ok:true with the page's own fields and its hosted image", async (_kind, w) => {
    const h = handler({ proxyUrl: proxy.url(CREDENTIALS), proxyMode: 'fallback', proxyMemoTtlMs: 0 });
    try {
      const res = await h.post(JSON.stringify({ link: linkOf(w) }));
      // Instagram's page is read by the photoshare platform, whose post title is its own.
      const title = w.kind === 'login-redirect' ? 'Instagram post' : `The real page of ${w.host}`;
      expect(res.json).toMatchObject({ ok: true, status: 200, title, description: `What ${w.host} shows a reader.` });
      expect(res.json.image?.medium?.url).toMatch(/^http:\/\/assets\.test\//);
      // Also when a platform's own source met the wall first (Reddit's API) and the link's fetch went straight to the proxy.
      expect(res.headers['x-linklens-route']).toBe('proxy-after-wall');
    } finally {
      h.cleanup();
    }
  });
});

test('the time budget holds through a proxy that never answers: a 200 record when the budget ends', async () => {
  proxy.behaviour = 'hang';
  const h = handler({ proxyUrl: proxy.url(CREDENTIALS), proxyMode: 'always', requestBudgetMs: 1500, fetchTimeoutMs: 20_000 });
  try {
    const res = await h.post(JSON.stringify({ link: link() }));
    expect(res.statusCode).toBe(200);
    expect(res.json.ok).toBe(false);
    // Only the budget (1.5 s) could stop the CONNECT that the proxy never answers (the fetch's own timeout is 20 s).
    expect(['PROXY_FAILURE', 'TIMEOUT']).toContain(res.headers['x-linklens-upstream-error']);
    expect(proxy.log).toEqual([`CONNECT 127.0.0.1:${site.port}`]);
  } finally {
    h.cleanup();
  }
});

test('the route reaches the metrics hook: requests through the proxy and the walls seen', async () => {
  const h = handler({ proxyUrl: proxy.url(CREDENTIALS), proxyMode: 'fallback', proxyMemoTtlMs: 0 });
  const routes: unknown[] = [];
  Object.assign(h.deps, { onRoute: (r: unknown) => routes.push(r) });
  try {
    await h.post(JSON.stringify({ link: link() }));
    expect(routes).toEqual([expect.objectContaining({ taken: 'proxy-after-wall', walls: [{ host: HOST, wall: 'cloudflare-challenge' }] })]);
    expect((routes[0] as { proxied: number }).proxied).toBeGreaterThan(0);
  } finally {
    h.cleanup();
  }
});

withBrowser("the browser's requests take the same route: the screenshot loads the walled page and its script through the proxy", async () => {
  const h = handler({ proxyUrl: proxy.url(CREDENTIALS), proxyMode: 'fallback', screenshots: 'on', screenshotWaitMs: 20_000, jobWaitMs: 20_000 });
  try {
    const res = await h.post(JSON.stringify({ link: link() }));
    expect(res.json).toMatchObject({ ok: true, title: 'A walled product page' });
    expect(res.json.page?.screenshot?.medium?.url).toMatch(/^http:\/\/assets\.test\//);
    // Only the browser asks for the script: through the proxy, as every request after the wall.
    expect(seen).toContain('/app.js proxy');
    expect(seen.filter((s) => s.endsWith('direct'))).toEqual([`${CLOUDFLARE.path} direct`]);
  } finally {
    h.cleanup();
  }
});
