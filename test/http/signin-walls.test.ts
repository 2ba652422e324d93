/**
 * Sign-in walls and robot checks in whole previews, on loopback with the real host names in the
 * test's own resolution: every identity provider's redirect is ok:false with LOGIN_REQUIRED and no
 * "Sign in" card; a same-site sign-in redirect keeps the site's name and, with a proxy in
 * `fallback` mode, is asked again through it; a 401 asking for credentials; captcha pages with 200
 * and 503; and the pages that must not count.
 */
import { loadConfig } from '../../lib/config';
import { identityProvider } from '../../lib/extract/walls';
import type { Resolver } from '../../lib/fetch/address-guard';
import { PLATFORMS } from '../../lib/platforms/index';
import { createRegistry } from '../../lib/platforms/registry';
import type { Platform } from '../../lib/platforms/types';
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
import { type FixtureServer, html, type RouteHandler, startFixtureServer } from '../helpers/fixture-server';
import { type ForwardProxy, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { createTestHandler } from '../helpers/service';
import { png } from '../platforms/harness';

jest.setTimeout(60_000);

/** Every name is the fixture server. */
/** Every name is the fixture; reports.contoso-apps.example at an address of its own (a host rule denies it, and a denied host's address is denied for every name). */
const resolver: Resolver = async (host) => [{ address: host === 'reports.contoso-apps.example' ? '127.0.0.2' : '127.0.0.1', family: 4 }];
let site: FixtureServer;
let proxy: ForwardProxy;
const seen: string[] = [];
/** `host/path` of every request the fixture saw. */
const asked = () => site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`);

/** Routes by host and path: `on(host, path, handler)`; a path asked on another host falls to `fallback` (404). */
const byHost = new Map<string, Map<string, RouteHandler>>();
function on(host: string, path: string, handler: RouteHandler): void {
  const p = path.split('?')[0].split('#')[0];
  let hosts = byHost.get(p);
  if (!hosts) {
    const table = new Map<string, RouteHandler>();
    byHost.set(p, table);
    hosts = table;
    site.route(p, (req, res) => (table.get(String(req.headers.host).split(':')[0]) ?? notFound)(req, res));
  }
  hosts.set(host, handler);
}
const notFound: RouteHandler = (_req, res) => {
  res.writeHead(404, { 'content-type': 'text/html' });
  res.end('<title>Not found</title>');
};
const redirectTo =
  (to: { host: string; path: string }): RouteHandler =>
  (_req, res) => {
    res.writeHead(302, { location: `http://${to.host}:${site.port}${to.path}`, 'content-type': 'text/html' });
    res.end();
  };
const answer =
  (status: number, body: string, headers: Record<string, string> = {}): RouteHandler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  };
/** A sign-in chain on its real hosts: the link, each hop, and the sign-in page, named as its provider names itself. */
function chain(f: SignInFixture, signInName: string): void {
  const hops = [f, ...(f.via ?? []), f.to];
  for (let i = 0; i < hops.length - 1; i++) on(hops[i].host, hops[i].path, redirectTo(hops[i + 1]));
  on(f.to.host, f.to.path, answer(200, signInPage(signInName)));
}

/** The sites of the identity providers' links whose sign-in is elsewhere, and the name each record gets. */
const OWN_SITES: Record<string, string> = {
  'SharePoint Online': 'contoso.sharepoint.com', // its home page signs in too: the host
  'an Entra ID app (v2.0)': 'Contoso Reports', // its public home page's name
  'Jira Cloud': 'acme.atlassian.net',
  'Okta (SAML app)': 'Acme Wiki', // the test's own platform on that host
  'Okta (OIDC)': 'tickets.acme-corp.example',
  Auth0: 'app.tool.example',
  'Sign in with Apple': 'notes.example-app.test',
};

/** A platform of the test's own on the wiki's host: its name is the site's. */
const wiki: Platform = {
  name: 'acmewiki',
  siteName: 'Acme Wiki',
  home: 'https://wiki.acme-corp.example',
  match: () => undefined,
  extract: async () => undefined,
};
const platforms = createRegistry([...PLATFORMS, wiki]);

