/**
 * The host rules' table (lib/fetch/host-rules.ts): LINKPREVIEW_HOST_RULES parsed at start (a
 * malformed rule refused, named), matched first rule first (hosts with their subdomains, `*.`
 * wildcards, path prefixes, `*`), the former host lists as entries of the same table (with a
 * warning naming the new form), the `proxy` rules driving the proxy route, and `deny` in the
 * guarded fetcher: the link, a redirect hop and a sub-fetch into a denied host are never asked.
 */
import { ConfigError, configWarnings, loadConfig } from '../../lib/config';
import { LinkNotAllowedError } from '../../lib/errors';
import { FetchFailure } from '../../lib/fetch/fetch-failure';
import { HostRules, hostRulesOf, readHostRules, showHostRules, withProxyHosts } from '../../lib/fetch/host-rules';
import { proxyPolicyFrom, RouteState, routeViaProxy } from '../../lib/fetch/proxy-route';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { closedGuardFetcher } from '../helpers/service';

const rulesOf = (text: string, env: Record<string, string> = {}) => hostRulesOf(loadConfig({ LINKPREVIEW_HOST_RULES: text, ...env }));
const actions = (text: string, url: string) => [...rulesOf(text).verdict(url).actions].sort();

describe('parsing', () => {
  test('an ordered list of pattern=actions; spaces, case and empty rules are forgiven', () => {
    const rules = loadConfig({
      LINKPREVIEW_HOST_RULES: ' Intranet.Example=deny ; wiki.example/reset/=deny;;photos.example=metadata-only, no-embed;*.shop.example=proxy,render;*=allow ',
    }).hostRules;
    expect(rules.map((r) => [r.pattern, r.actions])).toEqual([
      ['intranet.example', ['deny']],
      ['wiki.example/reset/', ['deny']],
      ['photos.example', ['metadata-only', 'no-embed']],
      ['*.shop.example', ['proxy', 'render']],
      ['*', ['allow']],
    ]);
    expect(loadConfig({}).hostRules).toEqual([]);
  });

  test.each([
    ['intranet.example', 'has no "="'],
    ['intranet.example=', 'has no action'],
    ['intranet.example=block', 'unknown action "block"'],
    ['intranet.example=deny,proxy', 'deny goes alone'],
    ['http://intranet.example=deny', 'is not a host'],
    ['intra net.example=deny', 'is not a host'],
    ['intranet.example:8080=deny', 'is not a host'],
    ['*/reset/=deny', 'is not a host'],
    ['=deny', 'is not a host'],
  ])('%s is refused at start, the rule named', (rule, why) => {
    const load = () => loadConfig({ LINKPREVIEW_HOST_RULES: `good.example=allow;${rule}` });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`LINKPREVIEW_HOST_RULES: rule "${rule}"`);
    expect(load).toThrow(why);
    expect(typeof readHostRules(rule)).toBe('string');
  });
});

describe('matching: the first rule that matches decides', () => {
  test('a host matches itself and its subdomains; *. its subdomains only; not a longer name', () => {
    expect(actions('example.com=deny', 'https://example.com/')).toEqual(['deny']);
    expect(actions('example.com=deny', 'https://a.b.EXAMPLE.com./x')).toEqual(['deny']);
    expect(actions('example.com=deny', 'https://notexample.com/')).toEqual([]);
    expect(actions('*.example.com=proxy', 'https://www.example.com/')).toEqual(['proxy']);
    expect(actions('*.example.com=proxy', 'https://example.com/')).toEqual([]);
  });

  test('a path prefix matches the paths under it only', () => {
    const text = 'wiki.example/reset/=deny';
    expect(actions(text, 'https://wiki.example/reset/abc123')).toEqual(['deny']);
    expect(actions(text, 'https://eu.wiki.example/reset/abc123')).toEqual(['deny']);
    expect(actions(text, 'https://wiki.example/page')).toEqual([]);
    expect(actions(text, 'https://wiki.example/resetting')).toEqual([]);
  });

  test('first match wins: an allow before *=deny opens its host alone (the closed mode)', () => {
    const text = 'docs.example=allow;*=deny';
    expect(actions(text, 'https://docs.example/a')).toEqual(['allow']);
    expect(rulesOf(text).denies('https://docs.example/a')).toBeUndefined();
    expect(rulesOf(text).denies('https://other.example/')?.pattern).toBe('*');
    expect(actions('a.example=metadata-only;a.example=deny', 'https://a.example/')).toEqual(['metadata-only']);
  });
});

