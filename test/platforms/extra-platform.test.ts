/**
 * A new site is one folder, one list entry and its tests (docs/platforms.md, "Adding a site"):
 * this test adds one, Kite Shop, part by part as the files of `lib/platforms/kiteshop/` would hold
 * them: `settings.ts` (a setting with a default), `product.ts` (the object kind it reads: the
 * record object it builds), `index.ts` (the Platform: its URL pattern, host profile and settings).
 * The list entry is `[...PLATFORMS, kiteshop]`, registered for one world only (`startWorld({
 * platforms })`: its own registry through the ports and a config loaded for the same list), and
 * its links are previewed through the real handler against loopback fixtures. Nothing else is
 * touched: the registry, the host profiles and the configuration take it from the list. It reuses
 * the MARKETPLACE_PRODUCT type of the contract; a site with a type of its own adds it to
 * openapi.yaml and runs `npm run contract:types`.
 */
import net from 'node:net';
import { loadConfig, PLATFORM_GROUPS } from '../../lib/config';
import type { MarketplaceProduct } from '../../lib/contract/link';
import { PLATFORM_REGISTRY, PLATFORMS } from '../../lib/platforms/index';
import { createRegistry } from '../../lib/platforms/registry';
import { fetchPlatformPage, fetchSource } from '../../lib/platforms/shared/fetch';
import { compact, num, obj, parseJson, str } from '../../lib/platforms/shared/json';
import { parsePlatformPage } from '../../lib/platforms/shared/page';
import type { Platform, PlatformContextOf, PlatformPreview } from '../../lib/platforms/types';
import { defineSettings, httpUrl } from '../../lib/settings';
import { json, page, startWorld, type World } from './harness';

// lib/platforms/kiteshop/settings.ts: its settings group, named as the platform.
const settings = defineSettings('kiteshop', 'kiteshop (a test platform)', {
  apiUrl: {
    env: 'LINKPREVIEW_KITESHOP_API_URL',
    type: httpUrl(),
    default: 'https://api.kiteshop.test',
    doc: "The shop's product API.",
  },
});

type Ctx = PlatformContextOf<typeof settings>;

// lib/platforms/kiteshop/product.ts: the object kind it reads.
async function extractProduct(url: URL, productId: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  // The API, the only data source (a FetchFailure propagates: the generic preview), then the
  // product page for its summary (with the host profile).
  const api = await fetchSource(`${ctx.settings.apiUrl}/products/${productId}`, ctx);
  const p = obj(parseJson(api.text));
  if (!p) return undefined;
  const summary = parsePlatformPage(await fetchPlatformPage(url.href, ctx), ctx).meta('og:description');
  const product: MarketplaceProduct = compact({
    productId,
    title: str(p.name),
    description: summary,
    price: num(p.price),
    currency: str(p.currency),
  });
  return { type: 'MARKETPLACE_PRODUCT', ok: true, status: api.status, title: product.title, description: summary, fields: { marketplaceProduct: product } };
}

// lib/platforms/kiteshop/index.ts: the Platform, its URL pattern and host profile.
const kiteshop: Platform<typeof settings> = {
  name: 'kiteshop',
  siteName: 'Kite Shop',
  settings,
  hostProfile: {
    hosts: ['kiteshop.test'],
    userAgent: 'KiteBot/2.0 ({ua})',
    cookies: { region: 'eu' },
    note: 'a test profile: its own bot token and a region cookie',
  },
  match(url) {
    const m = /^\/kites\/(\d+)\/?$/.exec(url.pathname);
    return /^(www\.)?kiteshop\.test$/.test(url.hostname) && m ? { kind: 'product', ids: { productId: m[1] } } : undefined;
  },
  extract: (url, match, ctx) => extractProduct(url, match.ids.productId, ctx),
};

