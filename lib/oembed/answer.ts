/**
 * A Link record as an oEmbed 1.0 response (https://oembed.com/ section 2.3), within the
 * consumer's maxwidth and maxheight:
 *
 * - an IMAGE link with its hosted image: `photo`, the largest hosted size that fits;
 * - a record with a player (`embed`): `video` for a video player, `rich` for any other (an audio
 *   bar, a post, an image viewer), with the player's element sized to the answer's width and height;
 * - anything else: `link`.
 *
 * Every type carries the title, author_name/author_url (the record's author), provider_name (its
 * siteName, else its domain), provider_url (the origin of its final URL) and, when the record has
 * an image, a thumbnail: the largest hosted size within the bounds (none when none fits).
 */
import type { Embed, ImageAsset, ImageSet, LinkRecord, OEmbed } from '../contract/link.js';
import type { OEmbedBounds } from './request.js';

/** What every type carries (openapi.yaml's OEmbed). */
type OEmbedCommon = Pick<
  OEmbed,
  'version' | 'title' | 'author_name' | 'author_url' | 'provider_name' | 'provider_url' | 'thumbnail_url' | 'thumbnail_width' | 'thumbnail_height'
>;

/** The four types with what the specification requires of each. */
export type OEmbedAnswer =
  | (OEmbedCommon & { type: 'photo'; url: string; width: number; height: number })
  | (OEmbedCommon & { type: 'video' | 'rich'; html: string; width: number; height: number })
  | (OEmbedCommon & { type: 'link' });

/** tsc fails here when the answer drifts from openapi.yaml's OEmbed. */
const _matchesDocument = (a: OEmbedAnswer): OEmbed => a;
void _matchesDocument;

/** A scaling player's width when the consumer gives no maxwidth. */
export const DEFAULT_PLAYER_WIDTH = 640;
/** The ratio of a player that gives neither its size nor its aspect ratio. */
const DEFAULT_ASPECT_RATIO = 16 / 9;

/** The hosted sizes a photo may be, largest first (`original` may be far larger than any page needs). */
const PHOTO_SIZES = ['large', 'medium', 'thumbnail'] as const;
/** The hosted sizes a thumbnail may be without bounds, largest first: a thumbnail stays modest. */
const THUMBNAIL_SIZES = ['medium', 'thumbnail'] as const;

type Size = { width: number; height: number };

/** The oEmbed answer of an ok record (an ok:false record has none: the route answers 404). */
export function oembedAnswer(record: LinkRecord, bounds: OEmbedBounds = {}): OEmbedAnswer {
  const common = commonFields(record, bounds);
  const photo = record.type === 'IMAGE' && record.image ? photoOf(record.image, bounds) : undefined;
  if (photo) return { type: 'photo', ...common, ...photo };
  if (record.embed) {
    const size = playerSize(record.embed, bounds);
    return { type: record.embed.type === 'video' ? 'video' : 'rich', ...common, html: sizedHtml(record.embed.html, size), ...size };
  }
  return { type: 'link', ...common };
}

function commonFields(record: LinkRecord, bounds: OEmbedBounds): OEmbedCommon {
  const out: OEmbedCommon = { version: '1.0' };
  if (record.title) out.title = record.title;
  if (record.author?.name) out.author_name = record.author.name;
  if (record.author?.url) out.author_url = record.author.url;
  out.provider_name = record.siteName || record.domain;
  const origin = originOf(record.redirectionUrl ?? record.url);
  if (origin) out.provider_url = `${origin}/`;
  const thumb = record.image ? fittingSize(record.image, sizesFor(bounds), bounds) : undefined;
  if (thumb) Object.assign(out, { thumbnail_url: thumb.url, thumbnail_width: thumb.width, thumbnail_height: thumb.height });
  return out;
}

/** Within bounds, the largest hosted size may be the thumbnail; without any, at most medium. */
function sizesFor(bounds: OEmbedBounds): readonly ('large' | 'medium' | 'thumbnail')[] {
  return bounds.maxwidth === undefined && bounds.maxheight === undefined ? THUMBNAIL_SIZES : PHOTO_SIZES;
}

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

const fits = (s: Size, b: OEmbedBounds) => (b.maxwidth === undefined || s.width <= b.maxwidth) && (b.maxheight === undefined || s.height <= b.maxheight);

/** The first of `sizes` (largest first) the set has that fits the bounds, in whole pixels. */
function fittingSize(set: ImageSet, sizes: readonly ('large' | 'medium' | 'thumbnail')[], bounds: OEmbedBounds): ImageAsset | undefined {
  for (const name of sizes) {
    const asset = set[name];
    if (!asset) continue;
    const size = { url: asset.url, width: Math.round(asset.width), height: Math.round(asset.height) };
    if (size.width > 0 && size.height > 0 && fits(size, bounds)) return size;
  }
  return undefined;
}

