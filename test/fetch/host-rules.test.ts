/**
 * The host rules' table (lib/fetch/host-rules.ts): LINKPREVIEW_HOST_RULES parsed at start (a
 * malformed rule refused, named), matched first rule first (hosts with their subdomains, `*.`
 * wildcards, path prefixes, `*`), the former host lists as entries of the same table (with a
 * warning naming the new form), the `proxy` rules driving the proxy route, and `deny` in the
 * guarded fetcher: the link, a redirect hop and a sub-fetch into a denied host are never asked.
 */
import { ConfigError, configWarnings, loadConfig } from '../../lib/config';
import { LinkNotAllowedError } from '../../lib/errors';
import { addressKeys, DENIED_ADDRESS_TIMES, DeniedAddresses } from '../../lib/fetch/denied-addresses';
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
    expect(actions('a.example/x/=metadata-only;a.example=deny', 'https://a.example/x/1')).toEqual(['metadata-only']);
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
      'intranet.example=deny;shop.example=render,proxy;*.example=render;amazon.com=allow,proxy;*=allow',
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

  // denied.test has an address of its own (never connected to): a host sharing it would be denied too.
  const fetcher = () =>
    closedGuardFetcher([site.port], (h) => (h.endsWith('denied.test') ? '127.0.0.9' : '127.0.0.1'), {
      hostRules: rulesOf('denied.test=deny;open.test/secret/=deny'),
    });
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

describe('a path rule matches every spelling of its path (rulePath)', () => {
  const denies = (rules: string, url: string) => rulesOf(rules).denies(url)?.pattern;

  test.each([
    'http://wiki.test/reset/token',
    'http://wiki.test/%72eset/token',
    'http://wiki.test/%2572eset/token',
    'http://wiki.test/Reset/token',
    'http://wiki.test/RESET/token',
    'http://wiki.test/reset;x/token',
    'http://wiki.test//reset/token',
    'http://wiki.test/a/../reset/token',
    'http://wiki.test/a/%2e%2e/reset/token',
    'http://wiki.test/%2Freset/token',
    'http://wiki.test/reset',
    'http://wiki.test/reset/',
  ])('wiki.test/reset/=deny refuses %s', (url) => {
    expect(denies('wiki.test/reset/=deny', url)).toBe('wiki.test/reset/');
  });

  test.each(['http://wiki.test/resetting', 'http://wiki.test/page/reset', 'http://wiki.test/', 'http://wiki.test/re/set/'])('and not %s', (url) => {
    expect(denies('wiki.test/reset/=deny', url)).toBeUndefined();
  });

  test('a rule written with capitals matches, and keeps its case as written', () => {
    const rules = loadConfig({ LINKPREVIEW_HOST_RULES: 'Wiki.Test/Account/ResetPassword=deny' }).hostRules;
    expect(rules[0].pattern).toBe('wiki.test/Account/ResetPassword');
    expect(showHostRules(rules)).toBe('wiki.test/Account/ResetPassword=deny');
    expect(denies('wiki.test/Account/ResetPassword=deny', 'http://wiki.test/Account/ResetPassword?token=abc')).toBe('wiki.test/Account/ResetPassword');
    expect(denies('wiki.test/Account/ResetPassword=deny', 'http://wiki.test/account/resetpassword')).toBe('wiki.test/Account/ResetPassword');
  });

  test.each([
    ['wiki.test/reset?x=1=deny', 'can never match: a path prefix never holds "?"'],
    ['wiki.test=deny;wiki.test/reset/=deny', 'can never match: the earlier rule "wiki.test=deny" decides every URL it names'],
    ['*=allow;a.test=deny', 'can never match: the earlier rule "*=allow"'],
    ['a.test/x/=allow;a.test/X/y=deny', 'can never match: the earlier rule "a.test/x/=allow"'],
    ['example.com=proxy;*.example.com=render', 'can never match'],
  ])('%s fails the start: %s', (text, why) => {
    expect(() => loadConfig({ LINKPREVIEW_HOST_RULES: text })).toThrow(why);
  });

  test('a narrower rule before a wider one is fine', () => {
    expect(() => loadConfig({ LINKPREVIEW_HOST_RULES: 'a.test/x/=allow;a.test=deny;*.example.com=render;example.com=proxy' })).not.toThrow();
  });
});

