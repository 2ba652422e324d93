/**
 * retailer (Amazon, every marketplace: amazon.com, .co.uk, .de, .fr, .es, .it, .co.jp, .ca, .com.mx,
 * .com.br, .in, .com.au, ...). amzn.to, a.co, amzn.eu and amzn.asia short links arrive here after the
 * generic fetch followed their redirects.
 *
 * `productId` is the ASIN (`/dp/{ASIN}`, `/gp/product/{ASIN}`, `/gp/aw/d/{ASIN}`, `/exec/obidos/ASIN/{ASIN}`).
 * From the product page: title (#productTitle), description (the meta description, else
 * #productDescription), features (#feature-bullets), price and currency (the core price block's
 * `.a-offscreen` text in the marketplace's locale, lib/platforms/retailer-price.ts), rating
 * (#acrPopover), reviewCount (#acrCustomerReviewText), media (the main image's data-a-dynamic-image
 * JSON, largest rendition first, plus data-old-hires and the alternate thumbnails).
 * A robot check (captcha page) is ok:false, never a product titled "Amazon.com".
 */

import type { Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { RetailerProduct } from '../contract/link.js';
import { toImageSet } from '../media/host-images.js';
import { marketplaceTld, parseLocaleNumber, parsePrice } from './retailer-price.js';
import { cleanHtmlText, compact, fetchPlatformPage, isOk, type ParsedPage, parseCount, parseJson, parsePlatformPage } from './shared.js';
import { hostImages } from './social-media.js';
import type { Platform, PlatformContext, PlatformMatch, PlatformPreview } from './types.js';

const HOSTS =
  /^(?:www\.|smile\.|m\.)?amazon\.(com|ca|com\.mx|com\.br|co\.uk|de|fr|it|es|nl|com\.be|ie|se|pl|com\.tr|ae|sa|eg|in|co\.jp|cn|com\.au|sg|co\.za|com\.ng)$/i;
const ASIN = /(?:\/dp\/|\/gp\/product\/|\/gp\/aw\/d\/|\/exec\/obidos\/(?:ASIN|tg\/detail\/-)\/|\/o\/ASIN\/|\/gp\/offer-listing\/)([A-Z0-9]{10})(?:[/?#]|$)/i;

export function matchRetailer(url: URL): PlatformMatch | undefined {
  if (!HOSTS.test(url.hostname)) return undefined;
  const m = ASIN.exec(url.pathname);
  return m ? { kind: 'product', ids: { productId: m[1].toUpperCase() } } : undefined;
}

export const retailer: Platform = {
  name: 'retailer',
  match: matchRetailer,
  async extract(url, match, ctx) {
    return extractProduct(url, match.ids.productId, ctx);
  },
};

async function extractProduct(url: URL, asin: string, ctx: PlatformContext): Promise<PlatformPreview | undefined> {
  // The only source: a FetchFailure propagates (the generic preview, ./types.ts).
  const res = await fetchPlatformPage(url.href, ctx);
  const page = parsePlatformPage(res, ctx);
  const captcha =
    page.wall === 'amazon-robot-check' ||
    /validateCaptcha|Type the characters you see in this image|api-services-support@amazon\.com/i.test(page.html.slice(0, 200_000));
  if (captcha || page.wall) return { type: 'RETAILER_PRODUCT', ok: false, status: res.status === 200 ? 503 : res.status, fields: {} };
  if (res.status === 404) return { type: 'RETAILER_PRODUCT', ok: false, status: 404, fields: {} };
  if (!isOk(res.status)) return undefined;

  const tld = marketplaceTld(new URL(res.finalUrl).hostname);
  const p = readProductPage(page, tld);
  if (!p.title) return undefined; // not a product page we can read: the generic preview
  const media = await hostImages(p.images, ctx);
  const product: RetailerProduct = compact({
    productId: asin,
    title: p.title,
    description: p.description,
    currency: p.price?.currency,
    price: p.price?.price,
    rating: p.rating,
    reviewCount: p.reviewCount,
    features: p.features.length ? p.features : undefined,
    media: media.length ? media : undefined,
  });
  return {
    type: 'RETAILER_PRODUCT',
    ok: true,
    status: res.status,
    title: p.title,
    ...(p.description ? { description: p.description } : {}),
    ...(page.data.lang ? { language: page.data.lang.split('-')[0] } : {}),
    ...(media[0] ? { image: toImageSet(media[0]) } : {}),
    icons: [{ url: `https://${new URL(res.finalUrl).host}/favicon.ico` }],
    fields: { retailerProduct: product },
  };
}

interface ProductPage {
  title?: string;
  description?: string;
  features: string[];
  price?: { price: number; currency?: string };
  rating?: number;
  reviewCount?: number;
  images: string[];
}

const text = (e: Element | null | undefined) => (e ? cleanHtmlText(DomUtils.textContent(e)) : undefined);
const byId = (root: ReturnType<typeof parseDocument>, id: string) => DomUtils.getElementById(id, root.children, true) ?? undefined;
const hasClass = (e: Element, c: string) => (e.attribs.class ?? '').split(/\s+/).includes(c);
const findAll = (root: Element | ReturnType<typeof parseDocument>, test: (e: Element) => boolean) => DomUtils.findAll(test, root.children);

/** Reads a product page's fields (pure, for tests). */
function readProductPage(page: ParsedPage, tld: string): ProductPage {
  const doc = parseDocument(page.html, { decodeEntities: true });
  const out: ProductPage = { features: [], images: [] };

  out.title = text(byId(doc, 'productTitle')) ?? text(byId(doc, 'title')) ?? titleFromTag(page.data.title);

  const metaDesc = page.meta('description', 'og:description');
  out.description = metaDesc ?? text(byId(doc, 'productDescription'))?.slice(0, 4000) ?? text(byId(doc, 'bookDescription_feature_div'))?.slice(0, 4000);

  const bullets = byId(doc, 'feature-bullets');
  if (bullets) {
    for (const li of findAll(bullets, (e) => e.name === 'li')) {
      if (li.attribs.id === 'replacementPartsFitmentBullet' || hasClass(li, 'aok-hidden')) continue;
      const t = text(li);
      if (t && t.length > 1 && out.features.length < 30) out.features.push(t);
    }
  }

  // Price: the core price block first, then the older ids.
  for (const id of [
    'corePriceDisplay_desktop_feature_div',
    'corePrice_feature_div',
    'corePrice_desktop',
    'apex_desktop',
    'priceblock_ourprice',
    'priceblock_dealprice',
    'priceblock_saleprice',
    'price_inside_buybox',
    'newBuyBoxPrice',
    'kindle-price',
    'price',
    'buyNewSection',
  ]) {
    const block = byId(doc, id);
    if (!block) continue;
    const off = findAll(block, (e) => hasClass(e, 'a-offscreen'))
      .map(text)
      .find((t) => !!t && /\d/.test(t));
    const own = off ?? (/\d/.test(text(block) ?? '') && (text(block) ?? '').length < 40 ? text(block) : undefined);
    const price = parsePrice(own, tld);
    if (price) {
      out.price = price;
      break;
    }
  }
  const amount = page.meta('og:price:amount', 'product:price:amount');
  if (!out.price && amount) {
    const n = parseLocaleNumber(amount);
    if (n !== undefined)
      out.price = { price: n, currency: page.meta('og:price:currency', 'product:price:currency') ?? parsePrice(`1 ${amount}`, tld)?.currency };
  }

  // Rating: "4,1 de 5 estrellas", "4.6 out of 5 stars", "5つ星のうち4.5".
  const pop = byId(doc, 'acrPopover');
  const ratingText = pop?.attribs.title ?? text(pop ? findAll(pop, (e) => hasClass(e, 'a-icon-alt'))[0] : undefined);
  out.rating = ratingValue(ratingText);
  const reviews = text(byId(doc, 'acrCustomerReviewText'));
  if (reviews) out.reviewCount = parseCount(reviews.replace(/^\(|\)$/g, ''));

  // Images: the main image's dynamic-image JSON (largest first), its hi-res, then the alternates.
  const main = byId(doc, 'landingImage') ?? byId(doc, 'imgBlkFront') ?? byId(doc, 'ebooksImgBlkFront') ?? byId(doc, 'main-image');
  if (main) {
    const hires = main.attribs['data-old-hires'];
    if (hires && /^https?:/.test(hires)) out.images.push(hires);
    out.images.push(...dynamicImages(main.attribs['data-a-dynamic-image']));
    if (out.images.length === 0 && main.attribs.src && /^https?:/.test(main.attribs.src)) out.images.push(main.attribs.src);
  }
  const alt = byId(doc, 'altImages');
  if (alt) {
    for (const img of findAll(alt, (e) => e.name === 'img')) {
      const src = img.attribs.src;
      if (src && /\/images\/I\//.test(src) && !/play-icon|video/i.test(src)) out.images.push(src.replace(/\._[^/]*_\./, '.'));
      if (out.images.length >= 8) break;
    }
  }
  if (out.images.length === 0) {
    const og = page.meta('og:image');
    if (og) out.images.push(og);
  }
  out.images = [...new Set(out.images)];
  return out;
}

/** The URLs of a `data-a-dynamic-image` JSON (`{"url":[w,h],...}`), largest first. */
function dynamicImages(raw: string | undefined): string[] {
  const j = parseJson(raw);
  if (!j || typeof j !== 'object' || Array.isArray(j)) return [];
  return Object.entries(j as Record<string, unknown>)
    .filter(([u, wh]) => /^https?:/.test(u) && Array.isArray(wh))
    .sort((a, b) => area(b[1]) - area(a[1]))
    .map(([u]) => u);
}

const area = (wh: unknown) => (Array.isArray(wh) ? (Number(wh[0]) || 0) * (Number(wh[1]) || 0) : 0);

function ratingValue(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const jp = /うち\s*(\d+(?:[.,]\d+)?)/.exec(s);
  const m = jp ?? /(\d+(?:[.,]\d+)?)/.exec(s);
  if (!m) return undefined;
  const n = Number(m[1].replace(',', '.'));
  return n >= 0 && n <= 5 ? n : undefined;
}

/** `<title>Amazon.com: SainSmart 4-Channel Relay Module : Automotive</title>` -> the product part. */
function titleFromTag(t: string | undefined): string | undefined {
  if (!t || /^amazon\.[a-z.]+$/i.test(t.trim())) return undefined;
  const parts = t.split(/ : | \| /).map((s) => s.trim());
  const first = parts[0].replace(/^Amazon\.[a-z.]+:\s*/i, '').trim();
  return first && !/^amazon\.[a-z.]+$/i.test(first) ? first : undefined;
}
