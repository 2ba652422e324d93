/**
 * Sign-in walls and robot checks in whole previews, on loopback with the real host names in the
 * test's own resolution: every identity provider's redirect is ok:false with LOGIN_REQUIRED and no
 * "Sign in" card; a same-site sign-in redirect keeps the site's name and, with a proxy in
 * `fallback` mode, is asked again through it; a 401 asking for credentials; captcha pages with 200
 * and 503; and the pages that must not count.
 */
import type http from 'node:http';
import type { Resolver } from '../../lib/fetch/address-guard';
import {
  BASIC_AUTH_401,
  IDENTITY_PROVIDER_REDIRECTS,
  ROBOT_ARTICLE,
  ROBOT_CHECKS,
  SAME_SITE_REDIRECTS,
  type SignInFixture,
  signInPage,
} from '../fetch/signin-fixtures';
import { walled } from '../fetch/wall-fixtures';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { type ForwardProxy, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { createTestHandler } from '../helpers/service';
import { png } from '../platforms/harness';

jest.setTimeout(60_000);

/** Every name is the fixture server. */
const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
let site: FixtureServer;
let proxy: ForwardProxy;
const seen: string[] = [];

const redirectTo = (f: SignInFixture) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(302, { location: `http://${f.to.host}:${site.port}${f.to.path}`, 'content-type': 'text/html' });
  res.end();
};
const answer =
  (status: number, body: string, headers: Record<string, string> = {}) =>
  (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  };

beforeAll(async () => {
  site = await startFixtureServer();
  proxy = await startForwardProxy({});
  const icon = await png(64, 64);
  site.route('/favicon.png', (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(icon);
  });
  for (const f of [...IDENTITY_PROVIDER_REDIRECTS, ...SAME_SITE_REDIRECTS]) {
    site.route(f.path.split('?')[0], redirectTo(f));
    site.route(f.to.path.split('?')[0], answer(200, signInPage('Example Site')));
  }
  // A same-site sign-in redirect to direct requests; the real page through the proxy.
  const real = answer(200, html('<title>The team page</title><meta name="description" content="What members read.">', '<p>Members only.</p>'));
  site.route('/walled/team', (req, res) => {
    seen.push(viaProxy(req) ? 'proxy' : 'direct');
    walled(
      { kind: 'login-redirect', host: '', path: '', status: 302, headers: { location: '/login?next=%2Fwalled%2Fteam' }, body: '' },
      viaProxy,
      real,
    )(req, res);
  });
  site.route(BASIC_AUTH_401.path, answer(BASIC_AUTH_401.status, BASIC_AUTH_401.body, BASIC_AUTH_401.headers));
  for (const c of ROBOT_CHECKS) site.route(c.path, answer(c.status, c.body));
  site.route(ROBOT_ARTICLE.path, answer(200, ROBOT_ARTICLE.body));
  site.route('/login', answer(200, signInPage('Example Site')));
  site.route('/2026/11/why-login-pages-fail', answer(200, html('<title>Why login pages fail</title>', `<article><p>${'Words. '.repeat(50)}</p></article>`)));
});

afterAll(async () => {
  await site.close();
  await proxy.close();
});

async function preview(link: string, config: Record<string, unknown> = {}) {
  const h = createTestHandler({ config, resolver });
  try {
    return await h.post(JSON.stringify({ link }));
  } finally {
    h.cleanup();
  }
}
const url = (host: string, path: string) => `http://${host}:${site.port}${path}`;

test.each(IDENTITY_PROVIDER_REDIRECTS.map((f) => [f.name, f]))('a redirect to %s sign-in: ok:false, LOGIN_REQUIRED, no sign-in card', async (_name, f) => {
  const res = await preview(url(f.host, f.path));
  expect(res.statusCode).toBe(200);
  expect(res.json).toMatchObject({ ok: false, status: 200, redirected: true });
  expect(res.json.title ?? '').not.toMatch(/sign in/i);
  expect(res.json.description ?? '').not.toMatch(/sign in/i);
  expect(res.json.image).toBeUndefined();
  expect(res.headers['x-linklens-upstream-error']).toBe('LOGIN_REQUIRED');
});

test.each(SAME_SITE_REDIRECTS.map((f) => [f.name, f]))(
  'a same-site redirect to %s: ok:false, LOGIN_REQUIRED, the site name and icon kept',
  async (_name, f) => {
    const res = await preview(url(f.host, f.path));
    expect(res.json).toMatchObject({ ok: false, status: 200, siteName: 'Example Site' });
    expect(res.json.title).toBeUndefined();
    expect(res.json.icon?.url).toBeDefined();
    expect(res.headers['x-linklens-upstream-error']).toBe('LOGIN_REQUIRED');
  },
);

test('a same-site sign-in redirect is asked again through the proxy in fallback mode', async () => {
  seen.length = 0;
  const res = await preview(url('www.example-team.test', '/walled/team'), { proxyUrl: proxy.url(), proxyMode: 'fallback' });
  expect(res.json).toMatchObject({ ok: true, title: 'The team page' });
  expect(res.headers['x-linklens-route']).toBe('proxy-after-wall');
  expect(res.headers['x-linklens-upstream-error']).toBeUndefined();
  expect(seen).toEqual(['direct', 'proxy']);
});

test('an identity provider redirect is not asked again through the proxy', async () => {
  const f = IDENTITY_PROVIDER_REDIRECTS[0];
  const res = await preview(url(f.host, f.path), { proxyUrl: proxy.url(), proxyMode: 'fallback' });
  expect(res.json).toMatchObject({ ok: false });
  expect(res.headers['x-linklens-route']).toBe('direct');
  expect(res.headers['x-linklens-upstream-error']).toBe('LOGIN_REQUIRED');
});

test('a 401 asking for credentials: ok:false, status 401, LOGIN_REQUIRED', async () => {
  const res = await preview(url(BASIC_AUTH_401.host, BASIC_AUTH_401.path));
  expect(res.json).toMatchObject({ ok: false, status: 401 });
  expect(res.headers['x-linklens-upstream-error']).toBe('LOGIN_REQUIRED');
});

test.each(ROBOT_CHECKS.map((c) => [c.name, c]))('a robot check (%s): ok:false with the status seen', async (_name, c) => {
  const res = await preview(url(c.host, c.path));
  expect(res.json).toMatchObject({ ok: false, status: c.status });
});

test('a robot check with 503 through a proxy in fallback mode is asked again', async () => {
  const c = ROBOT_CHECKS.find((r) => r.status === 503)!;
  const res = await preview(url(c.host, c.path), { proxyUrl: proxy.url(), proxyMode: 'fallback' });
  expect(res.headers['x-linklens-route']).toBe('proxy-after-wall');
});

test('must not count: the site\'s own /login asked for, an article whose URL says "login", an article about robots with a reCAPTCHA', async () => {
  const login = await preview(url('wiki.example-corp.test', '/login'));
  expect(login.json).toMatchObject({ ok: true, title: 'Sign in to Example Site' });
  expect(login.headers['x-linklens-upstream-error']).toBeUndefined();
  const article = await preview(url('blog.example-news.test', '/2026/11/why-login-pages-fail'));
  expect(article.json).toMatchObject({ ok: true, title: 'Why login pages fail' });
  const robots = await preview(url(ROBOT_ARTICLE.host, ROBOT_ARTICLE.path));
  expect(robots.json).toMatchObject({ ok: true, title: 'Robots in the warehouse' });
});
