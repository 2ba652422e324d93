/**
 * An allowlist sanitizer over a DOM subtree (linkedom here): what Readability found, or the body
 * of a page that is not an article, becomes safe HTML to host.
 *
 * - Only text-level and structural tags are kept; script, style, iframe, object, forms, SVG and
 *   the like are removed with their content; any other tag is unwrapped (its children kept).
 * - Only a few attributes survive (href, src, alt, title, cell spans, ...): no event handlers,
 *   no style, no id/class (except a `language-xxx` class on <code>, which Markdown keeps).
 * - Every URL is resolved against the page's base and must be http(s) (mailto: for links);
 *   anything else (javascript:, data:, vbscript:) is dropped. Links get rel="noopener noreferrer nofollow".
 * - An <img> keeps one address: a lazy loader's data-src over a placeholder src, else src, else
 *   the best srcset candidate (a <picture>'s first <source> when the img has none); srcset and
 *   <source> themselves never survive. The job then hosts it or removes it (lib/page/page-images.ts).
 */

/** The minimal DOM surface used here, satisfied by linkedom (and by browsers' DOM). */
export interface DomNode {
  nodeType: number;
  nodeName: string;
  parentNode: DomNode | null;
  childNodes: ArrayLike<DomNode>;
  firstChild: DomNode | null;
  nextSibling: DomNode | null;
  textContent: string | null;
}
export interface DomElement extends DomNode {
  tagName: string;
  localName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  replaceWith(...nodes: DomNode[]): void;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  innerHTML: string;
}

/** Removed with everything inside them. */
const DROP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'param',
  'form',
  'input',
  'button',
  'select',
  'option',
  'textarea',
  'label',
  'fieldset',
  'datalist',
  'output',
  'svg',
  'math',
  'canvas',
  'audio',
  'video',
  'source',
  'track',
  'map',
  'area',
  'link',
  'meta',
  'base',
  'head',
  'title',
  'dialog',
  'menu',
  'portal',
  'slot',
]);

/** Kept, with the attributes listed (plus `lang`, `dir` and `title` everywhere). */
const KEEP: Record<string, string[]> = {
  p: [],
  br: [],
  hr: [],
  div: [],
  span: [],
  section: [],
  article: [],
  main: [],
  header: [],
  footer: [],
  aside: [],
  nav: [],
  h1: [],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  ul: [],
  ol: ['start', 'reversed', 'type'],
  li: ['value'],
  dl: [],
  dt: [],
  dd: [],
  a: ['href'],
  img: ['src', 'alt', 'width', 'height'],
  figure: [],
  figcaption: [],
  picture: [],
  blockquote: ['cite'],
  q: ['cite'],
  cite: [],
  pre: [],
  code: ['class'],
  kbd: [],
  samp: [],
  var: [],
  em: [],
  strong: [],
  b: [],
  i: [],
  u: [],
  s: [],
  del: ['cite', 'datetime'],
  ins: ['cite', 'datetime'],
  mark: [],
  small: [],
  sub: [],
  sup: [],
  abbr: [],
  time: ['datetime'],
  data: ['value'],
  details: [],
  summary: [],
  address: [],
  table: [],
  caption: [],
  thead: [],
  tbody: [],
  tfoot: [],
  tr: [],
  th: ['colspan', 'rowspan', 'scope'],
  td: ['colspan', 'rowspan'],
  colgroup: [],
  col: ['span'],
};
const EVERYWHERE = ['lang', 'dir', 'title'];