describe('the former host lists: entries of the same table, with a warning', () => {
  test('LINKPREVIEW_PROXY_HOSTS and LINKPREVIEW_RENDER_HOSTS add proxy and render, never to a deny', () => {
    const env = { LINKPREVIEW_PROXY_HOSTS: 'amazon.com,*.reddit.com', LINKPREVIEW_RENDER_HOSTS: 'app.example' };
    const table = rulesOf('smile.amazon.com=metadata-only;old.reddit.com=deny', env);
    expect([...table.verdict('https://www.amazon.com/dp/1').actions]).toEqual(['proxy']);
    expect([...table.verdict('https://smile.amazon.com/').actions].sort()).toEqual(['metadata-only', 'proxy']);
    expect([...table.verdict('https://reddit.com/r/x').actions]).toEqual(['proxy']);
    expect([...table.verdict('https://old.reddit.com/r/x').actions]).toEqual(['deny']);
    expect(table.verdict('https://app.example/').by.get('render')?.source).toBe('LINKPREVIEW_RENDER_HOSTS');
    expect(rulesOf('app.example=render').verdict('https://app.example/').by.get('render')?.source).toBe('LINKPREVIEW_HOST_RULES');
  });

  test('each one set warns at start, naming the rules to write instead', () => {
    expect(configWarnings({ LINKPREVIEW_PROXY_HOSTS: 'amazon.com, *.reddit.com', LINKPREVIEW_RENDER_HOSTS: 'app.example' })).toEqual([
      'LINKPREVIEW_PROXY_HOSTS is still read, as entries of the host rules: set LINKPREVIEW_HOST_RULES="amazon.com=proxy;reddit.com=proxy" instead',
      'LINKPREVIEW_RENDER_HOSTS is still read, as entries of the host rules: set LINKPREVIEW_HOST_RULES="app.example=render" instead',
    ]);
    expect(configWarnings({ LINKPREVIEW_HOST_RULES: 'a.example=proxy', LINKPREVIEW_PROXY_HOSTS: '' })).toEqual([]);
  });

  test('the proxy route takes its hosts from the table: a proxy rule, or a listed host', async () => {
    const config = loadConfig({
      LINKPREVIEW_PROXY_URL: 'http://127.0.0.1:9',
      LINKPREVIEW_PROXY_MODE: 'hosts',
      LINKPREVIEW_HOST_RULES: '*.shop.example=proxy',
      LINKPREVIEW_PROXY_HOSTS: 'amazon.com',
    });
    const policy = proxyPolicyFrom(config);
    if (!policy) throw new Error('no policy');
    const via = (host: string) => routeViaProxy(policy, new RouteState(), host, new URL(`https://${host}/x`));
    expect(await via('www.shop.example')).toBe(true);
    expect(await via('www.amazon.com')).toBe(true);
    expect(await via('example.org')).toBe(false);
  });
});

