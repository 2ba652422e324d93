/** Amazon (platform `retailer`), its products (RETAILER_PRODUCT): URL forms, short links, every field, the store's TLD, the robot check (locale prices: ../shared/price.test.ts). */

import net from 'node:net';
import { FetchFailure } from '../../../lib/fetch/fetch-failure';
import { createFetcher } from '../../../lib/fetch/safe-fetch';
import type { Fetcher } from '../../../lib/fetch/types';
import { matchAmazon } from '../../../lib/platforms/amazon/index';
import { storeTld } from '../../../lib/platforms/amazon/product';
import * as fx from '../fixtures/amazon';
import { image, page, redirect, startWorld, type World } from '../harness';

const ASIN = fx.ASIN;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

/** Each source image has its own width (80 + 10·i), so a hosted medium tells which source it came from. */
const SOURCES = ['51Main._AC_SL1500_.jpg', '51Main._AC_SX679_.jpg', '51Main._AC_SX466_.jpg', '51Main._AC_SX425_.jpg', '61Alt.jpg'];
async function images() {
  for (const [i, p] of SOURCES.entries()) w.server.route(`/m.media-amazon.com/images/I/${p}`, await image(80 + 10 * i, 80));
}

describe('URL forms', () => {
  test.each([
    [`https://www.amazon.es/Cecotec-Limpiacristales/dp/${ASIN}`],
    [`https://www.amazon.com/dp/${ASIN}/ref=sr_1_1?keywords=x`],
    [`https://www.amazon.com/gp/product/${ASIN}/`],
    [`https://www.amazon.co.uk/gp/aw/d/${ASIN}`],
    [`https://amazon.de/-/en/dp/${ASIN}`],
    [`https://www.amazon.co.jp/exec/obidos/ASIN/${ASIN}`],
    [`https://smile.amazon.com/dp/${ASIN.toLowerCase()}`],
    [`https://www.amazon.com.br/dp/${ASIN}?th=1`],
  ])('%s gives the ASIN', (u) => {
    expect(matchAmazon(new URL(u))).toEqual({ kind: 'product', ids: { productId: ASIN } });
  });
  test.each([
    'https://www.amazon.com/',
    'https://www.amazon.com/s?k=robot',
    'https://www.amazon.com/stores/page/X',
    'https://www.amazonaws.com/dp/B01MUGXRT9',
    'https://aws.amazon.com/dp/B01MUGXRT9',
  ])('%s is not matched', (u) => {
    expect(matchAmazon(new URL(u))).toBeUndefined();
  });

  test.each([
    ['amzn.to', '/amzn.to/3xYz'],
    ['a.co', '/a.co/d/abc123'],
    ['amzn.eu', '/amzn.eu/d/abc'],
  ])('a %s short link is followed to the product', async (_host, path) => {
    await images();
    w.server.route(path, redirect(`/www.amazon.es/dp/${ASIN}?tag=x`));
    w.server.route(`/www.amazon.es/dp/${ASIN}`, page(fx.productPage()));
    const r = await w.preview(`https://${path.slice(1)}`);
    expect(r).toMatchObject({ ok: true, type: 'RETAILER_PRODUCT', redirected: true, retailerProduct: { productId: ASIN } });
    expect(w.seen().filter((s) => s.url.includes(`/dp/${ASIN}`))).toHaveLength(1);
  });
});

describe('product fields', () => {
  test('title, description, features, price, currency, rating, reviews, media', async () => {
    await images();
    w.server.route(`/www.amazon.es/Cecotec/dp/${ASIN}`, page(fx.productPage()));
    const r = await w.preview(`https://www.amazon.es/Cecotec/dp/${ASIN}`);
    expect(r).toMatchObject({ ok: true, type: 'RETAILER_PRODUCT', title: 'Cecotec Robot Limpiacristales Windroid 880', language: 'es' });
    const p = r.retailerProduct;
    expect(p).toMatchObject({
      productId: ASIN,
      title: 'Cecotec Robot Limpiacristales Windroid 880',
      price: 1234.56,
      currency: 'EUR',
      rating: 4.1,
      reviewCount: 5182,
      description: 'Compra Cecotec Robot Limpiacristales Windroid 880. Precios bajos todos los días en Amazon.',
      features: ['Limpieza inteligente: 4 programas', 'Control por App y mando a distancia'],
    });
    // hi-res first, then the dynamic-image JSON largest first; the carousel images elsewhere on the page are not the product's
    expect(p.media.length).toBeGreaterThanOrEqual(2);
    // the jobs run concurrently, so the order they reach the server is the machine's; the order of media is the code's
    expect(p.media[0].original.width).toBe(80); // 51Main._AC_SL1500_.jpg
    const asked = w
      .seen()
      .map((s) => s.url)
      .filter((u) => u.includes('media-amazon'));
    expect(asked.some((u) => u.includes('_AC_SL1500_'))).toBe(true);
    expect(asked.some((u) => u.includes('OTHER'))).toBe(false);
    expect(r.image.original.url).toBe(p.media[0].original.url);
  });

  test.each([
    ['www.amazon.com', '$8.99', 8.99, 'USD', '4.6 out of 5 stars', 4.6, '1,422 ratings', 1422],
    ['www.amazon.co.uk', '£1,299.00', 1299, 'GBP', '4.5 out of 5 stars', 4.5, '12 ratings', 12],
    ['www.amazon.de', '1.234,56 €', 1234.56, 'EUR', '4,3 von 5 Sternen', 4.3, '2.345 Sternebewertungen', 2345],
    ['www.amazon.co.jp', '￥1,280', 1280, 'JPY', '5つ星のうち4.5', 4.5, '99個の評価', 99],
    ['www.amazon.ca', '$24.99', 24.99, 'CAD', '4.0 out of 5 stars', 4, '7 ratings', 7],
    ['www.amazon.com.br', 'R$ 1.299,90', 1299.9, 'BRL', '4,8 de 5 estrelas', 4.8, '310 avaliações', 310],
    ['www.amazon.pl', '1 234,56 zł', 1234.56, 'PLN', '4,2 na 5 gwiazdek', 4.2, '8 ocen', 8],
  ])('%s: price %s, rating %s', async (host, price, p, cur, rating, rv, reviews, rc) => {
    w.server.route(`/${host}/dp/${ASIN}`, page(fx.productPage({ price, rating, reviews })));
    const r = await w.preview(`https://${host}/dp/${ASIN}`);
    expect(r.retailerProduct).toMatchObject({ price: p, currency: cur, rating: rv, reviewCount: rc });
  });

  test('a robot check is ok:false, never a product titled "Amazon.com"', async () => {
    w.server.route(`/www.amazon.com/dp/${ASIN}`, page(fx.ROBOT_CHECK, 503));
    const r = await w.preview(`https://www.amazon.com/dp/${ASIN}`);
    expect(r).toMatchObject({ ok: false, type: 'RETAILER_PRODUCT', status: 503 });
    expect(r.title).toBeUndefined();
    expect(r.retailerProduct).toBeUndefined();
  });

  test('a robot check served with 200 is ok:false too', async () => {
    w.server.route(`/www.amazon.com/dp/${ASIN}`, page(fx.ROBOT_CHECK, 200));
    const r = await w.preview(`https://www.amazon.com/dp/${ASIN}`);
    expect(r).toMatchObject({ ok: false, type: 'RETAILER_PRODUCT' });
    expect(r.title).toBeUndefined();
  });

  test('a missing product is ok:false 404', async () => {
    w.server.route(`/www.amazon.com/dp/${ASIN}`, page('<html><head><title>Page Not Found</title></head></html>', 404));
    const r = await w.preview(`https://www.amazon.com/dp/${ASIN}`);
    expect(r).toMatchObject({ ok: false, type: 'RETAILER_PRODUCT', status: 404 });
  });
});