beforeAll(async () => {
  site = await startFixtureServer();
  await site.alsoOn('127.0.0.2');
  proxy = await startForwardProxy({});
  const icon = await png(64, 64);
  const png64: RouteHandler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(icon);
  };
  site.route('/favicon.png', png64);
  site.route('/favicon.ico', png64);
  site.route('/brand.png', png64);
  for (const f of IDENTITY_PROVIDER_REDIRECTS) chain(f, identityProvider(`https://${f.to.host}${f.to.path}`) ?? 'Sign in');
  for (const f of SAME_SITE_REDIRECTS) chain(f, 'Example Site');
  // The sites' home pages: SharePoint's signs in too; the reports app's is public.
  on('contoso.sharepoint.com', '/', redirectTo(IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'SharePoint Online')!.to));
  on(
    'reports.contoso-apps.example',
    '/',
    answer(
      200,
      html(
        '<title>Contoso Reports</title><meta property="og:site_name" content="Contoso Reports"><link rel="icon" href="/brand.png">',
        '<p>Sign in to see the reports.</p>',
      ),
    ),
  );
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
  on('wiki.example-corp.test', '/login', answer(200, signInPage('Example Site')));
  on('www.example-team.test', '/login', answer(200, signInPage('Example Team')));
  site.route('/2026/11/why-login-pages-fail', answer(200, html('<title>Why login pages fail</title>', `<article><p>${'Words. '.repeat(50)}</p></article>`)));
});

afterAll(async () => {
  await site.close();
  await proxy.close();
});
beforeEach(() => {
  site.requests.length = 0;
});

async function preview(link: string, config: Record<string, unknown> = {}) {
  const h = createTestHandler({ config, resolver, platforms });
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
  expect(res.json).toMatchObject({ ok: false, status: 200, redirected: true, redirectionCount: 1 + (f.via?.length ?? 0) });
  expect(res.json.title ?? '').not.toMatch(/sign in/i);
  expect(res.json.description ?? '').not.toMatch(/sign in/i);
  expect(res.json.image).toBeUndefined();
  expect(res.headers['x-linklens-upstream-error']).toBe('LOGIN_REQUIRED');
  // The site's name and icon: the link's own site's when the sign-in is elsewhere, else the sign-in page's (the site's own).
  const provider = identityProvider(`https://${f.to.host}${f.to.path}`);
  expect(res.json.siteName).toBe(OWN_SITES[f.name] ?? provider);
  expect(res.json.icon?.url).toMatch(/^http:\/\/assets\.test\//);
  if (OWN_SITES[f.name]) {
    // Nothing of the identity provider's page but its status: nothing of its host was asked but the chain itself.
    const hops = [f, ...(f.via ?? []), f.to].map((h) => `${h.host}${h.path}`);
    expect(asked().filter((a) => a.startsWith(`${f.to.host}/`) && !hops.includes(a))).toEqual([]);
  }
});

test("another site's sign-in: the icon is the link's own site's (its home page's, else its /favicon.ico), never the provider's", async () => {
  const sp = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'SharePoint Online')!;
  await preview(url(sp.host, sp.path));
  expect(asked()).toContain('contoso.sharepoint.com/'); // its home, which signs in too
  expect(asked()).toContain('contoso.sharepoint.com/favicon.ico');
  site.requests.length = 0;
  const app = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'an Entra ID app (v2.0)')!;
  await preview(url(app.host, app.path));
  expect(asked()).toContain('reports.contoso-apps.example/brand.png');
  expect(asked().filter((a) => a.startsWith('login.microsoftonline.com/') && !a.includes('/oauth2/'))).toEqual([]);
});

test("another site's sign-in on a metadata-only host: the site's name, no icon asked or stored; a denied home page is never asked", async () => {
  const sp = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'SharePoint Online')!;
  const rules = loadConfig({ LINKPREVIEW_HOST_RULES: 'contoso.sharepoint.com=metadata-only' }).hostRules;
  const res = await preview(url(sp.host, sp.path), { hostRules: rules });
  expect(res.json).toMatchObject({ ok: false, siteName: 'contoso.sharepoint.com' });
  expect(res.json.icon).toBeUndefined();
  expect(asked()).not.toContain('contoso.sharepoint.com/favicon.ico');
  site.requests.length = 0;
  const app = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'an Entra ID app (v2.0)')!;
  const homeDenied = loadConfig({ LINKPREVIEW_HOST_RULES: 'reports.contoso-apps.example/dashboards/=allow;reports.contoso-apps.example=deny' }).hostRules;
  const r2 = await preview(url(app.host, app.path), { hostRules: homeDenied });
  expect(r2.json).toMatchObject({ ok: false, siteName: 'reports.contoso-apps.example' });
  expect(r2.json.icon).toBeUndefined();
  expect(asked().filter((a) => a.startsWith('reports.contoso-apps.example/'))).toEqual(['reports.contoso-apps.example/dashboards/7']);
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