describe('a proxy host list written as rules of the table (withProxyHosts, what the CDK construct writes)', () => {
  const RULES = [
    '',
    'intranet.example=deny;*=allow',
    'amazon.com=allow;*=deny',
    '*.amazon.com=render;photos.example=metadata-only',
    'amazon.com/gp/=deny;amazon.com=render',
    'smile.amazon.com=no-embed;*.example=metadata-only',
    '*.shop.example=render;shop.example/cart/=deny;*=metadata-only',
    'www.reddit.com=proxy,render;reddit.com=allow',
  ];
  const HOSTS = [['amazon.com'], ['*.amazon.com', 'shop.example'], ['www.reddit.com', '.reddit.com'], ['a.shop.example']];
  const URLS = [
    'https://amazon.com/dp/1',
    'https://www.amazon.com/gp/cart',
    'https://amazon.com/gp/x',
    'https://smile.amazon.com/',
    'https://shop.example/cart/1',
    'https://a.shop.example/item',
    'https://b.shop.example/cart/2',
    'https://photos.example/p',
    'https://intranet.example/',
    'https://www.reddit.com/r/x',
    'https://old.reddit.com/r/x',
    'https://elsewhere.test/',
  ];

  test.each(RULES.flatMap((r) => HOSTS.map((h) => [r, h.join(',')])))(
    'rules "%s" with the hosts %s: the same verdict as the former list, for every URL',
    (text, hosts) => {
      const rules = loadConfig({ LINKPREVIEW_HOST_RULES: text }).hostRules;
      const former = hostRulesOf({ hostRules: rules, proxyHosts: hosts.split(',') });
      // Written as the variable's text and read back, as the functions read it.
      const written = readHostRules(showHostRules(withProxyHosts(rules, hosts.split(','))));
      if (typeof written === 'string') throw new Error(written);
      const merged = new HostRules(written);
      for (const url of URLS) expect([url, [...merged.verdict(url).actions].sort()]).toEqual([url, [...former.verdict(url).actions].sort()]);
    },
  );

  test('the rules read as an operator would write them: a narrowed copy before a wider rule, the hosts last', () => {
    const rules = loadConfig({ LINKPREVIEW_HOST_RULES: 'intranet.example=deny;*.example=render;*=allow' }).hostRules;
    expect(showHostRules(withProxyHosts(rules, ['shop.example', 'amazon.com']))).toBe(
      'intranet.example=deny;shop.example=render,proxy;*.example=render;shop.example=allow,proxy;amazon.com=allow,proxy;*=allow;shop.example=proxy;amazon.com=proxy',
    );
  });
});

describe('deny in the guarded fetcher: a denied URL is never asked', () => {
  let site: FixtureServer;
  const asked = () => site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`);

  beforeAll(async () => {
    site = await startFixtureServer({
      '/page': { body: html('<title>A page</title>') },
    });
    site.route('/hop', (_req, res) => {
      res.writeHead(302, { location: `http://denied.test:${site.port}/page` });
      res.end();
    });
  });
  afterAll(() => site.close());
  beforeEach(() => {
    site.requests.length = 0;
  });

  const fetcher = () => closedGuardFetcher([site.port], () => '127.0.0.1', { hostRules: rulesOf('denied.test=deny;open.test/secret/=deny') });
  const get = (url: string) => fetcher()(url, { maxBytes: 100_000, onTooLarge: 'fail', timeoutMs: 3000 });

  test('the link itself: LinkNotAllowedError (400 LINK_NOT_ALLOWED) naming the URL and the rule', async () => {
    const err = await get(`http://denied.test:${site.port}/page`).catch((e) => e);
    expect(err).toBeInstanceOf(LinkNotAllowedError);
    expect(err).toMatchObject({
      status: 400,
      errorCode: 'LINK_NOT_ALLOWED',
      details: { url: `http://denied.test:${site.port}/page`, hop: 0, rule: 'denied.test' },
    });
    const sub = await get(`http://www.denied.test:${site.port}/page`).catch((e) => e);
    expect(sub).toBeInstanceOf(LinkNotAllowedError);
    expect(asked()).toEqual([]);
  });

  test('a redirect hop into a denied host: an upstream failure LINK_NOT_ALLOWED, with the trail; the host is never asked', async () => {
    const err = await get(`http://open.test:${site.port}/hop`).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err).toMatchObject({ code: 'LINK_NOT_ALLOWED', status: 302, trail: [`http://open.test:${site.port}/hop`, `http://denied.test:${site.port}/page`] });
    expect(asked()).toEqual(['open.test/hop']);
  });

  test('a path prefix: the paths under it only', async () => {
    await expect(get(`http://open.test:${site.port}/secret/token`)).rejects.toBeInstanceOf(LinkNotAllowedError);
    expect((await get(`http://open.test:${site.port}/page`)).status).toBe(200);
    expect(asked()).toEqual(['open.test/page']);
  });
});