const LINK = 'https://kiteshop.test/kites/42';
const PRODUCT_PAGE = page(
  '<html lang="en"><head><title>Delta kite</title><meta property="og:description" content="A stable delta kite for light winds."></head></html>',
);

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('an extra platform, registered for one world', () => {
  it('previews its URL through the pipeline: the record is its product', async () => {
    w = await startWorld({ platforms: [...PLATFORMS, kiteshop] });
    w.server.route('/api.kiteshop.test/products/42', json({ name: 'Delta kite', price: 39.5, currency: 'EUR' }));
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    const r = await w.preview(LINK);
    expect(r).toMatchObject({
      ok: true,
      type: 'MARKETPLACE_PRODUCT',
      status: 200,
      url: LINK,
      title: 'Delta kite',
      description: 'A stable delta kite for light winds.',
    });
    expect(r.marketplaceProduct).toEqual({
      productId: '42',
      title: 'Delta kite',
      description: 'A stable delta kite for light winds.',
      price: 39.5,
      currency: 'EUR',
    });
  });

  it('its setting: the default names the API; set, the variable moves it', async () => {
    w = await startWorld({ platforms: [...PLATFORMS, kiteshop] });
    w.server.route('/api.kiteshop.test/products/42', json({ name: 'Delta kite', price: 39.5, currency: 'EUR' }));
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    expect((await w.preview(LINK)).marketplaceProduct.price).toBe(39.5);
    expect(w.seen().map((s) => s.url)).toContain('https://api.kiteshop.test/products/42');
    await w.close();

    w = await startWorld({ platforms: [...PLATFORMS, kiteshop], env: { LINKPREVIEW_KITESHOP_API_URL: 'https://mirror.kiteshop.test/v2/' } });
    w.server.route('/mirror.kiteshop.test/v2/products/42', json({ name: 'Delta kite', price: 35, currency: 'EUR' }));
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    expect((await w.preview(LINK)).marketplaceProduct).toMatchObject({ price: 35, currency: 'EUR' });
    expect(
      w
        .seen()
        .map((s) => s.url)
        .filter((u) => u.includes('/products/')),
    ).toEqual(['https://mirror.kiteshop.test/v2/products/42']);
  });

  it('its host profile: on its own page fetch, and on the generic fetch of its hosts', async () => {
    w = await startWorld({ platforms: [...PLATFORMS, kiteshop] });
    w.server.route('/api.kiteshop.test/products/42', json({ name: 'Delta kite' }));
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    w.server.route('/kiteshop.test/about', page('<html><head><title>About the kite shop</title></head></html>'));
    await w.preview(LINK);
    const about = await w.preview('https://kiteshop.test/about');
    expect(about).toMatchObject({ type: 'PAGE', title: 'About the kite shop' });
    for (const path of ['https://kiteshop.test/kites/42', 'https://kiteshop.test/about']) {
      const req = w.seen().find((s) => s.url === path)!;
      expect(String(req.headers['user-agent'])).toMatch(/^KiteBot\/2\.0 \(Mozilla\/5\.0 \(compatible; linklens/);
      expect(req.headers.cookie).toBe('region=eu');
    }
  });

  it('an upstream failure (its API refuses the connection) is the generic preview of the link', async () => {
    const closed = await closedPort();
    w = await startWorld({ platforms: [...PLATFORMS, kiteshop], env: { LINKPREVIEW_KITESHOP_API_URL: `http://127.0.0.1:${closed}` } });
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    const r = await w.preview(LINK);
    expect(r).toMatchObject({ ok: true, type: 'PAGE', title: 'Delta kite', description: 'A stable delta kite for light winds.' });
    expect(r.marketplaceProduct).toBeUndefined();
  });

  it('leaks into nothing else: the service registry, the config and another world know nothing of it', async () => {
    expect(PLATFORM_REGISTRY.match(LINK)).toBeUndefined();
    expect(PLATFORM_GROUPS.map((g) => g.name)).not.toContain('kiteshop');
    expect(loadConfig({}).platforms).not.toHaveProperty('kiteshop');
    expect(loadConfig({}, [...PLATFORMS, kiteshop]).platforms).toMatchObject({ kiteshop: { apiUrl: 'https://api.kiteshop.test' } });
    w = await startWorld();
    w.server.route('/kiteshop.test/kites/42', PRODUCT_PAGE);
    const r = await w.preview(LINK);
    expect(r).toMatchObject({ type: 'PAGE', title: 'Delta kite' });
    expect(w.seen().some((s) => s.url.startsWith('https://api.kiteshop.test/'))).toBe(false);
    const req = w.seen().find((s) => s.url === LINK)!;
    expect(String(req.headers['user-agent'])).not.toMatch(/KiteBot/);
  });
});

describe('the registry', () => {
  it('assembles the host profiles from the platforms, then the hosts without one', () => {
    const { hostProfiles } = createRegistry([...PLATFORMS, kiteshop]);
    expect(hostProfiles.map((p) => p.hosts[0])).toEqual([
      'youtube.com',
      'reddit.com',
      'x.com',
      'instagram.com',
      'tiktok.com',
      'kiteshop.test',
      'facebook.com',
      'threads.net',
    ]);
  });

  it('refuses two platforms of one name, a settings group named otherwise, and a variable read twice', () => {
    expect(() => createRegistry([kiteshop, kiteshop])).toThrow(/kiteshop is registered twice/);
    const misnamed: Platform = { ...kiteshop, name: 'kiteshop2' };
    expect(() => loadConfig({}, [...PLATFORMS, misnamed])).toThrow(/platform kiteshop2 names its settings kiteshop/);
    const token = defineSettings('tokenshop', 'tokenshop', { token: { env: 'GITHUB_TOKEN', type: httpUrl(), default: '', doc: '' } });
    const reuse: Platform = { ...kiteshop, name: 'tokenshop', settings: token };
    expect(() => loadConfig({}, [...PLATFORMS, reuse])).toThrow(/GITHUB_TOKEN is declared twice/);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
