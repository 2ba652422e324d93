/**
 * An Etsy listing (MARKETPLACE_PRODUCT, `marketplaceProduct`) from its page. The page's JSON-LD
 * Product: name, description, offers (price / lowPrice, priceCurrency), aggregateRating
 * (ratingValue, reviewCount / ratingCount), image (URLs or ImageObjects). Each falls back to the
 * Open Graph and product tags (og:title, og:description, og:image, product:price:amount /
 * currency, and the old Twitter card `twitter:data1` price with `twitter:label1` currency).
 * A bot challenge (DataDome) is ok:false.
 */
import type { MarketplaceProduct } from '../../contract/link.js';
import { flattenJsonLd, type LdNode } from '../../extract/json-ld.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { fetchPlatformPage, isOk } from '../shared/fetch.js';
import { hostImageUrls } from '../shared/host-media.js';
import { arr, compact, obj, str } from '../shared/json.js';
import { cleanHtmlText, parsePlatformPage } from '../shared/page.js';
import { parseLocaleNumber, parsePrice } from '../shared/price.js';
import type { PlatformContext, PlatformPreview } from '../types.js';

const isType = (n: LdNode, t: string) =>
  arr(n['@type'])
    .concat(typeof n['@type'] === 'string' ? [n['@type']] : [])
    .some((x) => String(x).toLowerCase() === t);

export async function extractListing(url: URL, listingId: string, ctx: PlatformContext): Promise<PlatformPreview | undefined> {
  // The only source: a FetchFailure propagates (the generic preview, ./types.ts).
  const res = await fetchPlatformPage(url.href, ctx);
  const page = parsePlatformPage(res, ctx);
  if (page.wall) return { type: 'MARKETPLACE_PRODUCT', ok: false, status: res.status, fields: {} };
  if (res.status === 404 || res.status === 410) return { type: 'MARKETPLACE_PRODUCT', ok: false, status: res.status, fields: {} };
  if (!isOk(res.status)) return undefined;

  const product = flattenJsonLd(page.data.jsonLd).find((n) => isType(n, 'product'));
  const offers = product ? [obj(product.offers), ...arr(product.offers).map(obj)].find((o) => !!o) : undefined;
  const rating = obj(product?.aggregateRating);

  const title = cleanHtmlText(str(product?.name)) ?? page.meta('og:title', 'twitter:title') ?? page.data.title?.replace(/ - Etsy(\.[a-z.]+)?$/i, '');
  if (!title) return undefined;
  const description = cleanHtmlText(str(product?.description), true) ?? page.meta('og:description', 'twitter:description', 'description');

  let price: number | undefined;
  let currency: string | undefined;
  if (offers) {
    const raw = str(offers.price) ?? str(offers.lowPrice);
    price = raw !== undefined ? parseLocaleNumber(raw) : undefined;
    currency = str(offers.priceCurrency);
  }
  if (price === undefined) {
    const amount = page.meta('product:price:amount', 'og:price:amount');
    if (amount) {
      price = parseLocaleNumber(amount);
      currency = currency ?? page.meta('product:price:currency', 'og:price:currency');
    }
  }
  if (price === undefined) {
    // The old Twitter product card: data1 "$2.99", label1 "USD".
    const d1 = page.meta('twitter:data1');
    const parsed = parsePrice(d1, 'com');
    if (parsed) {
      price = parsed.price;
      currency = currency ?? (/^[A-Z]{3}$/.test(page.meta('twitter:label1') ?? '') ? page.meta('twitter:label1') : parsed.currency);
    }
  }

  const images: string[] = [];
  for (const im of [product?.image].flat()) {
    for (const x of Array.isArray(im) ? im : [im]) {
      const u = str(x) ?? str(obj(x)?.contentURL) ?? str(obj(x)?.contentUrl) ?? str(obj(x)?.url);
      if (u) images.push(u);
    }
  }
  if (images.length === 0) {
    const og = page.meta('og:image', 'twitter:image');
    if (og) images.push(og);
  }
  const media = await hostImageUrls(images, ctx);

  const fields: MarketplaceProduct = compact({
    productId: listingId,
    title,
    description,
    currency,
    price,
    rating: rating ? ratingNumber(rating.ratingValue) : undefined,
    reviewCount: rating ? parseCount(str(rating.reviewCount) ?? str(rating.ratingCount)) : undefined,
    media: media.length ? media : undefined,
  });
  return {
    type: 'MARKETPLACE_PRODUCT',
    ok: true,
    status: res.status,
    title,
    ...(description ? { description } : {}),
    ...(media[0] ? { image: toImageSet(media[0]) } : {}),
    icons: [{ url: 'https://www.etsy.com/images/favicon.ico' }],
    fields: { marketplaceProduct: fields },
  };
}

function ratingNumber(v: unknown): number | undefined {
  const s = str(v);
  if (!s) return undefined;
  const n = Number(s.replace(',', '.'));
  return Number.isFinite(n) ? n : undefined;
}
