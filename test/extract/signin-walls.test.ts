/**
 * Sign-in walls and robot checks known by their shape on any host (lib/extract/walls.ts): each
 * identity provider's real redirect, same-site sign-in redirects, a 401 asking for credentials,
 * captcha pages with any status; which of them the proxy is asked to get past; and the pages that
 * must not count (a site's own sign-in page asked for, an article whose URL says "login", an article
 * about robots with a reCAPTCHA in its comment form).
 */
import { detectWall, identityProvider, proxyWorthyWall, wallUpstreamError } from '../../lib/extract/walls';
import {
  BASIC_AUTH_401,
  CAPTCHA_WITH_OG_TITLE,
  IDENTITY_PROVIDER_REDIRECTS,
  ROBOT_ARTICLE,
  ROBOT_CHECKS,
  SAME_SITE_REDIRECTS,
  signInPage,
} from '../fetch/signin-fixtures';
import { extract } from './helpers';

const at = (host: string, path: string) => `https://${host}${path}`;
const redirect = (f: (typeof IDENTITY_PROVIDER_REDIRECTS)[number]) => ({
  status: 200,
  headers: {},
  url: at(f.host, f.path),
  finalUrl: at(f.to.host, f.to.path),
});

describe('sign-in walls by shape', () => {
  it.each(IDENTITY_PROVIDER_REDIRECTS.map((f) => [f.name, f]))('a redirect to an identity provider (%s): a wall no proxy gets past', (_name, f) => {
    expect(detectWall(redirect(f))).toBe('identity-provider');
    expect(proxyWorthyWall(redirect(f))).toBeUndefined();
    expect(wallUpstreamError('identity-provider')).toBe('LOGIN_REQUIRED');
  });

  it.each(SAME_SITE_REDIRECTS.map((f) => [f.name, f]))('a same-site redirect to a sign-in path (%s): a wall the proxy is asked to get past', (_name, f) => {
    expect(detectWall(redirect(f))).toBe('login-redirect');
    expect(proxyWorthyWall(redirect(f))).toBe('login-redirect');
  });

  it('the five platforms keep their own login walls', () => {
    const base = { status: 200, headers: {} };
    expect(detectWall({ ...base, url: 'https://www.linkedin.com/posts/x', finalUrl: 'https://www.linkedin.com/authwall?trk=gf' })).toBe('login-redirect');
    expect(detectWall({ ...base, url: 'https://www.facebook.com/groups/1/', finalUrl: 'https://www.facebook.com/checkpoint/?next' })).toBe('login-redirect');
    expect(detectWall({ ...base, url: 'https://www.tiktok.com/@a/video/1', finalUrl: 'https://www.tiktok.com/login?redirect_url=x' })).toBe('login-redirect');
  });

  it('a 401 asking for credentials; a 401 without WWW-Authenticate is no sign-in wall', () => {
    const url = at(BASIC_AUTH_401.host, BASIC_AUTH_401.path);
    const input = { status: 401, url, finalUrl: url, headers: BASIC_AUTH_401.headers, head: BASIC_AUTH_401.body };
    expect(detectWall(input)).toBe('login-required');
    expect(proxyWorthyWall(input)).toBeUndefined();
    expect(detectWall({ ...input, headers: { 'content-type': 'text/html' } })).toBeUndefined();
  });

  it('must not count: the sign-in page asked for, an identity provider asked for, an article whose URL says "login", another site\'s /login', () => {
    const base = { status: 200, headers: {} };
    // The site's own /login page is the link (no redirect, or to its own canonical form).
    expect(detectWall({ ...base, url: 'https://wiki.example-corp.test/login', finalUrl: 'https://wiki.example-corp.test/login' })).toBeUndefined();
    expect(detectWall({ ...base, url: 'https://wiki.example-corp.test/login', finalUrl: 'https://wiki.example-corp.test/login/?lang=en' })).toBeUndefined();
    expect(detectWall({ ...base, url: 'https://github.com/login', finalUrl: 'https://github.com/login' })).toBeUndefined();
    expect(
      detectWall({ ...base, url: 'https://accounts.google.com/ServiceLogin', finalUrl: 'https://accounts.google.com/v3/signin/identifier?x=1' }),
    ).toBeUndefined();
    // Articles about logging in, redirected or not.
    const article = 'https://blog.example-news.test/2026/11/why-login-pages-fail';
    expect(detectWall({ ...base, url: article, finalUrl: article })).toBeUndefined();
    expect(
      detectWall({ ...base, url: 'https://blog.example-news.test/p/123', finalUrl: 'https://blog.example-news.test/2026/how-login-works?next=1' }),
    ).toBeUndefined();
    expect(
      detectWall({ ...base, url: 'https://blog.example-news.test/p/124', finalUrl: 'https://blog.example-news.test/login-security-tips' }),
    ).toBeUndefined();
    // A redirect to another site's /login is no same-site sign-in redirect.
    expect(detectWall({ ...base, url: 'https://short.example-links.test/x', finalUrl: 'https://other.example-site.test/login' })).toBeUndefined();
    // Okta's and Auth0's own sites are not sign-in pages.
    expect(identityProvider('https://www.okta.com/blog/2026/login-trends/')).toBeUndefined();
    expect(identityProvider('https://auth0.com/blog/login')).toBeUndefined();
  });

  it("the record: ok:false, no title, description or image of the sign-in page; the site name when the sign-in page is the site's own", async () => {
    const own = await extract(signInPage('Example Wiki'), {
      url: 'https://wiki.example-corp.test/pages/42',
      finalUrl: 'https://wiki.example-corp.test/login?next=%2Fpages%2F42',
    });
    expect(own).toMatchObject({ wall: 'login-redirect', siteName: 'Example Wiki' });
    expect(own.title).toBeUndefined();
    expect(own.description).toBeUndefined();
    expect(own.image).toBeUndefined();
    expect(own.icons.length).toBeGreaterThan(0);
    const idp = await extract(signInPage('Google Accounts'), {
      url: 'https://wiki.acme-corp.example/display/ENG',
      finalUrl: 'https://accounts.google.com/ServiceLogin?continue=x',
    });
    expect(idp.wall).toBe('identity-provider');
    expect(idp.title).toBeUndefined();
    expect(idp.siteName).toBeUndefined();
    expect(idp.icons).toEqual([]);
  });
});

