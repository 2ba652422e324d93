/**
 * An Amazon product (RETAILER_PRODUCT, `retailerProduct`) from its page: title (#productTitle),
 * description (the meta description, else #productDescription), features (#feature-bullets),
 * price and currency (the core price block's `.a-offscreen` text in the store's locale,
 * ../shared/price.ts), rating (#acrPopover), reviewCount (#acrCustomerReviewText), media (the
 * main image's data-a-dynamic-image JSON, largest rendition first, plus data-old-hires and the
 * alternate thumbnails). A robot check (captcha page) is ok:false, never a product titled "Amazon.com".
 */
import type { Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { RetailerProduct } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { fetchPlatformPage, isOk } from '../shared/fetch.js';
import { hostImageUrls } from '../shared/host-media.js';
import { compact, parseJson } from '../shared/json.js';
import { cleanHtmlText, type ParsedPage, parsePlatformPage } from '../shared/page.js';
import { type Price, parseLocaleNumber, parsePrice } from '../shared/price.js';
import type { PlatformContext, PlatformPreview } from '../types.js';

/** The public suffix of an Amazon host, its store's country: `www.amazon.co.uk` -> `co.uk`. */
export function storeTld(host: string): string {
  const m = /(?:^|\.)amazon\.(.+)$/i.exec(host);
  return (m ? m[1] : host.split('.').slice(-1)[0]).toLowerCase();
}

export async function extractProduct(url: URL, asin: string, ctx: PlatformContext): Promise<PlatformPreview | undefined> {
  // The only source: a FetchFailure propagates (the generic preview, ./types.ts).
  const res = await fetchPlatformPage(url.href, ctx);
  const page = parsePlatformPage(res, ctx);
  const captcha =
    page.wall === 'amazon-robot-check' ||
    /validateCaptcha|Type the characters you see in this image|api-services-support@amazon\.com/i.test(page.html.slice(0, 200_000));
  if (captcha || page.wall) return { type: 'RETAILER_PRODUCT', ok: false, status: res.status === 200 ? 503 : res.status, fields: {} };
  if (res.status === 404) return { type: 'RETAILER_PRODUCT', ok: false, status: 404, fields: {} };
  if (!isOk(res.status)) return undefined;

  const tld = storeTld(new URL(res.finalUrl).hostname);
  const p = readProductPage(page, tld);
  if (!p.title) return undefined; // not a product page we can read: the generic preview
  const media = await hostImageUrls(p.images, ctx);
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
  price?: Price;
  rating?: number;
  reviewCount?: number;
  images: string[];
}

type Doc = ReturnType<typeof parseDocument>;

const text = (e: Element | null | undefined) => (e ? cleanHtmlText(DomUtils.textContent(e)) : undefined);
const byId = (root: Doc, id: string) => DomUtils.getElementById(id, root.children, true) ?? undefined;
const hasClass = (e: Element, c: string) => (e.attribs.class ?? '').split(/\s+/).includes(c);
const findAll = (root: Element | Doc, test: (e: Element) => boolean) => DomUtils.findAll(test, root.children);

/** Reads a product page's fields (pure, for tests). */
function readProductPage(page: ParsedPage, tld: string): ProductPage {
  const doc = parseDocument(page.html, { decodeEntities: true });
  const metaDesc = page.meta('description', 'og:description');
  return {
    title: text(byId(doc, 'productTitle')) ?? text(byId(doc, 'title')) ?? titleFromTag(page.data.title),
    description: metaDesc ?? text(byId(doc, 'productDescription'))?.slice(0, 4000) ?? text(byId(doc, 'bookDescription_feature_div'))?.slice(0, 4000),
    features: readFeatures(doc),
    price: readPrice(doc, page, tld),
    ...readRating(doc),
    images: readImages(doc, page),
  };
}

/** The feature bullets (#feature-bullets), at most 30, hidden ones left out. */
function readFeatures(doc: Doc): string[] {
  const features: string[] = [];
  const bullets = byId(doc, 'feature-bullets');
  if (!bullets) return features;
  for (const li of findAll(bullets, (e) => e.name === 'li')) {
    if (li.attribs.id === 'replacementPartsFitmentBullet' || hasClass(li, 'aok-hidden')) continue;
    const t = text(li);
    if (t && t.length > 1 && features.length < 30) features.push(t);
  }
  return features;
}

/** The price blocks, the core one first, then the older ids. */
const PRICE_BLOCKS = [
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
];

/** The price: the first price block that gives one, else the page's price meta tags. */
function readPrice(doc: Doc, page: ParsedPage, tld: string): Price | undefined {
  for (const id of PRICE_BLOCKS) {
    const block = byId(doc, id);
    if (!block) continue;
    const off = findAll(block, (e) => hasClass(e, 'a-offscreen'))
      .map(text)
      .find((t) => !!t && /\d/.test(t));
    const own = off ?? (/\d/.test(text(block) ?? '') && (text(block) ?? '').length < 40 ? text(block) : undefined);
    const price = parsePrice(own, tld);
    if (price) return price;
  }
  const amount = page.meta('og:price:amount', 'product:price:amount');
  if (!amount) return undefined;
  const n = parseLocaleNumber(amount);
  if (n === undefined) return undefined;
  return { price: n, currency: page.meta('og:price:currency', 'product:price:currency') ?? parsePrice(`1 ${amount}`, tld)?.currency };
}

/** Rating ("4,1 de 5 estrellas", "4.6 out of 5 stars", "5つ星のうち4.5") and the review count. */
function readRating(doc: Doc): Pick<ProductPage, 'rating' | 'reviewCount'> {
  const pop = byId(doc, 'acrPopover');
  const ratingText = pop?.attribs.title ?? text(pop ? findAll(pop, (e) => hasClass(e, 'a-icon-alt'))[0] : undefined);
  const reviews = text(byId(doc, 'acrCustomerReviewText'));
  return { rating: ratingValue(ratingText), ...(reviews ? { reviewCount: parseCount(reviews.replace(/^\(|\)$/g, '')) } : {}) };
}

/** Images: the main image's dynamic-image JSON (largest first), its hi-res, then the alternates; else og:image. */
function readImages(doc: Doc, page: ParsedPage): string[] {
  const images: string[] = [];
  const main = byId(doc, 'landingImage') ?? byId(doc, 'imgBlkFront') ?? byId(doc, 'ebooksImgBlkFront') ?? byId(doc, 'main-image');
  if (main) {
    const hires = main.attribs['data-old-hires'];
    if (hires && /^https?:/.test(hires)) images.push(hires);
    images.push(...dynamicImages(main.attribs['data-a-dynamic-image']));
    if (images.length === 0 && main.attribs.src && /^https?:/.test(main.attribs.src)) images.push(main.attribs.src);
  }
  const alt = byId(doc, 'altImages');
  if (alt) {
    for (const img of findAll(alt, (e) => e.name === 'img')) {
      const src = img.attribs.src;
      if (src && /\/images\/I\//.test(src) && !/play-icon|video/i.test(src)) images.push(src.replace(/\._[^/]*_\./, '.'));
      if (images.length >= 8) break;
    }
  }
  if (images.length === 0) {
    const og = page.meta('og:image');
    if (og) images.push(og);
  }
  return [...new Set(images)];
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
