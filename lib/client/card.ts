/**
 * The card renderer of `@linklens/client/card`: a Link record as a card, in HTML. It runs anywhere
 * (a server that renders messages, a worker, a browser) and loads nothing.
 *
 *  - `renderCard(record, options)` returns the card's HTML: every value from the record is escaped,
 *    every URL must be http(s), every size a whole number within bounds (an image size past
 *    MAX_IMAGE_SIDE is not used), and the output holds no script, no inline event handler and no
 *    player: a record's `embed` becomes a play button whose player is built only on a click
 *    (`activateCard`, or the `<linklens-card>` element, which does it itself), and only when the
 *    client may build it (./players.ts: a listed provider's player, or one on `playerOrigins`).
 *  - `cardStyles` is the card's stylesheet (classes under `.ll-card`); `styles: true` puts it in
 *    the HTML as a `<style>` element.
 *  - `@linklens/client/card-element` (./card-element.ts, browsers only) registers `<linklens-card>`,
 *    which renders a record in its shadow root, draws the blurhash placeholder and loads the player
 *    on a click, and has `activateCard` for cards rendered on a server.
 */
import type { ImageAsset, ImageSet, LinkRecord } from '../contract/link.js';
import { byline, cardImage, isRightToLeft, typeLine } from './card-facts.js';
import { escapeHtml } from './escape.js';
import { frameAllowance } from './players.js';

export { byline, cardImage, formatDuration, typeLine } from './card-facts.js';
export { cardStyles } from './card-styles.js';

import { cardStyles } from './card-styles.js';

export interface CardOptions {
  /** `large`: the image on top (the default); `small`: a square image beside the text. */
  size?: 'small' | 'large';
  /** `light`, `dark`, or `auto` (the reader's `prefers-color-scheme`; the default). */
  theme?: 'light' | 'dark' | 'auto';
  /** An `ok: false` record: a `minimal` card (the domain, the icon and the link; the default), or `none` (an empty string). */
  failed?: 'minimal' | 'none';
  /** Puts `cardStyles` in a `<style>` element before the card (default false: the page brings them). */
  styles?: boolean;
  /**
   * Colours (the image's placeholder, the icon's background) as `style` attributes (the default).
   * false puts them in `data-ll-*` attributes only, for a page whose CSP forbids inline styles:
   * `activateCard` and `<linklens-card>` then apply them through the CSSOM, which the CSP allows.
   */
  inlineStyles?: boolean;
  /** The locale for dates and numbers (the runtime's default when absent). */
  locale?: string;
  /** The link's `target` (default `_blank`, with `rel="noopener noreferrer"`); `null` for none. */
  target?: string | null;
  /**
   * https origins whose iframe players may load besides the list's (./players.ts): without its
   * origin here, a player elsewhere (an operator's origin, a site's own player) gets no play button.
   */
  playerOrigins?: readonly string[];
}

/** The largest width or height of an image the card writes: a hosted size is at most 1280; anything past this is not a real size. */
export const MAX_IMAGE_SIDE = 8192;

/** `player-origins` (space-separated) as the https origins it names; anything else in it is dropped. */
export function playerOriginsOf(value: string | undefined): string[] {
  const out: string[] = [];
  for (const token of (value ?? '').split(/\s+/)) {
    try {
      const u = new URL(token);
      if (u.protocol === 'https:' && u.origin === token.replace(/\/$/, '')) out.push(u.origin);
    } catch {
      // not an origin
    }
  }
  return out;
}

/**
 * The URL when it is absolute https, or http unless `httpsOnly` (made canonical by URL), else
 * undefined: no javascript:, data: or relative URL gets out. The card's links and images, and the
 * players the card element builds (https only for an iframe).
 */
export function webUrl(value: string | null | undefined, httpsOnly = false): string | undefined {
  if (!value) return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || (!httpsOnly && u.protocol === 'http:') ? u.href : undefined;
  } catch {
    return undefined;
  }
}

const HEX = /^#[0-9a-f]{6}$/i;
const color = (c: string | undefined) => (c && HEX.test(c) ? c.toLowerCase() : undefined);

/** `style` and `data-ll-*` attributes for a colour (the data attribute always; the style only when inline styles are on). */
function colorAttrs(name: string, value: string | undefined, inline: boolean): string {
  const c = color(value);
  if (!c) return '';
  return ` data-ll-${name}="${c}"${inline ? ` style="background-color:${c}"` : ''}`;
}

/** A side as the card writes it: a whole number from 1 to MAX_IMAGE_SIDE, else undefined. */
const side = (n: number) => (Number.isFinite(n) && n >= 0.5 && n <= MAX_IMAGE_SIDE ? Math.round(n) : undefined);

/** The hosted sizes of an image with sides within bounds, whole, smallest first, without repeats (a small image's sizes are the same file). */
function assets(image: ImageSet): ImageAsset[] {
  const out: ImageAsset[] = [];
  for (const a of [image.thumbnail, image.medium, image.large]) {
    const width = a && side(a.width);
    const height = a && side(a.height);
    if (a && width && height && webUrl(a.url) && !out.some((o) => o.width === width)) out.push({ ...a, width, height });
  }
  return out.sort((x, y) => x.width - y.width);
}

