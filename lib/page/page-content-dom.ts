/**
 * The CPU side of the `page-content` job (lib/page/page-content.ts): everything it does with the
 * page's DOM, as pure functions of strings and plain objects, so they run in a thread of the CPU
 * pool (lib/jobs/cpu-pool.ts) as well as in-process, with the same results.
 *
 * - Articles: @mozilla/readability on a linkedom DOM finds the main content.
 * - Pages that are not articles (home pages, apps): the body, minus navigation, header, footer,
 *   asides, forms, cookie banners and other boilerplate.
 * Either way the result goes through the allowlist sanitizer (lib/page/sanitize.ts), then the
 * Markdown writer (lib/page/markdown.ts: turndown, no live markup) and a block-aware walk for
 * plain text.
 *
 * The job reads the page in one step (`readPageContent`: decode, DOM, content, text and, for
 * content without images, the HTML and Markdown). Content with images waits for them to be hosted
 * (lib/page/page-images.ts, on the job's side: downloads and renders), then a second step
 * (`writePageVersions`) rewrites or removes each <img> (lib/page/content-images.ts) and writes the
 * HTML and Markdown. Between
 * the two the content travels as a ContentTree: its elements and text nodes as they are, not
 * serialized HTML (parsing that again would repair nesting, e.g. a <p> around an <h3>, and change
 * the output).
 */
import { isProbablyReaderable, Readability } from '@mozilla/readability';
import { Parser } from 'htmlparser2';
import { parseHTML } from 'linkedom';
import { escapeHtml } from '../client/escape.js';
import { decodeText } from '../fetch/charset.js';
import type { ContentImage } from '../jobs/kinds.js';
import { applyHostedImages, contentImageUrls } from './content-images.js';
import { toMarkdown } from './markdown.js';
import { plainText } from './plain-text.js';
import { countText } from './reading-time.js';
import { type DomElement, type DomNode, sanitizeTree } from './sanitize.js';

export const PAGE_CONTENT_LIMITS = {
  /**
   * Decoded characters handed to the DOM at most, after scripts, styles, SVG and comments are cut
   * out (a larger page is cut there). A DOM costs about 6 bytes of heap per character of HTML.
   */
  maxChars: 512 * 1024,
  /** Readability gives up beyond this many elements; the body fallback is used then. */
  maxElements: 60_000,
  /**
   * Element nesting beyond which a page gets no text versions. Browsers stop nesting at 512
   * (Chromium's parser flattens deeper trees); a DOM walk that deep costs seconds of CPU and ends in
   * a stack overflow (100,000 nested <div>s: 3.7 s, then "Maximum call stack size exceeded").
   */
  maxDepth: 512,
};

/** Elements that are site chrome or boilerplate when a page is not an article. */
const BOILERPLATE = [
  'nav',
  'header',
  'footer',
  'aside',
  'form',
  'dialog',
  'noscript',
  'script',
  'style',
  'template',
  'iframe',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="complementary"]',
  '[role="search"]',
  '[role="dialog"]',
  '[role="alert"]',
  '[aria-hidden="true"]',
  '[hidden]',
  '[id*="cookie" i]',
  '[class*="cookie" i]',
  '[id*="consent" i]',
  '[class*="consent" i]',
  '[class*="newsletter" i]',
  '[class*="share" i]',
  '[class*="social" i]',
  '[class*="breadcrumb" i]',
  '[class*="sidebar" i]',
  '[id*="sidebar" i]',
  '[class*="advert" i]',
  '[class*="promo" i]',
  '[class*="skip-link" i]',
].join(',');

export interface PageContent {
  title?: string;
  excerpt?: string;
  lang?: string;
  article: boolean;
  html: string;
  markdown: string;
  text: string;
}

/** The sanitized content of a page, before it is written out (its images can still be rewritten). */
interface ParsedPageContent {
  title?: string;
  excerpt?: string;
  lang?: string;
  article: boolean;
  /** The sanitized content (absent: the page has no body). */
  root?: DomElement;
  /** The page's final URL (the canonical link of the HTML version). */
  url: string;
  /** Why there is no content although the page has a body (nested beyond PAGE_CONTENT_LIMITS.maxDepth). */
  refused?: string;
}

/**
 * How deep the document's elements nest, counted by htmlparser2 (implied end tags and void
 * elements as the HTML parser handles them), stopping as soon as `limit` is passed.
 */
export function nestingDepth(html: string, limit: number): number {
  let depth = 0;
  let max = 0;
  const parser: Parser = new Parser(
    {
      onopentag() {
        depth++;
        if (depth > max) max = depth;
        if (max > limit) parser.pause();
      },
      onclosetag() {
        depth--;
      },
    },
    { decodeEntities: false },
  );
  parser.write(html);
  if (max <= limit) parser.end();
  return max;
}

