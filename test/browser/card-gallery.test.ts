/**
 * The card in a real browser (the Chromium that screenshots use, driven by playwright-core): the
 * gallery of records (test/client/card-gallery.ts) rendered two ways, at 320, 768 and 1280 px, in
 * light and dark, small and large:
 *  - `element`: `<linklens-card>` elements on a page with a strict CSP (no inline script or style);
 *  - `string`: `renderCard` on the server, `activateCard` in the page, on a page with no CSP at
 *    all, so a hostile string that got out as markup would run there.
 * Checked: nothing overflows; every image has its size, alt and lazy loading; no hostile string
 * ran (the page's canary); nothing is asked of the player's origin before the click, and the
 * player loads after it, sandboxed; axe-core finds no serious or critical violation.
 * `LINKLENS_UPDATE_DOCS=1` also writes the README's picture, docs/card-gallery.png.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { browserAvailable } from '../../lib/browser/availability';
import { cardStyles, renderCard } from '../../lib/client/card';
import { loadConfig } from '../../lib/config';
import type { LinkRecord } from '../../lib/contract/link';
import { galleryRecords, IMAGE_SIZES } from '../client/card-gallery';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { makeTestCertificates } from '../helpers/tls-certs';

const config = loadConfig(process.env);
const HAS_BROWSER = browserAvailable(config);
const withBrowser = HAS_BROWSER ? test : test.skip;
if (!HAS_BROWSER) process.stdout.write(`no browser at ${config.browserPath}: card gallery tests skipped\n`);
jest.setTimeout(180_000);

const WIDTHS = [320, 768, 1280];
const THEMES = ['light', 'dark'] as const;
const SIZES = ['large', 'small'] as const;
const MODES = ['element', 'string'] as const;

let site: FixtureServer;
let player: https.Server;
let playerOrigin: string;
const playerRequests: string[] = [];
let records: Record<string, LinkRecord>;
let browser: Browser;
let context: BrowserContext;

/** The bundle the gallery page loads: the card element, given the records, and a ready flag. */
async function galleryScript(): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    stdin: {
      contents: `import { activateCard, defineCardElement } from './lib/client/card-element.ts';
        defineCardElement();
        const records = JSON.parse(document.getElementById('records').textContent);
        for (const el of document.querySelectorAll('linklens-card')) el.record = records[el.dataset.name];
        activateCard(document, { playerOrigins: [document.body.dataset.playerOrigins] });
        window.__galleryReady = true;`,
      resolveDir: path.resolve(__dirname, '../..'),
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
  });
  return out.outputFiles[0].text;
}

const json = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

