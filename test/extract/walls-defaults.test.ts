import { DEFAULT_USER_AGENT } from '../../lib/config';
import type { LinkRecord } from '../../lib/contract/link';
import { finalize, titleFromUrl } from '../../lib/extract/defaults';
import { detectWall } from '../../lib/extract/walls';
import { fileNameFromDisposition } from '../../lib/fetch/headers';
import { hostProfileHeaders } from '../../lib/fetch/host-profiles';
import { PLATFORM_REGISTRY } from '../../lib/platforms/index';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';
import { extract, page } from './helpers';

describe('wall detection', () => {
  it('recognises Cloudflare, Amazon, DataDome challenge pages by their evidence and keeps no wall title', async () => {
    const cf = await extract(page('<title>Just a moment...</title>', '<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script>'), {
      status: 403,
    });
    expect(cf.wall).toBe('cloudflare-challenge');
    expect(cf.title).toBeUndefined();
    // Cloudflare's block page: 403 from Cloudflare with its error page (a title alone is no wall: below).
    const cf2 = await extract(
      page(
        '<title>Attention Required! | Cloudflare</title><link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/cf.errors.css">',
        '<div id="cf-wrapper"><div id="cf-error-details"><h1>Sorry, you have been blocked</h1></div></div>',
      ),
      { status: 403, headers: { server: 'cloudflare', 'cf-ray': '8e2a1b3c4d5e6f71-LHR' } },
    );
    expect(cf2.wall).toBe('cloudflare-challenge');
    const amazon = await extract(
      page('<title dir="ltr">Amazon.com</title>', '<form action="/errors/validateCaptcha"><p>Enter the characters you see below</p></form>'),
      { url: 'https://www.amazon.com/dp/B000', status: 503 },
    );
    expect(amazon.wall).toBe('amazon-robot-check');
    const robot = await extract(
      page('<title>Robot Check</title>', '<form method="get" action="/errors/validateCaptcha"><img src="/captcha/Captcha_abc.jpg"></form>'),
      {
        url: 'https://www.amazon.de/dp/B000',
      },
    );
    expect(robot.wall).toBe('amazon-robot-check');
    const dd = await extract(page('<title>example.test</title>', '<script src="https://ct.captcha-delivery.com/c.js"></script>'), {
      status: 403,
      headers: { 'x-datadome': 'protected' },
    });
    expect(dd.wall).toBe('datadome');
  });

  it('a wall title alone is no wall (the evidence rule: formerly "Attention Required! | Cloudflare" at 403 and "Robot Check" on Amazon were)', async () => {
    expect(
      (await extract(page('<title>Attention Required! | Cloudflare</title><meta property="og:title" content="Attention Required! | Cloudflare">'))).wall,
    ).toBeUndefined();
    expect((await extract(page('<title>Robot Check</title>'), { url: 'https://www.amazon.de/dp/B000' })).wall).toBeUndefined();
  });

  it('recognises consent and login redirects, and nothing on ordinary pages', () => {
    const base = { status: 200, headers: {} };
    expect(detectWall({ ...base, url: 'https://www.youtube.com/watch?v=abc', finalUrl: 'https://consent.youtube.com/m?continue=x' })).toBe('consent-redirect');
    expect(detectWall({ ...base, url: 'https://www.instagram.com/p/abc/', finalUrl: 'https://www.instagram.com/accounts/login/?next=/p/abc/' })).toBe(
      'login-redirect',
    );
    expect(detectWall({ ...base, url: 'https://x.com/someone/status/1', finalUrl: 'https://x.com/i/flow/login?redirect_after_login=%2Fsomeone' })).toBe(
      'login-redirect',
    );
    expect(detectWall({ ...base, url: 'https://news.test/a', finalUrl: 'https://news.test/a' })).toBeUndefined();
  });

  it('keeps nothing of a wall page, an Open Graph title included; a refusal with a wall title but no evidence is no wall', async () => {
    const r = await extract(
      page(
        '<title>Just a moment...</title><meta property="og:title" content="The real title"><meta property="og:description" content="Real description">',
        '<script>window._cf_chl_opt={cType: "managed"};</script><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>',
      ),
      { status: 503, headers: { server: 'cloudflare' } },
    );
    expect(r.wall).toBe('cloudflare-challenge');
    expect([r.title, r.description, r.image]).toEqual([undefined, undefined, undefined]);
    const words = await extract(
      page('<title>Just a moment...</title><meta property="og:title" content="The real title"><meta property="og:description" content="Real description">'),
      { status: 503 },
    );
    expect(words).toMatchObject({ title: 'The real title', description: 'Real description' });
    expect(words.wall).toBeUndefined();
  });
});