/** Extracts the content of an HTML document (pure: no storage; images keep their absolute source URLs). */
export function extractPageContent(html: string, url: string): PageContent {
  const parsed = parsePageContent(html, url);
  return { ...writePageContent(parsed), text: contentText(parsed) };
}

/** Finds and sanitizes the main content of an HTML document. */
function parsePageContent(html: string, url: string): ParsedPageContent {
  const lean = html.length > PAGE_CONTENT_LIMITS.maxChars ? withoutInertBlocks(html) : html;
  const source = lean.length > PAGE_CONTENT_LIMITS.maxChars ? lean.slice(0, PAGE_CONTENT_LIMITS.maxChars) : lean;
  if (nestingDepth(source, PAGE_CONTENT_LIMITS.maxDepth) > PAGE_CONTENT_LIMITS.maxDepth) {
    return { article: false, url, refused: `elements nested deeper than ${PAGE_CONTENT_LIMITS.maxDepth}` };
  }
  const { document } = parseHTML(source);
  const base = pageBase(document as unknown as DomElement, url);
  const lang = (document.documentElement?.getAttribute('lang') ?? '').trim() || undefined;
  const docTitle = document.querySelector('title')?.textContent?.replace(/\s+/g, ' ').trim() || undefined;

  let root: DomElement | undefined;
  let title = docTitle;
  let excerpt: string | undefined;
  let article = false;
  const readerable = isProbablyReaderable(document as never);
  if (readerable) {
    try {
      const parsed = new Readability<DomElement>(document as never, {
        maxElemsToParse: PAGE_CONTENT_LIMITS.maxElements,
        // Classes are kept for the sanitizer, which drops them all but <code>'s language-xxx.
        keepClasses: true,
        serializer: (node) => node as unknown as DomElement,
      }).parse();
      const content = parsed?.content;
      if (parsed && content && (parsed.length ?? 0) > 0) {
        root = content;
        article = true;
        title = parsed.title?.trim() || docTitle;
        excerpt = parsed.excerpt?.replace(/\s+/g, ' ').trim() || undefined;
      }
    } catch {
      root = undefined; // too many elements, or Readability failed: the body below
    }
  }
  if (!root) {
    // Readability changes the document it reads; the body fallback then starts from a fresh parse.
    const fresh = readerable ? parseHTML(source).document : document;
    const body = fresh.body as unknown as DomElement | null;
    if (body) {
      for (const el of Array.from(body.querySelectorAll(BOILERPLATE))) el.remove();
      root = body;
    }
  }
  if (!root) return { title, excerpt, lang, article: false, url };
  sanitizeTree(root, base);
  return { title, excerpt, lang, article, root, url };
}

/** The title is added as a heading when the content does not start with it. */
function addsHeading(parsed: ParsedPageContent): parsed is ParsedPageContent & { title: string } {
  return !!parsed.title && !!parsed.root && !startsWithHeading(parsed.root, parsed.title);
}

/** The plain-text version (image alt texts included, whether or not the image is hosted). */
function contentText(parsed: ParsedPageContent): string {
  if (!parsed.root) return '';
  return (addsHeading(parsed) ? `${parsed.title}\n\n` : '') + plainText(parsed.root);
}

/** The HTML document and the Markdown of the content as it is now. */
function writePageContent(parsed: ParsedPageContent): Omit<PageContent, 'text'> {
  const { title, excerpt, lang, article, root, url } = parsed;
  if (!root) return { title, excerpt, lang, article: false, html: '', markdown: '' };
  const body = root.innerHTML.trim();
  const heading = addsHeading(parsed) ? `<h1>${escapeHtml(parsed.title)}</h1>\n` : '';
  const markdown = toMarkdown(root, heading && title ? title : undefined);
  const doc = [
    '<!doctype html>',
    `<html${lang ? ` lang="${escapeHtml(lang)}"` : ''}>`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="referrer" content="no-referrer">',
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    title ? `<title>${escapeHtml(title)}</title>` : '',
    `<link rel="canonical" href="${escapeHtml(url)}">`,
    '</head>',
    '<body>',
    `<article>\n${heading}${body}\n</article>`,
    '</body>',
    '</html>',
    '',
  ]
    .filter((l) => l !== '')
    .join('\n');
  return { title, excerpt, lang, article, html: doc, markdown };
}

/** Scripts, styles, SVG, templates and comments never reach the content: cut before parsing a large page. */
function withoutInertBlocks(html: string): string {
  return html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(script|style|svg|template|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '');
}