function galleryPage(mode: (typeof MODES)[number], theme: string, size: string, names = Object.keys(records)): string {
  const cards = names
    .map((name) =>
      mode === 'element'
        ? `<section aria-label="${name}"><linklens-card data-name="${name}" size="${size}" theme="${theme}" player-origins="${playerOrigin}"></linklens-card></section>`
        : `<section aria-label="${name}">${renderCard(records[name], { size: size as 'small', theme: theme as 'dark', playerOrigins: [playerOrigin] })}</section>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Card gallery</title><link rel="stylesheet" href="/page-${theme}.css"><script type="module" src="/gallery.js"></script></head>
<body data-player-origins="${playerOrigin}"><main><h1>Cards</h1>${cards}</main><script type="application/json" id="records">${json(records)}</script></body></html>`;
}

async function png(width: number, height: number, hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g" x2="0" y2="1"><stop offset="0" stop-color="hsl(${hue},55%,70%)"/><stop offset="1" stop-color="hsl(${hue + 30},45%,35%)"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${width * 0.7}" cy="${height * 0.35}" r="${height * 0.15}" fill="#fff8e0"/><path d="M0 ${height * 0.75} L${width * 0.3} ${height * 0.5} L${width * 0.55} ${height * 0.72} L${width * 0.8} ${height * 0.45} L${width} ${height * 0.7} V${height} H0Z" fill="hsl(${hue + 60},30%,25%)"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

beforeAll(async () => {
  if (!HAS_BROWSER) return;
  const certs = makeTestCertificates(['127.0.0.1']);
  player = https.createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    playerRequests.push(req.url ?? '/');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>Stand-in player</title></head><body><p id="ok">player loaded</p></body></html>');
  });
  await new Promise<void>((resolve) => player.listen(0, '127.0.0.1', resolve));
  playerOrigin = `https://127.0.0.1:${(player.address() as AddressInfo).port}`;
  site = await startFixtureServer();
  records = galleryRecords(site.origin, playerOrigin);
  const strict = `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; frame-src ${playerOrigin}`;
  const script = await galleryScript();
  site.route('/gallery.js', { headers: { 'content-type': 'text/javascript' }, body: script });
  for (const theme of THEMES) {
    const bg = theme === 'dark' ? 'background:#000;color:#eee' : 'background:#f4f6f8;color:#111';
    site.route(`/page-${theme}.css`, {
      headers: { 'content-type': 'text/css' },
      body: `body{margin:0;padding:12px;${bg};font-family:system-ui}main{display:grid;gap:16px}h1{font-size:18px;margin:0}${cardStyles}`,
    });
    for (const size of SIZES)
      for (const mode of MODES) {
        const headers = { 'content-type': 'text/html; charset=utf-8', ...(mode === 'element' ? { 'content-security-policy': strict } : {}) };
        site.route(`/${mode}/${theme}/${size}`, { headers, body: galleryPage(mode, theme, size) });
      }
  }
  for (const [name, hue] of [
    ['lake', 200],
    ['page', 30],
  ] as const)
    for (const [size, [w, h]] of Object.entries(IMAGE_SIZES))
      site.route(`/img/${name}-${size}.png`, { headers: { 'content-type': 'image/png' }, body: await png(w, h, hue) });
  site.route('/img/icon.png', { headers: { 'content-type': 'image/png' }, body: await png(32, 32, 120) });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: config.browserPath, headless: true, chromiumSandbox: false });
  context = await browser.newContext({ ignoreHTTPSErrors: true });
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await new Promise((resolve) => (player ? player.close(resolve) : resolve(undefined)));
});

/**
 * Run in the page (a string: the browser's DOM is not in this project's types): every card, its
 * name, and the problems found (overflow, an image without its attributes), and the canary.
 */
const INSPECT = `(() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth) problems.push('page scrolls sideways: ' + doc.scrollWidth + ' > ' + window.innerWidth);
  const hosts = Array.from(document.querySelectorAll('linklens-card'));
  const cards = [...hosts.map((h) => h.shadowRoot && h.shadowRoot.querySelector('article')), ...document.querySelectorAll('main > section > article')];
  let count = 0;
  for (const card of cards) {
    if (!card) continue;
    count++;
    const name = card.closest('section')?.getAttribute('aria-label') ?? card.getRootNode().host?.getAttribute('data-name');
    const box = card.getBoundingClientRect();
    if (box.right > window.innerWidth + 0.5) problems.push(name + ': card wider than the window');
    if (card.scrollWidth > card.clientWidth + 1) problems.push(name + ': content wider than the card');
    for (const el of card.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1)) problems.push(name + ': <' + el.tagName.toLowerCase() + ' class=' + el.getAttribute('class') + '> sticks out');
    }
    for (const img of card.querySelectorAll('img')) {
      for (const attr of ['width', 'height', 'alt']) if (!img.hasAttribute(attr)) problems.push(name + ': img without ' + attr);
      if (img.getAttribute('loading') !== 'lazy') problems.push(name + ': img not lazy');
    }
  }
  return { count, problems, pwned: window.__pwned };
})()`;

/** Run in the page: scrolls to the end, so every lazy image loads. */
const SCROLL_THROUGH = `(async () => {
  for (let y = 0; y < document.body.scrollHeight; y += 600) {
    window.scrollTo(0, y);
    await new Promise((r) => setTimeout(r, 20));
  }
})()`;

const PWNED = 'window.__pwned';

function inspect(page: Page): Promise<{ count: number; problems: string[]; pwned?: string }> {
  return page.evaluate(INSPECT);
}

async function open(url: string, width: number): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.goto(url);
  await page.waitForFunction('window.__galleryReady === true');
  await page.evaluate(SCROLL_THROUGH);
  return page;
}