describe('robot checks by shape', () => {
  it.each(ROBOT_CHECKS.map((c) => [c.name, c]))('a captcha page on any host (%s): a wall the proxy is asked to get past', (_name, c) => {
    const url = at(c.host, c.path);
    const input = { status: c.status, url, finalUrl: url, headers: { 'content-type': 'text/html' }, head: c.body, size: c.body.length };
    expect(detectWall(input)).toBe('robot-check');
    expect(proxyWorthyWall(input)).toBe('robot-check');
    expect(wallUpstreamError('robot-check')).toBeUndefined();
  });

  it('read as a page: a wall with the status seen, no wall title kept', async () => {
    const c = ROBOT_CHECKS[0];
    const r = await extract(c.body, { url: at(c.host, c.path), status: c.status });
    expect(r.wall).toBe('robot-check');
  });

  it('must not count: an article about robots with a reCAPTCHA in its comment form; a small form page with an Open Graph title', async () => {
    const url = at(ROBOT_ARTICLE.host, ROBOT_ARTICLE.path);
    const article = await extract(ROBOT_ARTICLE.body, { url });
    expect(article.wall).toBeUndefined();
    expect(article.title).toBe('Robots in the warehouse');
    expect(detectWall({ status: 200, url, finalUrl: url, headers: {}, head: ROBOT_ARTICLE.body, size: ROBOT_ARTICLE.body.length })).toBeUndefined();
    const contact = await extract(CAPTCHA_WITH_OG_TITLE, { url: 'https://www.example-co.test/contact' });
    expect(contact.wall).toBeUndefined();
    // The robot words alone, no captcha: a page.
    const words = await extract('<html><head><title>Not a robot</title></head><body><p>A film review: not a robot, verify you are human.</p></body></html>');
    expect(words.wall).toBeUndefined();
  });
});
