/** Etsy (platform `marketplace`), its listings (MARKETPLACE_PRODUCT): URL forms, JSON-LD Product, og / Twitter-card fallbacks, the DataDome block. */
import { matchEtsy } from '../../../lib/platforms/etsy/index';
import * as fx from '../fixtures/etsy';
import { image, page, startWorld, type World } from '../harness';

const ID = fx.LISTING;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

describe('URL forms', () => {
  test.each([
    [`https://www.etsy.com/listing/${ID}/agents-of-shield-decal?utm_source=OpenGraph`],
    [`https://www.etsy.com/listing/${ID}`],
    [`https://etsy.com/de/listing/${ID}/aufkleber`],
    [`https://www.etsy.com/de-en/listing/${ID}/x`],
    [`https://www.etsy.de/listing/${ID}`],
  ])('%s gives the listing id', (u) => {
    expect(matchEtsy(new URL(u))).toEqual({ kind: 'product', ids: { productId: ID } });
  });
  test.each(['https://www.etsy.com/shop/InfernoDecals', 'https://www.etsy.com/', 'https://www.etsy.com/search?q=x', 'https://etsy.example.com/listing/123456'])(
    '%s is not matched',
    (u) => {
      expect(matchEtsy(new URL(u))).toBeUndefined();
    },
  );
});

test('JSON-LD Product: name, description, price and currency, rating, reviews, images', async () => {
  for (const p of ['/i.etsystatic.com/1/r/il/one/il_fullxfull.1.jpg', '/i.etsystatic.com/1/r/il/two/il_fullxfull.2.jpg'])
    w.server.route(p, await image(90, 70));
  w.server.route(`/www.etsy.com/listing/${ID}/decal`, page(fx.jsonLdListing()));
  const r = await w.preview(`https://www.etsy.com/listing/${ID}/decal`);
  expect(r).toMatchObject({ ok: true, type: 'MARKETPLACE_PRODUCT', title: 'Agents of Shield decal sticker & vinyl' });
  expect(r.marketplaceProduct).toMatchObject({
    productId: ID,
    title: 'Agents of Shield decal sticker & vinyl',
    description: 'Die cut sticker.\nAvailable in several colors.',
    price: 2.99,
    currency: 'USD',
    rating: 4.9,
    reviewCount: 1523,
  });
  expect(r.marketplaceProduct.media).toHaveLength(2);
  expect(r.marketplaceProduct.features).toBeUndefined();
  expect(r.image.original.url).toBe(r.marketplaceProduct.media[0].original.url);
});

test('og tags and the Twitter product card when there is no JSON-LD', async () => {
  w.server.route('/img0.etsystatic.com/058/0/10499963/il_570xN.jpg', await image(57, 40));
  w.server.route(`/www.etsy.com/listing/${ID}/decal`, page(fx.ogListing()));
  const r = await w.preview(`https://www.etsy.com/listing/${ID}/decal`);
  expect(r.marketplaceProduct).toMatchObject({
    productId: ID,
    title: 'Agents of Shield decal sticker for car',
    description: 'Die cut sticker is cut in the shape of the graphic.',
    price: 2.99,
    currency: 'USD',
  });
  expect(r.marketplaceProduct.media).toHaveLength(1);
});

test('the DataDome block is ok:false', async () => {
  w.server.route(`/www.etsy.com/listing/${ID}`, page(fx.DATADOME, 403, { 'x-datadome': 'protected' }));
  const r = await w.preview(`https://www.etsy.com/listing/${ID}`);
  expect(r).toMatchObject({ ok: false, type: 'MARKETPLACE_PRODUCT', status: 403 });
  expect(r.title).toBeUndefined();
});

test('a removed listing is ok:false 404', async () => {
  w.server.route(`/www.etsy.com/listing/${ID}`, page('<html><head><title>Etsy</title></head></html>', 404));
  const r = await w.preview(`https://www.etsy.com/listing/${ID}`);
  expect(r).toMatchObject({ ok: false, type: 'MARKETPLACE_PRODUCT', status: 404 });
});