/** Resolves a URL against the base; undefined when it is not an allowed scheme. */
function resolvedUrl(value: string, base: string, schemes: string[] = ['http:', 'https:']): string | undefined {
  const v = value.trim();
  if (!v) return undefined;
  try {
    const u = new URL(v, base);
    return schemes.includes(u.protocol) ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Sanitizes the children of `root` in place (the root element itself is kept as it is, attributes cleared). */
export function sanitizeTree(root: DomElement, base: string): void {
  for (const a of Array.from(root.attributes).map((x) => x.name)) root.removeAttribute(a);
  // <source> is dropped below: an <img> in a <picture> with no address of its own takes the first source's.
  for (const img of Array.from(root.querySelectorAll('picture img'))) {
    if (lazyOrSrc(img)) continue;
    const srcset = Array.from((img.parentNode as DomElement).querySelectorAll('source'))
      .find((s) => s.getAttribute('srcset'))
      ?.getAttribute('srcset');
    if (srcset) img.setAttribute('data-srcset', srcset);
  }
  walk(root, base);
}

function walk(parent: DomNode, base: string): void {
  let node = parent.firstChild;
  while (node) {
    const next = node.nextSibling;
    if (node.nodeType === 8 /* comment */ || node.nodeType === 7 /* processing instruction */ || node.nodeType === 10 /* doctype */) {
      (node as DomElement).remove();
    } else if (node.nodeType === 1) {
      const el = node as DomElement;
      const tag = el.tagName.toLowerCase();
      if (DROP.has(tag) || el.getAttribute('hidden') !== null || el.getAttribute('aria-hidden') === 'true') {
        el.remove();
      } else if (!(tag in KEEP)) {
        // Unknown or custom element: keep what it contains, not the element.
        walk(el, base);
        el.replaceWith(...Array.from(el.childNodes));
      } else {
        // Readability creates its wrappers as createElement("DIV"), which linkedom serializes upper-case.
        const kept = el.localName !== tag ? (renamed(el, tag) ?? el) : el;
        cleanAttributes(kept, tag, base);
        if (tag === 'img' && !kept.getAttribute('src')) kept.remove();
        else walk(kept, base);
      }
    }
    node = next;
  }
}

/** The same element with a lower-case name (attributes and children moved over). */
function renamed(el: DomElement, tag: string): DomElement | undefined {
  const doc = (el as unknown as { ownerDocument?: { createElement(t: string): DomElement } }).ownerDocument;
  if (!doc) return undefined;
  const fresh = doc.createElement(tag);
  for (const a of Array.from(el.attributes)) fresh.setAttribute(a.name, a.value);
  while (el.firstChild) (fresh as unknown as { appendChild(n: DomNode): void }).appendChild(el.firstChild);
  el.replaceWith(fresh);
  return fresh;
}

function cleanAttributes(el: DomElement, tag: string, base: string): void {
  const allowed = KEEP[tag];
  // Lazy-loaded images keep their real address in data-src (src is then a placeholder) or srcset.
  let lazySrc: string | undefined;
  if (tag === 'img') lazySrc = lazyOrSrc(el, base);
  for (const { name } of Array.from(el.attributes).map((a) => ({ name: a.name }))) {
    const n = name.toLowerCase();
    if (!allowed.includes(n) && !EVERYWHERE.includes(n)) el.removeAttribute(name);
  }
  if (tag === 'a') {
    const href = el.getAttribute('href');
    const ok = href !== null && !href.trim().startsWith('#') ? resolvedUrl(href, base, ['http:', 'https:', 'mailto:']) : undefined;
    if (ok) {
      el.setAttribute('href', ok);
      el.setAttribute('rel', 'noopener noreferrer nofollow');
    } else el.removeAttribute('href');
  } else if (tag === 'img') {
    const ok = resolvedUrl(lazySrc ?? el.getAttribute('src') ?? '', base);
    if (ok) el.setAttribute('src', ok);
    else el.removeAttribute('src');
  } else if (tag === 'code') {
    const cls = (el.getAttribute('class') ?? '').split(/\s+/).find((c) => /^(language|lang)-[\w+#.-]{1,30}$/.test(c));
    if (cls) el.setAttribute('class', cls.replace(/^lang-/, 'language-'));
    else el.removeAttribute('class');
  }
  for (const n of ['cite']) {
    const v = el.getAttribute(n);
    if (v === null) continue;
    const ok = resolvedUrl(v, base);
    if (ok) el.setAttribute(n, ok);
    else el.removeAttribute(n);
  }
  for (const n of ['width', 'height', 'colspan', 'rowspan', 'span', 'start', 'value']) {
    const v = el.getAttribute(n);
    if (v !== null && !/^\d{1,5}$/.test(v.trim())) el.removeAttribute(n);
  }
}

/** Attributes lazy loaders keep an image's real address in (src then holds a placeholder). */
const LAZY_SRC = ['data-src', 'data-lazy-src', 'data-original', 'data-lazy', 'data-url'];

/**
 * The address an <img> shows: a lazy loader's data-src first (when it is an http(s) URL), then
 * src unless it is empty or a data: placeholder, then the best candidate of srcset / data-srcset.
 */
function lazyOrSrc(el: DomElement, base = 'http://invalid/'): string | undefined {
  for (const a of LAZY_SRC) {
    const v = el.getAttribute(a);
    if (v && resolvedUrl(v, base)) return v;
  }
  const src = el.getAttribute('src')?.trim() ?? '';
  if (src && !src.startsWith('data:')) return src;
  return bestSrcsetCandidate(el.getAttribute('srcset') ?? el.getAttribute('data-srcset'));
}

/** The width a srcset candidate is picked for: the `large` rendition (lib/media/image-sizes.ts). */
const SRCSET_TARGET_WIDTH = 1280;

type SrcsetCandidate = { url: string; w?: number; x?: number };

/**
 * The srcset candidate to host: with width descriptors the smallest at least SRCSET_TARGET_WIDTH
 * wide (else the widest), with density descriptors the largest up to 2x (else the smallest).
 * URLs may hold commas (`w_300,h_200`): a candidate's URL runs to whitespace, per the HTML parser.
 */
export function bestSrcsetCandidate(srcset: string | null | undefined): string | undefined {
  if (!srcset) return undefined;
  const candidates: SrcsetCandidate[] = [];
  let i = 0;
  while (i < srcset.length) {
    while (i < srcset.length && /[\s,]/.test(srcset[i])) i++;
    let url = '';
    while (i < srcset.length && !/\s/.test(srcset[i])) url += srcset[i++];
    let descriptor = '';
    if (url.endsWith(',')) url = url.replace(/,+$/, '');
    else {
      while (i < srcset.length && srcset[i] !== ',') descriptor += srcset[i++];
      i++;
    }
    if (!url) continue;
    const d = descriptor.trim();
    const w = /^(\d+)w$/.exec(d);
    const x = /^(\d+(?:\.\d+)?)x$/.exec(d);
    candidates.push({ url, w: w ? Number(w[1]) : undefined, x: x ? Number(x[1]) : d ? undefined : 1 });
  }
  const widths = candidates.filter((c): c is SrcsetCandidate & { w: number } => c.w !== undefined).sort((a, b) => a.w - b.w);
  if (widths.length) return (widths.find((c) => c.w >= SRCSET_TARGET_WIDTH) ?? widths[widths.length - 1]).url;
  const densities = candidates.filter((c): c is SrcsetCandidate & { x: number } => c.x !== undefined).sort((a, b) => a.x - b.x);
  if (densities.length) return ([...densities].reverse().find((c) => c.x <= 2) ?? densities[0]).url;
  return candidates[0]?.url;
}
