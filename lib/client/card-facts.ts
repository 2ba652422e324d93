/**
 * What a card says besides its title and description, from a Link record: the image it shows
 * (the record's own, else its object's), the byline (author and date) and the one line that fits
 * the type (a video's duration, a PDF's pages, reading time, a repository's stars, a product's
 * price). Plain functions over the record, with the runtime's Intl for numbers and dates: no DOM.
 */
import type { ImageSet, LinkRecord } from '../contract/link.js';

/** Languages written right to left (the primary subtag of the record's `language`). */
const RTL_LANGUAGES = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'ha', 'he', 'iw', 'ks', 'ku', 'ps', 'sd', 'ug', 'ur', 'yi']);

export function isRightToLeft(language: string | undefined): boolean {
  return !!language && RTL_LANGUAGES.has(language.toLowerCase().split(/[-_]/)[0]);
}

/** A record's image for the card: the top-level one, else the image of the object its type names. */
export function cardImage(r: LinkRecord): ImageSet | undefined {
  return (
    r.image ??
    r.videohostVideo?.thumbnail ??
    r.video?.image ??
    r.audio?.albumArtwork ??
    r.document?.image ??
    r.document?.pages?.[0]?.screenshot ??
    r.text?.image ??
    r.page?.screenshot
  );
}

/** 754 -> "12:34", 3754 -> "1:02:34". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function compact(n: number, locale: string | undefined): string {
  try {
    return new Intl.NumberFormat(locale, { notation: 'compact', maximumFractionDigits: 1 }).format(n);
  } catch {
    return String(n);
  }
}

function price(amount: number, currency: string | undefined, locale: string | undefined): string {
  try {
    return currency ? new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount) : String(amount);
  } catch {
    return `${amount} ${currency ?? ''}`.trim();
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The one line that fits the record's type, or undefined. */
export function typeLine(r: LinkRecord, locale?: string): string | undefined {
  const product = r.retailerProduct ?? r.marketplaceProduct;
  if (product?.price !== undefined) return price(product.price, product.currency, locale);
  const repo = r.codehostRepository;
  if (repo?.starsCount !== undefined) {
    const lang = repo.languages?.[0]?.name;
    return [`★ ${compact(repo.starsCount, locale)} ${repo.starsCount === 1 ? 'star' : 'stars'}`, lang].filter(Boolean).join(' · ');
  }
  const duration = r.videohostVideo?.duration ?? r.video?.duration ?? r.audio?.duration;
  if (duration !== undefined && duration > 0) return formatDuration(duration);
  if (r.document) return [r.document.type, plural(r.document.pageCount, 'page', 'pages')].filter(Boolean).join(' · ');
  const minutes = r.page?.estimatedReadingTimeInMinutes ?? r.text?.estimatedReadingTime;
  if (minutes !== undefined && minutes > 0) return `${minutes} min read`;
  return undefined;
}

/**
 * The publication date as the publisher's calendar day: the date part of the record's RFC 3339
 * value (which keeps the page's own offset), formatted as that day, so no time zone moves it.
 */
export function formatDate(value: string | undefined, locale?: string): string | undefined {
  const m = value ? /^(\d{4})-(\d{2})-(\d{2})/.exec(value) : null;
  if (!m) return undefined;
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (Number.isNaN(day.getTime())) return undefined;
  try {
    return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(day);
  } catch {
    return `${m[1]}-${m[2]}-${m[3]}`;
  }
}

/** The byline: "author · date", either alone, or undefined. */
export function byline(r: LinkRecord, locale?: string): string | undefined {
  const parts = [r.author?.name, formatDate(r.publishedAt, locale)].filter(Boolean);
  return parts.length ? parts.join(' · ') : undefined;
}
