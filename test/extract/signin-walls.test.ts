/**
 * Sign-in walls and robot checks known by their shape on any host (lib/extract/walls.ts): each
 * identity provider's real redirect, same-site sign-in redirects, a 401 asking for credentials,
 * captcha pages with any status; which of them the proxy is asked to get past; and the pages that
 * must not count (a site's own sign-in page asked for, an article whose URL says "login", an article
 * about robots with a reCAPTCHA in its comment form).
 */
import { detectWall, identityProvider, proxyWorthyWall, signInFrom, signInWallSite, wallUpstreamError } from '../../lib/extract/walls';
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
/** The trail of a fixture: the link, its hops, the sign-in page. */
const trailOf = (f: (typeof IDENTITY_PROVIDER_REDIRECTS)[number]) => [f, ...(f.via ?? []), f.to].map((h) => at(h.host, h.path));
const redirect = (f: (typeof IDENTITY_PROVIDER_REDIRECTS)[number]) => ({
  status: 200,
  headers: {},
  url: at(f.host, f.path),
  finalUrl: at(f.to.host, f.to.path),
  trail: trailOf(f),
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
    expect(signInWallSite('login-redirect', trailOf(f))).toBe('same-site');
  });

  it('each hop of a sign-in chain, as the fetcher sees it: the first hop into the sign-in is the wall', () => {
    // SharePoint Online: the site's own Authenticate.aspx (a sign-in segment with Source) is already a same-site wall
    // (the fetcher asks it again through a proxy); the next hops start on sign-in pages; the whole chain ends at Entra ID.
    const sp = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'SharePoint Online')!;
    const [link, authenticate, forms, entra] = trailOf(sp);
    expect(detectWall({ status: 302, headers: {}, url: link, finalUrl: authenticate })).toBe('login-redirect');
    expect(detectWall({ status: 302, headers: {}, url: forms, finalUrl: entra })).toBeUndefined();
    expect(detectWall(redirect(sp))).toBe('identity-provider');
    // Okta's SAML app URL is the identity provider already.
    const okta = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'Okta (SAML app)')!;
    expect(detectWall({ status: 302, headers: {}, url: trailOf(okta)[0], finalUrl: trailOf(okta)[1] })).toBe('identity-provider');
  });

  it("the page the link led to (signInFrom): before the first sign-in URL of the trail, through a short link and a site's own hops", () => {
    const sp = IDENTITY_PROVIDER_REDIRECTS.find((f) => f.name === 'SharePoint Online')!;
    expect(signInFrom(trailOf(sp))).toBe(at(sp.host, sp.path));
    expect(signInWallSite('identity-provider', trailOf(sp))).toBe('elsewhere');
    // A short link to a page whose site signs in on its own host: that site's, not the short link's.
    const short = ['https://bit.example/x', 'https://github.com/settings/profile', 'https://github.com/login?return_to=%2Fsettings%2Fprofile'];
    expect(signInFrom(short)).toBe('https://github.com/settings/profile');
    expect(signInWallSite('identity-provider', short)).toBe('same-site');
    const viaShort = { status: 200, headers: {}, url: short[0], finalUrl: 'https://wiki.example-corp.test/login?next=%2Fpages%2F42' };
    expect(detectWall({ ...viaShort, trail: [short[0], 'https://wiki.example-corp.test/pages/42', viaShort.finalUrl] })).toBe('login-redirect');
    // Google Docs signs in on accounts.google.com: the same site (google.com), the sign-in page's name and icon.
    const docs = IDENTITY_PROVIDER_REDIRECTS[0];
    expect(signInWallSite('identity-provider', trailOf(docs))).toBe('same-site');
  });

  it("the providers' real paths (docs/proxy.md), and what is none of theirs", () => {
    for (const url of [
      'https://accounts.google.com/accountchooser/signinchooser?continue=https%3A%2F%2Fmyaccount.google.com%2F&flowName=GlifWebSignIn',
      'https://accounts.google.com/signin/v2/identifier?continue=x&flowName=GlifWebSignIn&flowEntry=ServiceLogin',
      'https://accounts.google.com/o/oauth2/v2/auth?client_id=x&redirect_uri=y&response_type=code&scope=openid',
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/wsfed?wa=wsignin1.0&wtrealm=urn%3asharepoint',
      'https://login.windows.net/common/oauth2/authorize?client_id=x',
      'https://acme.okta.com/oauth2/v1/authorize?client_id=x&response_type=code',
      'https://acme.okta.com/login/login.htm?fromURI=%2Foauth2%2Fv1%2Fauthorize%2Fredirect%3Fokta_key%3Dabc',
      'https://tenant.auth0.com/login?state=abc&client=def&protocol=oauth2',
      'https://account.apple.com/sign-in',
      'https://acme.slack.com/?redir=%2Ffiles-pri%2FT1-F1%2Fplan.pdf',
    ])
      expect([url, identityProvider(url)]).toEqual([url, expect.any(String)]);
    for (const url of ['https://acme.slack.com/', 'https://slack.com/intl/en-gb/', 'https://login.microsoftonline.net/x', 'https://www.apple.com/sign-in-news'])
      expect([url, identityProvider(url)]).toEqual([url, undefined]);
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
