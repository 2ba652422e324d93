/**
 * Issue 50, "Walls by evidence, not by words": each vector of the attacker's review, one test each.
 * Normal pages that were reported as walls (a title, a captcha form or a sign-in path segment was
 * enough), walls that were missed (an OpenID Connect redirect, a login form as the only content, a
 * meta refresh to a sign-in), and a captcha page at 503 that kept its title. The pages are the
 * corpus's (test/extract/wall-corpus/).
 */
import { isConsentPage, proxyWorthyWall, wallUpstreamError } from '../../lib/extract/walls';
import { ROBOT_CHECKS } from '../fetch/signin-fixtures';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';
import { extract } from './helpers';
import { NOT_WALLS } from './wall-corpus/pages';
import type { CorpusCase } from './wall-corpus/shape';
import { WALLS } from './wall-corpus/walls';

const named = (name: string): CorpusCase => {
  const c = [...NOT_WALLS, ...WALLS].find((x) => x.name === name);
  if (!c) throw new Error(`no corpus case ${name}`);
  return c;
};
const read = (c: CorpusCase) => extract(c.body, { url: c.url, finalUrl: c.finalUrl, status: c.status, headers: c.headers });

describe('normal pages are not walls (3)', () => {
  it('an article titled "Checking your browser for WebGPU support", with og:title', async () => {
    const r = await read(named('article "Checking your browser for WebGPU support" with og:title'));
    expect(r.wall).toBeUndefined();
    expect(r.title).toBe('Checking your browser for WebGPU support');
  });

  it('"Access to this page has been denied: what a 403 means"', async () => {
    const r = await read(named('article "Access to this page has been denied: what a 403 means"'));
    expect(r.wall).toBeUndefined();
  });

  it('"How to get past Amazon\'s Robot Check page" on a site that is not Amazon', async () => {
    const r = await read(named('article "How to get past Amazon\'s Robot Check page" on a site that is not Amazon'));
    expect(r.wall).toBeUndefined();
  });

  it('an article titled "Just a moment..." with og:title keeps its title', async () => {
    const r = await read(named('article titled "Just a moment..." with og:title'));
    expect(r.wall).toBeUndefined();
    expect(r.title).toBe('Just a moment...');
  });

  it('a short contact page with a reCAPTCHA form and "Please confirm you are human"', async () => {
    const r = await read(named('short contact page with a reCAPTCHA form and "Please confirm you are human"'));
    expect(r.wall).toBeUndefined();
  });

  it('a reCAPTCHA explainer with a demo form', async () => {
    const r = await read(named('reCAPTCHA explainer with a demo form'));
    expect(r.wall).toBeUndefined();
  });

  it('an article reached through a 301 to /docs/sso/login?from=/moved-docs: no LOGIN_REQUIRED', async () => {
    const r = await read(named('article reached through a 301 to /docs/sso/login?from=/moved-docs'));
    expect(r.wall).toBeUndefined();
    expect(wallUpstreamError(r.wall)).toBeUndefined();
    expect(r.title).toBe('Signing in with SSO');
  });
});

describe('walls that were missed (4)', () => {
  it('a Keycloak sign-in redirect (/protocol/openid-connect/auth?redirect_uri=…): LOGIN_REQUIRED, no "Sign in to acme"', async () => {
    const r = await read(named('Keycloak OpenID Connect redirect'));
    expect(r.wall).toBe('identity-provider');
    expect(wallUpstreamError(r.wall)).toBe('LOGIN_REQUIRED');
    expect(r.title).toBeUndefined();
  });

  it('a 200 page with "Please log in to continue" and a password form, and no content', async () => {
    const r = await read(named('a 200 page whose only content is a login form'));
    expect(r.wall).toBe('login-form');
    expect(wallUpstreamError(r.wall)).toBe('LOGIN_REQUIRED');
    expect(r.title).toBeUndefined();
  });

  it('a meta refresh to /login?next=… (title "Redirecting…")', async () => {
    const r = await read(named('meta refresh to /login?next='));
    expect(r.wall).toBe('login-redirect');
    expect(r.title).toBeUndefined();
  });
});

describe('a wall record carries nothing of the wall page, whatever its status', () => {
  let server: FixtureServer;
  let svc: TestHandler;
  const captcha = ROBOT_CHECKS[0].body.replace('<title>example-outlet.test</title>', '<title>Please verify you are a human</title>');
  beforeAll(async () => {
    server = await startFixtureServer({
      '/captcha-503': { status: 503, headers: { 'content-type': 'text/html' }, body: captcha },
      '/captcha-200': { status: 200, headers: { 'content-type': 'text/html' }, body: captcha },
    });
    svc = createTestHandler();
  });
  afterAll(async () => {
    svc.cleanup();
    await server.close();
  });

  it.each([[503], [200]])('a captcha page answered with %d: ok:false, no title, description or image', async (status) => {
    const res = await svc.post(JSON.stringify({ link: server.url(`/captcha-${status}`) }));
    expect(res.json).toMatchObject({ ok: false, status });
    expect([res.json.title, res.json.description, res.json.image]).toEqual([undefined, undefined, undefined]);
  });
});

describe("the fetcher's look (the first 32 KB, no parse)", () => {
  it('an article whose first 32 KB are scripts, one sending to /login, is no wall to the fetcher either (no proxy retry, no walled host)', () => {
    const c = named('an article whose first 32 KB are inline scripts, one of them sending readers to /login');
    const body = Buffer.from(c.body);
    const head = body.subarray(0, 32 * 1024).toString('latin1');
    expect(proxyWorthyWall({ status: 200, url: c.url, finalUrl: c.url, headers: {}, head, size: body.length })).toBeUndefined();
  });
});

test('one consent check for the walls and YouTube: Google’s consent host, or its /ml or /consent path with the way back', () => {
  expect(isConsentPage('https://consent.youtube.com/ml?continue=https://www.youtube.com/watch?v=x')).toBe(true);
  expect(isConsentPage('https://consent.google.de/')).toBe(true);
  expect(isConsentPage('https://www.youtube.com/consent?continue=https://www.youtube.com/')).toBe(true);
  // Not Google's, or no way back: an article about consent, another site's consent path.
  expect(isConsentPage('https://consent.example.com/')).toBe(false);
  expect(isConsentPage('https://news.example/consent?continue=/x')).toBe(false);
  expect(isConsentPage('https://www.youtube.com/consent')).toBe(false);
  expect(isConsentPage('not a url')).toBe(false);
});
