/**
 * The content's images, for the `page-content` job's DOM steps (lib/page/page-content-dom.ts):
 * which addresses to host (tracking pixels left out), and, once lib/page/page-images.ts has
 * hosted them, each <img> rewritten to its hosted rendition or removed with the wrappers it leaves
 * empty. Pure functions of a sanitized DOM, run in the CPU pool's threads as well as in-process.
 */
import type { ContentImage } from '../jobs/kinds.js';
import type { DomElement } from './sanitize.js';

/** Declared as at most this many pixels each way: a tracking pixel or spacer, removed without a fetch. */
const PIXEL_MAX = 2;

/** The distinct addresses of the content's images, in document order (tracking pixels left out). */
export function contentImageUrls(root: DomElement): string[] {
  const urls: string[] = [];
  for (const img of Array.from(root.querySelectorAll('img'))) {
    const src = img.getAttribute('src');
    if (!src || isPixel(img) || urls.includes(src)) continue;
    urls.push(src);
  }
  return urls;
}

/**
 * Rewrites each <img> of `root` to its hosted rendition: the `medium` one (640 px box, the
 * versions' reading width) as src, no srcset; width/height are the page's own, else the
 * rendition's. An image not hosted is removed, with the wrappers (<picture>, <figure>, a link) it
 * leaves empty.
 */
export function applyHostedImages(root: DomElement, hosted: Map<string, ContentImage>): void {
  for (const img of Array.from(root.querySelectorAll('img'))) {
    const h = hosted.get(img.getAttribute('src') ?? '');
    if (h && !isPixel(img)) rewrite(img, h);
    else removeImage(img, root);
  }
}

function isPixel(img: DomElement): boolean {
  const w = Number(img.getAttribute('width') ?? NaN);
  const h = Number(img.getAttribute('height') ?? NaN);
  return w <= PIXEL_MAX && h <= PIXEL_MAX;
}

function rewrite(img: DomElement, h: ContentImage): void {
  img.setAttribute('src', h.medium.url);
  img.removeAttribute('srcset');
  if (img.getAttribute('width') === null && img.getAttribute('height') === null) {
    img.setAttribute('width', String(h.medium.width));
    img.setAttribute('height', String(h.medium.height));
  }
}

/** Wrappers an image leaves behind: removed when nothing but whitespace (or, for a figure, its caption) is left. */
const WRAPPERS = new Set(['picture', 'a', 'span', 'p', 'div', 'center', 'figure']);

function removeImage(img: DomElement, root: DomElement): void {
  let parent = img.parentNode as DomElement | null;
  img.remove();
  while (parent && parent !== root && parent.nodeType === 1 && WRAPPERS.has(parent.tagName.toLowerCase())) {
    const tag = parent.tagName.toLowerCase();
    const empty =
      tag === 'figure'
        ? Array.from(parent.querySelectorAll('img, table, pre, blockquote, ul, ol')).length === 0 &&
          !Array.from(parent.childNodes)
            .filter((n) => n.nodeName.toLowerCase() !== 'figcaption')
            .map((n) => n.textContent ?? '')
            .join('')
            .trim()
        : !(parent.textContent ?? '').trim() && Array.from(parent.querySelectorAll('img, table, pre, hr')).length === 0;
    if (!empty) break;
    const next = parent.parentNode as DomElement | null;
    parent.remove();
    parent = next;
  }
}
