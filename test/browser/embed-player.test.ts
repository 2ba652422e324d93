/**
 * Players in a real browser (the Chromium that screenshots use): a page's player on a stand-in
 * player origin (https on loopback under a name of its own, added with LINKPREVIEW_EMBED_ORIGINS as an operator would),
 * previewed through the local server, and its `embed.html` put as it is into a host page with no
 * CSP, where anything that ran would run. Two sources: the page's twitter:player, and an oEmbed
 * answer whose html carries a script, handlers and an iframe on the stand-in origin.
 *  - The player loads (its own page answers inside the frame);
 *  - the host page's canary shows that no provider script ran;
 *  - the iframe carries the sandbox, allow, loading and referrerpolicy attributes, nothing of the provider's.
 * Then the playground: typing the link and the key shows its player after "Load the player".
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { browserAvailable } from '../../lib/browser/availability';
import { SANDBOX } from '../../lib/client/players';
import { loadConfig } from '../../lib/config';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { startTestServer, TEST_KEY } from '../helpers/service';
import { makeTestCertificates } from '../helpers/tls-certs';

const config = loadConfig(process.env);
const HAS_BROWSER = browserAvailable(config);
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${config.browserPath}: embed player tests skipped\n`);
jest.setTimeout(120_000);

let player: https.Server;
let playerOrigin: string;
const playerRequests: string[] = [];
let site: FixtureServer;
let server: Awaited<ReturnType<typeof startTestServer>>;
let browser: Browser;
let context: BrowserContext;

const HOSTILE_OEMBED = (origin: string) => ({
  version: '1.0',
  type: 'video',
  title: 'Kites over the bay',
  provider_name: 'Stand-in',
  width: 640,
  height: 360,
  html: `<script>window.__canary = 'oembed script'</script><iframe src="${origin}/embed/2" width="640" height="360" onload="window.__canary = 'onload'" allow="autoplay; camera; microphone; geolocation" sandbox="allow-scripts allow-top-navigation allow-same-origin"></iframe><img src=x onerror="window.__canary = 'img'">`,
});

beforeAll(async () => {
  if (!HAS_BROWSER) return;
  // A name of its own (a bare IP address is no player address): Chromium maps it to loopback.
  const certs = makeTestCertificates(['player.test']);
  player = https.createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    playerRequests.push(req.url ?? '/');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>Stand-in player</title></head><body><p id="ok">player loaded</p></body></html>');
  });
  await new Promise<void>((resolve) => player.listen(0, '127.0.0.1', resolve));
  playerOrigin = `https://player.test:${(player.address() as AddressInfo).port}`;
  site = await startFixtureServer();
  const html = (head: string) => ({
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html><html lang="en"><head>${head}</head><body><p>The fireworks over the harbour, filmed from the pier.</p></body></html>`,
  });
  site.route(
    '/fireworks',
    html(
      `<title>Harbour fireworks</title><meta property="og:title" content="Harbour fireworks"><meta name="description" content="The fireworks over the harbour."><meta name="twitter:card" content="player"><meta name="twitter:player" content="${playerOrigin}/embed/1"><meta name="twitter:player:width" content="640"><meta name="twitter:player:height" content="360">`,
    ),
  );
  // No og:title: oEmbed is fetched for the title, and its iframe gives the player.
  site.route(
    '/kites',
    html(`<link rel="alternate" type="application/json+oembed" href="/kites.json"><meta name="description" content="Kites on the north beach.">`),
  );
  site.route('/kites.json', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(HOSTILE_OEMBED(playerOrigin)) });
  server = await startTestServer({ embedOrigins: [playerOrigin] });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: config.browserPath,
    headless: true,
    chromiumSandbox: false,
    args: ['--host-resolver-rules=MAP player.test 127.0.0.1'],
  });
  context = await browser.newContext({ ignoreHTTPSErrors: true });
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (server) {
    await server.close();
    server.cleanup();
  }
  await new Promise((resolve) => (player ? player.close(resolve) : resolve(undefined)));
});

async function preview(link: string): Promise<any> {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  });
  return res.json();
}

describe('embed.html in a host page', () => {
  withBrowser.each([
    ['a page’s twitter:player', '/fireworks', '/embed/1'],
    // (One with srcdoc gives no player at all: test/embed/safety.test.ts.)
    ['an oEmbed answer with a script, handlers, wide allow and sandbox, and an iframe', '/kites', '/embed/2'],
  ])('%s: the player loads, no provider script runs, the iframe has only our attributes', async (_name, path, playerPath) => {
    const record = await preview(site.url(path));
    expect(record.embed).toMatchObject({ url: `${playerOrigin}${playerPath}` });
    const before = playerRequests.length;
    // The host page: the embed's html as it is, no CSP, a canary.
    site.route(`/host${path}`, {
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: `<!doctype html><html lang="en"><head><title>Host</title><script>window.__canary = 'untouched'</script></head><body>${record.embed.html}</body></html>`,
    });
    const page = await context.newPage();
    await page.goto(site.url(`/host${path}`));
    const frame = page.frameLocator('iframe');
    expect(await frame.locator('#ok').textContent()).toBe('player loaded');
    expect(playerRequests.slice(before)).toEqual([playerPath]);
    expect(await page.evaluate('window.__canary')).toBe('untouched');
    const attrs = await page.evaluate("Object.fromEntries(Array.from(document.querySelector('iframe').attributes).map((a) => [a.name, a.value]))");
    expect(Object.keys(attrs as object).sort()).toEqual(['allow', 'loading', 'referrerpolicy', 'sandbox', 'src', 'style', 'title']);
    expect(attrs).toMatchObject({
      src: `${playerOrigin}${playerPath}`,
      sandbox: SANDBOX,
      allow: 'autoplay; encrypted-media; fullscreen; picture-in-picture',
      loading: 'lazy',
      referrerpolicy: 'strict-origin-when-cross-origin',
    });
    expect(await page.locator('script').count()).toBe(1); // the host's own
    await page.close();
  });
});

describe('the playground', () => {
  withBrowser('shows the player of a link only after "Load the player"', async () => {
    const page = await context.newPage();
    await page.goto(server.url);
    await page.waitForSelector('html[data-ready=true]');
    await page.fill('#link', site.url('/fireworks'));
    await page.fill('#key', TEST_KEY);
    const before = playerRequests.length;
    await page.click('button[type=submit]');
    await page.waitForSelector('#player:not([hidden])');
    expect(await page.locator('#player-facts').textContent()).toContain(`${playerOrigin}/embed/1`);
    // The record is shown (cards, facts): the player's origin has been asked nothing.
    expect(playerRequests.length).toBe(before);
    await page.click('#load-player');
    expect(await page.frameLocator('#player-box iframe').locator('#ok').textContent()).toBe('player loaded');
    expect(await page.locator('#player-box iframe').getAttribute('sandbox')).toBe(SANDBOX);
    await page.close();
  });
});