/**
 * A photo: the largest hosted size that fits; when even the thumbnail is larger than the bounds,
 * the thumbnail with the display size scaled down to them (the specification wants the bounds kept).
 */
function photoOf(set: ImageSet, bounds: OEmbedBounds): { url: string; width: number; height: number } | undefined {
  const fit = fittingSize(set, PHOTO_SIZES, bounds);
  if (fit) return { url: fit.url, width: fit.width, height: fit.height };
  const smallest = set.thumbnail;
  if (!smallest || !(smallest.width > 0 && smallest.height > 0)) return undefined;
  return { url: smallest.url, ...scaledToFit(smallest, bounds) };
}

/** A size scaled down (never up) to fit the bounds, its ratio kept; at least 1 x 1. */
function scaledToFit(size: Size, bounds: OEmbedBounds): Size {
  const scale = Math.min(1, bounds.maxwidth ? bounds.maxwidth / size.width : 1, bounds.maxheight ? bounds.maxheight / size.height : 1);
  return { width: Math.max(1, Math.floor(size.width * scale)), height: Math.max(1, Math.floor(size.height * scale)) };
}

/**
 * The player's size in the answer:
 * - a fixed-size player (width and height): its size, scaled down to the bounds;
 * - a fixed-height bar (an audio player: height only): maxwidth (or the default) wide, its own height (at most maxheight);
 * - a player that scales (aspectRatio, or nothing known: 16:9): maxwidth (or the default) wide,
 *   the height from the ratio; when that is taller than maxheight, maxheight tall and the width from the ratio.
 */
export function playerSize(embed: Pick<Embed, 'width' | 'height' | 'aspectRatio'>, bounds: OEmbedBounds): Size {
  const { width, height, aspectRatio } = embed;
  if (width && height && width > 0 && height > 0) return scaledToFit({ width, height }, bounds);
  const cap = bounds.maxwidth ?? DEFAULT_PLAYER_WIDTH;
  const wide = Math.max(1, Math.round(width && width > 0 ? Math.min(width, cap) : cap));
  if (height && height > 0 && !aspectRatio) return { width: wide, height: Math.max(1, Math.min(Math.round(height), bounds.maxheight ?? height)) };
  const ratio = aspectRatio && aspectRatio > 0 ? aspectRatio : DEFAULT_ASPECT_RATIO;
  const tall = Math.max(1, Math.round(wide / ratio));
  if (bounds.maxheight === undefined || tall <= bounds.maxheight) return { width: wide, height: tall };
  return { width: Math.max(1, Math.min(wide, Math.floor(bounds.maxheight * ratio))), height: bounds.maxheight };
}

const ROOT = /^(\s*)<(iframe|video|audio)\b([^>]*)>/i;
/** One attribute of a start tag, its value (double-quoted, single-quoted or bare) read whole: a value's text is never taken for attributes. */
const ATTRIBUTE = /\s+([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
const REPLACED = new Set(['width', 'height', 'style']);
const SIZE_DECLARATION = /^\s*(?:width|height|aspect-ratio|max-width|max-height|min-width|min-height)\s*:/i;

/**
 * The player's element at the answer's size: on its root element (the `<iframe>`, `<video>` or
 * `<audio>` linklens built), the width and height attributes set to it and any size in its style
 * (a width of 100%, an aspect ratio) dropped; an `<audio>`, which has no size attributes, gets
 * its width in its style. Anything else in the element is left as it is: the attributes are read
 * one by one, so a `title` holding ` width=…` keeps its text.
 */
export function sizedHtml(html: string, size: Size): string {
  const m = ROOT.exec(html);
  if (!m) return html;
  const [whole, lead, tag, attrs] = m;
  const attributes = Array.from(attrs.matchAll(ATTRIBUTE), (a) => ({ name: a[1].toLowerCase(), text: a[0], value: a[2] ?? a[3] ?? a[4] ?? '' }));
  const kept: string[] = [];
  const style = attributes.find((a) => a.name === 'style');
  if (style) for (const d of style.value.split(';')) if (d.trim() && !SIZE_DECLARATION.test(d)) kept.push(d.trim().replace(/"/g, '&quot;'));
  const rest = attributes
    .filter((a) => !REPLACED.has(a.name))
    .map((a) => a.text)
    .join('');
  const selfClosing = /\/\s*$/.test(attrs);
  const audio = tag.toLowerCase() === 'audio';
  if (audio) kept.push(`width:${size.width}px`);
  const sizeAttrs = audio ? '' : ` width="${size.width}" height="${size.height}"`;
  const styleAttr = kept.length ? ` style="${kept.join(';')}"` : '';
  return `${lead}<${tag}${rest}${sizeAttrs}${styleAttr}${selfClosing ? ' /' : ''}>${html.slice(whole.length)}`;
}