describe('host profiles', () => {
  const profiles = PLATFORM_REGISTRY.hostProfiles;
  it('sends the SOCS consent cookie to YouTube and a preview-bot User-Agent to hosts that serve bots clean HTML', () => {
    expect(hostProfileHeaders('https://www.youtube.com/watch?v=1', DEFAULT_USER_AGENT, profiles).cookie).toMatch(/(^|; )SOCS=CAI(;|$)/);
    expect(hostProfileHeaders('https://youtu.be/1', DEFAULT_USER_AGENT, profiles).cookie).toContain('SOCS=');
    const ig = hostProfileHeaders('https://www.instagram.com/p/x/', DEFAULT_USER_AGENT, profiles)['user-agent'];
    expect(ig).toContain('facebookexternalhit');
    expect(ig).toContain('linklens');
    expect(hostProfileHeaders('https://example.com/', DEFAULT_USER_AGENT, profiles)).toEqual({});
    expect(DEFAULT_USER_AGENT).toContain('linklens');
  });
});

describe('inferred defaults', () => {
  const rec = (over: Partial<LinkRecord>): LinkRecord => ({
    id: 1,
    ok: true,
    updatedAt: '',
    url: 'https://site.test/',
    domain: 'site.test',
    type: 'PAGE',
    status: 200,
    redirected: false,
    ...over,
  });

  it('title: page -> humanized last URL segment -> domain; description: page -> site name -> empty', () => {
    expect(finalize(rec({ url: 'https://site.test/blog/my-first_post.html' }))).toMatchObject({ title: 'my first post', description: '' });
    expect(finalize(rec({ url: 'https://site.test/' }))).toMatchObject({ title: 'site.test', description: '' });
    expect(finalize(rec({ url: 'https://site.test/123456' })).title).toBe('site.test');
    expect(finalize(rec({ title: 'Own' }), { siteName: 'The Site' })).toMatchObject({ title: 'Own', description: 'The Site' });
    expect(finalize(rec({ title: 'T', description: 'D' }), { siteName: 'S' }).description).toBe('D');
  });

  it('non-HTML: the title is the file name (Content-Disposition, else the URL)', () => {
    expect(finalize(rec({ type: 'DOCUMENT', url: 'https://site.test/files/annual-report-2024.pdf' })).title).toBe('annual-report-2024.pdf');
    expect(finalize(rec({ type: 'DOCUMENT', url: 'https://site.test/download?id=7' }), { fileName: 'Résumé.pdf' }).title).toBe('Résumé.pdf');
    expect(fileNameFromDisposition(`attachment; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf`)).toBe('Résumé.pdf');
    expect(fileNameFromDisposition('attachment; filename="a b.pdf"')).toBe('a b.pdf');
    expect(titleFromUrl('https://site.test/a/b/')).toBe('b');
  });

  it('leaves an ok:false record alone', () => {
    expect(finalize(rec({ ok: false })).title).toBeUndefined();
  });
});

describe('through the service', () => {
  let server: FixtureServer;
  let svc: TestHandler;
  beforeAll(async () => {
    server = await startFixtureServer({
      '/challenge': {
        status: 503,
        headers: { 'content-type': 'text/html', server: 'cloudflare' },
        body: page('<title>Just a moment...</title>', '<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>'),
      },
      '/bare/weekly-market-report': { body: '<html><body><div></div></body></html>' },
      '/article': { body: page('<meta property="og:site_name" content="The Harbour Times"><title>Bridge saved</title>', '<div>no paragraphs here</div>') },
    });
    svc = createTestHandler();
  });
  afterAll(async () => {
    svc.cleanup();
    await server.close();
  });

  it('a challenge page is ok:false with the status seen, never a preview titled "Just a moment..."', async () => {
    const res = await svc.post(JSON.stringify({ link: server.url('/challenge') }));
    expect(res.json).toMatchObject({ ok: false, status: 503, type: 'PAGE' });
    expect(res.json.title).toBeUndefined();
  });

  it('a successful page always has a title and a description', async () => {
    const bare = await svc.post(JSON.stringify({ link: server.url('/bare/weekly-market-report') }));
    expect(bare.json).toMatchObject({ ok: true, title: 'weekly market report', description: '' });
    const art = await svc.post(JSON.stringify({ link: server.url('/article') }));
    expect(art.json).toMatchObject({ ok: true, title: 'Bridge saved', description: 'The Harbour Times' });
  });

  it('the main fetch identifies linklens by default', async () => {
    await svc.post(JSON.stringify({ link: server.url('/article') }));
    const seen = server.requests.filter((r) => r.url === '/article').pop();
    expect(String(seen?.headers['user-agent'])).toContain('linklens');
  });
});