describe('deny on the address connected to', () => {
  let site: FixtureServer;
  const asked = () => site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`);
  beforeAll(async () => {
    site = await startFixtureServer({ '/page': { body: html('<title>A page</title>') }, '/reset/token': { body: html('<title>Reset</title>') } });
    site.route('/to-ip', (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.2:${site.port}/page` });
      res.end();
    });
    site.route('/to-encoded', (_req, res) => {
      res.writeHead(302, { location: `http://wiki.test:${site.port}/%2572eset/token` });
      res.end();
    });
  });
  afterAll(() => site.close());
  beforeEach(() => {
    site.requests.length = 0;
  });

  // blocked.test and its other name alias.test are 127.0.0.2; wiki.test and open.test are 127.0.0.1.
  const names: Record<string, string> = { 'blocked.test': '127.0.0.2', 'alias.test': '127.0.0.2', 'wiki.test': '127.0.0.1', 'open.test': '127.0.0.1' };
  const fetcher = (rules = 'blocked.test=deny;wiki.test/reset/=deny') =>
    closedGuardFetcher([site.port], names, { hostRules: rulesOf(rules), trustedAddresses: ['127.0.0.1', '127.0.0.2'] });
  const get = (url: string, rules?: string) => fetcher(rules)(url, { maxBytes: 100_000, onTooLarge: 'fail', timeoutMs: 3000 });

  test.each(['127.0.0.2', '2130706434', '0x7f.0.0.2', '127.2'])(
    'the denied host by its IP literal http://%s/: 400 LINK_NOT_ALLOWED, never asked',
    async (ip) => {
      const err = await get(`http://${ip}:${site.port}/page`).catch((e) => e);
      expect(err).toBeInstanceOf(LinkNotAllowedError);
      expect(err).toMatchObject({ errorCode: 'LINK_NOT_ALLOWED', details: { rule: 'blocked.test' } });
      expect(asked()).toEqual([]);
    },
  );

  test('another name for the same address: refused at connect time, as the rule (an ok:false LINK_NOT_ALLOWED)', async () => {
    const err = await get(`http://alias.test:${site.port}/page`).catch((e) => e);
    expect(err).toBeInstanceOf(FetchFailure);
    expect(err).toMatchObject({ code: 'LINK_NOT_ALLOWED' });
    expect(String(err.message)).toContain('blocked.test=deny');
    expect(asked()).toEqual([]);
  });

  test('a redirect to the denied address, and to an encoded path of a path rule: the fetch ends there', async () => {
    await expect(get(`http://open.test:${site.port}/to-ip`)).rejects.toMatchObject({ code: 'LINK_NOT_ALLOWED' });
    await expect(get(`http://open.test:${site.port}/to-encoded`)).rejects.toMatchObject({ code: 'LINK_NOT_ALLOWED' });
    expect(asked()).toEqual(['open.test/to-ip', 'open.test/to-encoded']);
  });

  test("a path rule holds on its host's address: the path is judged as the denied host's", async () => {
    // open.test is wiki.test's address: its /reset/ is wiki.test's /reset/, the rest is served.
    await expect(get(`http://open.test:${site.port}/Reset/token`)).rejects.toMatchObject({ code: 'LINK_NOT_ALLOWED' });
    await expect(get(`http://127.0.0.1:${site.port}/reset/token`)).rejects.toMatchObject({ errorCode: 'LINK_NOT_ALLOWED' });
    expect((await get(`http://open.test:${site.port}/page`)).status).toBe(200);
    expect(asked()).toEqual(['open.test/page']);
  });

  test('hosts on other addresses are not touched', async () => {
    expect((await get(`http://open.test:${site.port}/page`, 'blocked.test=deny')).status).toBe(200);
  });
});

describe('denied addresses, as pure classification (no connection)', () => {
  const rules = new HostRules(readHostRules('blocked.test=deny') as ReturnType<typeof readHostRules> & object);
  const resolver = async (host: string) => (host === 'blocked.test' ? [{ address: '11.0.0.2', family: 4 }] : []);

  test.each(['11.0.0.2', '::ffff:11.0.0.2', '::ffff:b00:2', '[::ffff:11.0.0.2]', '64:ff9b::b00:2', '2002:b00:2::1'])('%s is blocked.test', async (ip) => {
    const denied = new DeniedAddresses(rules, resolver);
    expect(await denied.hostsAt(ip)).toEqual(['blocked.test']);
    expect((await denied.denyingRule(new URL(`http://${ip.includes(':') && !ip.startsWith('[') ? `[${ip}]` : ip}/x`), ip))?.pattern).toBe('blocked.test');
  });

  test('184549378 is 11.0.0.2 once the URL parser has read it', () => {
    expect(new URL('http://184549378/').hostname).toBe('11.0.0.2');
  });

  test('a resolution is refreshed after a minute, and an address it no longer returns stays denied ten minutes, then goes', async () => {
    let now = 0;
    let answer = '11.0.0.2';
    const denied = new DeniedAddresses(
      rules,
      async () => [{ address: answer, family: 4 }],
      () => now,
    );
    expect(await denied.hostsAt('11.0.0.2')).toEqual(['blocked.test']);
    answer = '11.0.0.3';
    now = DENIED_ADDRESS_TIMES.refreshMs + 1;
    await denied.hostsAt('11.0.0.3'); // starts the refresh in the background
    await new Promise((r) => setImmediate(r));
    expect(await denied.hostsAt('11.0.0.3')).toEqual(['blocked.test']);
    expect(await denied.hostsAt('11.0.0.2')).toEqual(['blocked.test']);
    now = DENIED_ADDRESS_TIMES.keepMs + 2;
    expect(await denied.hostsAt('11.0.0.2')).toEqual([]);
  });

  test('addressKeys: one address in every IPv6 form that carries it', () => {
    expect(addressKeys('::ffff:11.0.0.2')).toContain('11.0.0.2');
    expect(addressKeys('not an address')).toEqual([]);
  });
});
