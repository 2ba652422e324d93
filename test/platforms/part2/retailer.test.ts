/** retailer (Amazon): URL forms, short links, every field, locale prices and currencies, the robot check. */
import { matchRetailer } from '../../../lib/platforms/retailer';
import { marketplaceTld, parseLocaleNumber, parsePrice } from '../../../lib/platforms/retailer-price';
import { image, page, redirect, startWorld, type World } from './harness';
import * as fx from './fixtures/retailer';

const ASIN = fx.ASIN;
let w: World;
beforeEach(async () => { w = await startWorld(); });
afterEach(async () => { await w.close(); });

async function images() {
  for (const p of ['51Main._AC_SL1500_.jpg', '51Main._AC_SX679_.jpg', '51Main._AC_SX466_.jpg', '51Main._AC_SX425_.jpg', '61Alt.jpg']) w.server.route(`/m.media-amazon.com/images/I/${p}`, await image(80, 80));
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
    expect(matchRetailer(new URL(u))).toEqual({ kind: 'product', ids: { productId: ASIN } });
  });
  test.each(['https://www.amazon.com/', 'https://www.amazon.com/s?k=robot', 'https://www.amazon.com/stores/page/X', 'https://www.amazonaws.com/dp/B01MUGXRT9', 'https://aws.amazon.com/dp/B01MUGXRT9'])('%s is not matched', (u) => {
    expect(matchRetailer(new URL(u))).toBeUndefined();
  });

  test.each([['amzn.to', '/amzn.to/3xYz'], ['a.co', '/a.co/d/abc123'], ['amzn.eu', '/amzn.eu/d/abc']])('a %s short link is followed to the product', async (_host, path) => {
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
      productId: ASIN, title: 'Cecotec Robot Limpiacristales Windroid 880', price: 1234.56, currency: 'EUR', rating: 4.1, reviewCount: 5182,
      description: 'Compra Cecotec Robot Limpiacristales Windroid 880. Precios bajos todos los días en Amazon.',
      features: ['Limpieza inteligente: 4 programas', 'Control por App y mando a distancia'],
    });
    // hi-res first, then the dynamic-image JSON largest first; the carousel images elsewhere on the page are not the product's
    expect(p.media.length).toBeGreaterThanOrEqual(2);
    const asked = w.seen().map((s) => s.url).filter((u) => u.includes('media-amazon'));
    expect(asked[0]).toContain('_AC_SL1500_');
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

describe('locale prices', () => {
  test.each([
    ['1.234,56 €', 'de', 1234.56, 'EUR'], ['€149,00', 'es', 149, 'EUR'], ['$1,234.56', 'com', 1234.56, 'USD'], ['$1,234', 'com', 1234, 'USD'],
    ['1.234 €', 'de', 1234, 'EUR'], ['CHF 1\'234.50', 'com', 1234.5, 'CHF'], ['₹1,23,456.00', 'in', 123456, 'INR'], ['¥1,280', 'cn', 1280, 'CNY'],
    ['$10.99 - $19.99', 'com', 10.99, 'USD'], ['MX$1,299.00', 'com.mx', 1299, 'MXN'], ['$1,299.00', 'com.mx', 1299, 'MXN'], ['AED 99.00', 'ae', 99, 'AED'],
    ['12,99', 'fr', 12.99, 'EUR'], ['1 299,00 kr', 'se', 1299, 'SEK'],
  ])('%s on .%s', (raw, tld, price, currency) => {
    expect(parsePrice(raw, tld)).toEqual({ price, currency });
  });
  test('numbers', () => {
    expect(parseLocaleNumber('1.234.567')).toBe(1234567);
    expect(parseLocaleNumber('1,5')).toBe(1.5);
    expect(parseLocaleNumber('abc')).toBeUndefined();
  });
  test('marketplace TLDs', () => {
    expect(marketplaceTld('www.amazon.co.uk')).toBe('co.uk');
    expect(marketplaceTld('smile.amazon.com')).toBe('com');
  });
});