describe('the product page fails at the network level: the generic preview of the same URL', () => {
  // The platform's fetch of the product page is the first fetch of the link: it fails as the kind
  // says (a real refused connection, a real timeout, a resolver that fails the name); the generic
  // preview's fetch of the same URL that follows gets the page.
  const LINK = `https://www.amazon.com/dp/${ASIN}`;
  const GENERIC =
    '<html lang="en"><head><title>Amazon.com: Windroid 880</title><meta name="description" content="The page as any browser sees it."></head><body><p>Windroid</p></body></html>';
  const raw = (resolver?: (host: string) => Promise<{ address: string; family: number }[]>) =>
    createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-test', maxRedirects: 10, resolver });
  let silent: net.Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
    silent = undefined;
  });

  /** A port nothing listens on: a listener is opened and closed again. */
  async function closedPort(): Promise<number> {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return port;
  }

  /** A listener that accepts connections and never answers. */
  async function silentPort(): Promise<number> {
    const sockets = new Set<net.Socket>();
    silent = net.createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    const close = silent.close.bind(silent);
    silent.close = ((cb?: (err?: Error) => void) => {
      for (const sock of sockets) sock.destroy();
      return close(cb);
    }) as typeof silent.close;
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    return (silent.address() as net.AddressInfo).port;
  }

  const failures: Record<string, () => Promise<Fetcher>> = {
    CONNECTION_REFUSED: async () => {
      const port = await closedPort();
      return (_url, options) => raw()(`http://127.0.0.1:${port}/dp/${ASIN}`, options);
    },
    TIMEOUT: async () => {
      const port = await silentPort();
      // Its own short time: the preview's fetches keep the world's roomy one (a loaded machine's generic fetch is no timeout).
      return (_url, options) => raw()(`http://127.0.0.1:${port}/dp/${ASIN}`, { ...options, timeoutMs: 300 });
    },
    DNS_FAILURE: async () => {
      const resolver = async (host: string) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
      };
      return (url, options) => raw(resolver)(url, options);
    },
  };

  test.each(Object.keys(failures))('%s', async (kind) => {
    const failing = await failures[kind]();
    const codes: string[] = [];
    let first = true;
    const world = await startWorld({
      config: { fetchTimeoutMs: 10_000 },
      wrapFetch: (mapped) => async (url, options) => {
        if (!(url === LINK && first)) return mapped(url, options);
        first = false;
        try {
          return await failing(url, options);
        } catch (err) {
          codes.push(err instanceof FetchFailure ? err.code : String(err));
          throw err;
        }
      },
    });
    try {
      world.server.route(`/www.amazon.com/dp/${ASIN}`, page(GENERIC));
      const r = await world.preview(LINK);
      // The platform's fetch failed as intended ...
      expect(codes).toEqual([kind]);
      // ... and the record is the generic preview of the link, not an error record.
      expect(r).toMatchObject({
        ok: true,
        type: 'PAGE',
        status: 200,
        url: LINK,
        title: 'Amazon.com: Windroid 880',
        description: 'The page as any browser sees it.',
      });
      expect(r.retailerProduct).toBeUndefined();
      expect(world.seen().filter((s) => s.url === LINK)).toHaveLength(1);
    } finally {
      await world.close();
    }
  });
});

describe('store TLDs', () => {
  test('the store TLD of an Amazon host', () => {
    expect(storeTld('www.amazon.co.uk')).toBe('co.uk');
    expect(storeTld('smile.amazon.com')).toBe('com');
  });
});