function imageHtml(image: ImageSet, size: 'small' | 'large', inline: boolean): string {
  const sizes = assets(image);
  if (!sizes.length) return '';
  const largest = sizes[sizes.length - 1];
  const src = size === 'small' ? sizes[0] : (sizes.find((a) => a.width >= 640) ?? largest);
  const srcset = sizes.map((a) => `${escapeHtml(webUrl(a.url))} ${a.width}w`).join(', ');
  const sizesAttr = size === 'small' ? '(max-width: 480px) 80px, 120px' : '(max-width: 560px) 100vw, 560px';
  const blurhash = image.blurhash && /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/.test(image.blurhash) ? ` data-ll-blurhash="${escapeHtml(image.blurhash)}"` : '';
  return (
    `<div class="ll-media"${colorAttrs('placeholder', image.dominantColor, inline)}${blurhash}>` +
    `<img class="ll-image" src="${escapeHtml(webUrl(src.url))}" srcset="${srcset}" sizes="${sizesAttr}"` +
    ` width="${largest.width}" height="${largest.height}" alt="${escapeHtml(image.alt ?? '')}" loading="lazy" decoding="async">` +
    '</div>'
  );
}

function siteHtml(r: LinkRecord, inline: boolean): string {
  const name = r.siteName ?? r.domain ?? hostOf(r.url);
  const iconUrl = webUrl(r.icon?.url);
  const icon = iconUrl
    ? `<span class="ll-icon"${colorAttrs('icon', r.icon?.backgroundColor, inline)}><img src="${escapeHtml(iconUrl)}" width="16" height="16" alt="" loading="lazy" decoding="async"></span>`
    : '';
  return `<div class="ll-site">${icon}<span class="ll-site-name">${escapeHtml(name)}</span></div>`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/** True when the client may build the embed's player: a native element, or an iframe (the first player element) on the list or on `origins`. */
function playable(html: string, url: string, origins: readonly string[] | undefined): boolean {
  return /<(iframe|video|audio)\b/i.exec(html)?.[1].toLowerCase() !== 'iframe' || frameAllowance(url, origins) !== undefined;
}

function playHtml(r: LinkRecord, origins: readonly string[] | undefined): string {
  const embed = r.embed;
  if (!embed?.html || !webUrl(embed.url) || !playable(embed.html, embed.url, origins)) return '';
  const label = `Play${r.title ? `: ${r.title}` : ''}`;
  return (
    `<button type="button" class="ll-play" data-ll-play aria-label="${escapeHtml(label)}" data-ll-embed="${escapeHtml(embed.html)}">` +
    '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true" focusable="false"><path d="M8 5v14l11-7z" fill="currentColor"/></svg></button>'
  );
}

/** The card's opening tag: its classes, direction and language. */
function open(r: LinkRecord, o: Required<Pick<CardOptions, 'size' | 'theme'>>, extra: string): string {
  const dir = isRightToLeft(r.language) ? 'rtl' : 'ltr';
  const lang = r.language && /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i.test(r.language) ? ` lang="${escapeHtml(r.language)}"` : '';
  return `<article class="ll-card ll-${o.size} ll-theme-${o.theme}${extra}" dir="${dir}"${lang}>`;
}

function linkAttrs(url: string | undefined, target: string | null): string {
  const t = target === null ? '' : ` target="${escapeHtml(target)}" rel="noopener noreferrer nofollow ugc"`;
  return url ? ` href="${escapeHtml(url)}"${t}` : '';
}

/** Renders a record as a card (see the module's comment). */
export function renderCard(record: LinkRecord, options: CardOptions = {}): string {
  const o = { size: options.size ?? 'large', theme: options.theme ?? 'auto' } as const;
  const inline = options.inlineStyles !== false;
  const target = options.target === undefined ? '_blank' : options.target;
  const style = options.styles ? `<style>${cardStyles}</style>` : '';
  const url = webUrl(record.url);
  if (!record.ok) {
    if (options.failed === 'none') return '';
    return (
      `${style}${open(record, o, ' ll-failed')}<div class="ll-body">${siteHtml(record, inline)}` +
      `<a class="ll-title ll-link"${linkAttrs(url, target)}>${escapeHtml(record.url)}</a></div></article>`
    );
  }
  const image = cardImage(record);
  const media = image ? imageHtml(image, o.size, inline) : '';
  const title = record.title ?? record.url;
  const line = typeLine(record, options.locale);
  const by = byline(record, options.locale);
  const body = [
    siteHtml(record, inline),
    `<a class="ll-title ll-link"${linkAttrs(url, target)}>${escapeHtml(title)}</a>`,
    record.description ? `<p class="ll-description">${escapeHtml(record.description)}</p>` : '',
    by ? `<p class="ll-byline">${escapeHtml(by)}</p>` : '',
    line ? `<p class="ll-fact">${escapeHtml(line)}</p>` : '',
  ].join('');
  const play = playHtml(record, options.playerOrigins);
  const mediaBox = media ? `<div class="ll-media-box">${media}${play}</div>` : play ? `<div class="ll-media-box ll-no-image">${play}</div>` : '';
  const extra = `${media ? '' : ' ll-no-media'}${play ? ' ll-has-player' : ''}`;
  return `${style}${open(record, o, extra)}${mediaBox}<div class="ll-body">${body}</div></article>`;
}