function pageBase(document: DomElement, url: string): string {
  const href = document.querySelectorAll('base[href]')[0]?.getAttribute('href');
  if (href) {
    try {
      const b = new URL(href, url);
      if (b.protocol === 'http:' || b.protocol === 'https:') return b.href;
    } catch {
      /* ignore a broken base */
    }
  }
  return url;
}

function startsWithHeading(root: DomElement, title: string): boolean {
  const h = root.querySelectorAll('h1, h2')[0];
  if (!h) return false;
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
  const a = norm(h.textContent ?? '');
  const b = norm(title);
  return a.length > 0 && (a === b || b.startsWith(a) || a.startsWith(b));
}

// ---------------------------------------------------------------------------------------------
// The job's two steps

/** What `readPageContent` is given: the page as fetched. */
export interface PageContentSource {
  /** The page's final URL (base for relative URLs, the canonical link of the HTML version). */
  url: string;
  /** The page bytes, base64 (decoded with the same charset rules as extraction). */
  bytesBase64: string;
  contentType?: string;
}

/** The content of a page as read, before its images are hosted. */
export interface PageContentRead {
  title?: string;
  excerpt?: string;
  lang?: string;
  article: boolean;
  /** Why there is no content although the page has a body (nested beyond PAGE_CONTENT_LIMITS.maxDepth). */
  refused?: string;
  /** The plain-text version ('' when the page has no content), its words and CJK characters. */
  text: string;
  words: number;
  cjkChars: number;
  /** The HTML and Markdown versions, when the content has no <img> (nothing to host). */
  versions?: PageVersions;
  /** The content with images: their addresses to host (see `contentImageUrls`) and the content for `writePageVersions`. */
  images?: { urls: string[]; content: ContentParts };
}

export interface PageVersions {
  html: string;
  markdown: string;
}

/** Sanitized content as it travels between the job's two steps. */
export interface ContentParts {
  title?: string;
  excerpt?: string;
  lang?: string;
  article: boolean;
  url: string;
  tree: ContentTree;
}

/** An element (its local name, attributes in order, children) or a text node. */
type ContentNode = string | ContentTree;
type ContentTree = [name: string, attributes: [string, string][], children: ContentNode[]];

/** Step one: decode the page, find and sanitize its content, its plain text, and its versions when it has no images. */
export function readPageContent(source: PageContentSource): PageContentRead {
  const bytes = Buffer.from(source.bytesBase64, 'base64');
  const { text: html } = decodeText(bytes, source.contentType);
  const parsed = parsePageContent(html, source.url);
  const text = contentText(parsed);
  const { title, excerpt, lang, article, refused, root, url } = parsed;
  const read: PageContentRead = { title, excerpt, lang, article, refused, text, ...countText(text) };
  if (!root || refused || !text.trim()) return read;
  if (root.querySelectorAll('img').length === 0) return { ...read, versions: pageVersions(writePageContent(parsed)) };
  return { ...read, images: { urls: contentImageUrls(root), content: { title, excerpt, lang, article, url, tree: toTree(root) } } };
}

/**
 * Step two: the content with each <img> rewritten to its hosted renditions (`hosted`, by address)
 * or removed, as HTML and Markdown.
 */
export function writePageVersions(input: { content: ContentParts; hosted: Record<string, ContentImage> }): PageVersions {
  const { tree, ...rest } = input.content;
  const { document } = parseHTML('<!doctype html><html><head></head><body></body></html>');
  const root = fromTree(tree, document as unknown as DomDocument);
  applyHostedImages(root, new Map(Object.entries(input.hosted)));
  return pageVersions(writePageContent({ ...rest, root }));
}

const pageVersions = ({ html, markdown }: PageVersions): PageVersions => ({ html, markdown });

interface DomDocument {
  createElement(name: string): DomElement & { appendChild(n: DomNode): void };
  createTextNode(text: string): DomNode;
}

/** The sanitized content as a ContentTree (the sanitizer leaves elements and text only). */
function toTree(el: DomElement): ContentTree {
  const children: ContentNode[] = [];
  for (const node of Array.from(el.childNodes)) {
    if (node.nodeType === 1) children.push(toTree(node as DomElement));
    else if (node.nodeType === 3) children.push(node.textContent ?? '');
  }
  return [el.localName, Array.from(el.attributes).map((a) => [a.name, a.value]), children];
}

function fromTree([name, attributes, children]: ContentTree, document: DomDocument): DomElement {
  const el = document.createElement(name);
  // linkedom puts a new attribute first: set in reverse, they come out in their order.
  for (let i = attributes.length - 1; i >= 0; i--) el.setAttribute(attributes[i][0], attributes[i][1]);
  for (const child of children) el.appendChild(typeof child === 'string' ? document.createTextNode(child) : fromTree(child, document));
  return el;
}