describe('the card gallery in Chromium', () => {
  withBrowser('every record, both modes, every width, theme and size: no overflow, complete images, no script of theirs', async () => {
    const count = Object.keys(records).length;
    for (const mode of MODES)
      for (const theme of THEMES)
        for (const size of SIZES)
          for (const width of WIDTHS) {
            const page = await open(site.url(`/${mode}/${theme}/${size}`), width);
            const found = await inspect(page);
            expect({ at: `${mode} ${theme} ${size} ${width}`, ...found }).toEqual({
              at: `${mode} ${theme} ${size} ${width}`,
              count,
              problems: [],
              pwned: undefined,
            });
            await page.close();
          }
    // Nothing was asked of the player's origin by any of those pages.
    expect(playerRequests).toEqual([]);
  });

  withBrowser('the player loads only on a click, sandboxed; a hostile embed loads nothing', async () => {
    const page = await open(site.url('/element/light/large'), 768);
    expect(playerRequests).toEqual([]);
    await page.locator('linklens-card[data-name=hostile] button.ll-play').click();
    expect(await page.locator('linklens-card[data-name=hostile] iframe, linklens-card[data-name=hostile] .ll-player').count()).toBe(0);
    await page.locator('linklens-card[data-name=video] button.ll-play').click();
    const frame = page.locator('linklens-card[data-name=video] iframe.ll-player');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox');
    expect(await frame.getAttribute('allow')).toBe('autoplay; encrypted-media; fullscreen; picture-in-picture');
    expect(await frame.getAttribute('referrerpolicy')).toBe('strict-origin-when-cross-origin');
    expect(await page.frameLocator('linklens-card[data-name=video] iframe.ll-player').locator('#ok').textContent()).toBe('player loaded');
    expect(playerRequests).toEqual(['/embed/dQw4w9WgXcQ']);
    expect(await page.evaluate(PWNED)).toBeUndefined();
    await page.close();
  });

  withBrowser('axe-core finds no serious or critical violation', async () => {
    const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    for (const mode of MODES)
      for (const theme of THEMES) {
        const page = await open(site.url(`/${mode}/${theme}/large`), 768);
        await page.evaluate(axe);
        const violations = await page.evaluate(
          `axe.run().then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ' (' + v.nodes.length + ')'))`,
        );
        expect({ mode, theme, violations }).toEqual({ mode, theme, violations: [] });
        await page.close();
      }
  });

  withBrowser('the README picture', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 1200, height: 800 });
    const showcase = ['page-image', 'video', 'repository', 'rtl'];
    site.route('/showcase', {
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Cards</title><style>body{margin:0;padding:20px;display:grid;grid-template-columns:1fr 1fr;gap:20px;background:linear-gradient(90deg,#f4f6f8 50%,#000 50%);font-family:system-ui}.col{display:grid;gap:16px;align-content:start}${cardStyles}</style><script type="module" src="/gallery.js"></script></head><body data-player-origins="${playerOrigin}">
<div class="col">${showcase
        .slice(0, 2)
        .map((n) => renderCard(records[n], { theme: 'light', playerOrigins: [playerOrigin] }))
        .join('')}${showcase
        .slice(2)
        .map((n) => renderCard(records[n], { theme: 'light', size: 'small', playerOrigins: [playerOrigin] }))
        .join('')}</div>
<div class="col">${showcase
        .slice(0, 2)
        .map((n) => renderCard(records[n], { theme: 'dark', size: 'small', playerOrigins: [playerOrigin] }))
        .join('')}${renderCard(records.post, { theme: 'dark' })}${renderCard(records.failed, { theme: 'dark' })}</div>
<script type="application/json" id="records">{}</script></body></html>`,
    });
    await page.goto(site.url('/showcase'));
    await page.waitForFunction('Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0)');
    const shot = await page.screenshot({ fullPage: true });
    expect(shot.length).toBeGreaterThan(10_000);
    const out = process.env.LINKLENS_UPDATE_DOCS === '1' ? path.resolve(__dirname, '../../docs/card-gallery.png') : path.join(tmpdir(), 'card-gallery.png');
    writeFileSync(out, shot);
    await page.close();
  });
});
