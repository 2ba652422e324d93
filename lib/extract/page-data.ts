/**
 * What one parse of a page gives: PageData (its tags, text and app-shell signs: the data the field
 * rules read), what counts as an app-shell sign (the mount points, the scripts that do not run),
 * and the caps (PAGE_LIMITS: how much of each collection is kept, how long and how deep the parse
 * may go). lib/extract/parse-page.ts is the parser that fills it.
 */

export interface MetaTag {
  name?: string;
  property?: string;
  itemprop?: string;
  httpEquiv?: string;
  charset?: string;
  content: string;
  /** The `media` query of the tag (theme-color for a light or a dark scheme). */
  media?: string;
  /**
   * The content was cut short by a stray quote inside it (`content="Mayor opens the "new" bridge"`
   * gives "Mayor opens the "): the rest of the value became attribute names, see `cutByStrayQuote` (lib/extract/stray-quote.ts).
   */
  cut?: true;
}

export interface LinkTag {
  rel: string[];
  href: string;
  type?: string;
  sizes?: string;
  title?: string;
  media?: string;
  color?: string;
  hreflang?: string;
}

export interface ImgTag {
  src: string;
  width?: number;
  height?: number;
  alt?: string;
  className?: string;
  id?: string;
  /** Inside header/nav/footer/aside/form: site chrome (logos, sprites), not content. */
  inChrome?: boolean;
}

export interface PageData {
  title?: string;
  lang?: string;
  baseHref?: string;
  metas: MetaTag[];
  links: LinkTag[];
  /** Raw text of `<script type="application/ld+json">` blocks. */
  jsonLd: string[];
  /**
   * Microdata `itemprop` values from elements other than <meta> (content/src/href or text), with
   * the type of their itemscope and the itemprop that scope is the value of (`author`).
   */
  itemprops: { prop: string; value: string; itemtype?: string; scope?: string }[];
  h1?: string;
  /** The first paragraphs' text, for description fallbacks. */
  paragraphs: string[];
  images: ImgTag[];
  /** Visible body text, capped, for language detection and reading time. */
  text: string;
  /** Word count of the whole visible text (counted past the text cap). */
  wordCount: number;
  /** CJK characters in the visible text (counted past the text cap). */
  cjkChars: number;
  /** Bylines, author links and `<time>` elements (lib/extract/page-marks.ts), the first few of each. */
  marks: PageMark[];
  /** True when parsing stopped early (character, time or nesting budget); the data is from the first part. */
  cutShort?: boolean;
  /** What tells a single-page app's empty shell (lib/extract/app-shell.ts). */
  shell: ShellSigns;
}

/** Where a page writes who wrote it and when, outside its meta tags (lib/extract/page-marks.ts). */
export interface PageMark {
  kind: 'rel-author' | 'author-link' | 'byline' | 'time';
  /** The element's text, whitespace collapsed, capped. */
  text: string;
  /** A link's href, as written. */
  href?: string;
  /** A `<time>`'s datetime attribute. */
  datetime?: string;
  /** A `<time>` the page marks as the publication (pubdate, itemprop, class, or in the article's header). */
  published?: true;
}

/** The marks of an app shell in the static HTML: scripts, the elements apps mount into, a noscript notice. */
export interface ShellSigns {
  /** Executable scripts (inline or `src`; JSON and JSON-LD blocks not counted: DATA_SCRIPT). */
  scripts: number;
  /** The `src` of the first few scripts. */
  scriptSrcs: string[];
  /** Mount points seen (MOUNT_IDS, MOUNT_TAGS): `#root`, `#app`, `#__next`, `app-root`, … */
  mounts: string[];
  /** The text of the `<noscript>` elements, capped. */
  noscript: string;
}

/** The ids and tags single-page apps mount into. */
export const MOUNT_IDS = new Set(['root', 'app', '__next', '__nuxt', 'q-app', 'svelte', 'main', 'application', 'ember-app']);
export const MOUNT_TAGS = new Set(['app-root', 'flutter-view', 'flt-glass-pane']);
/** Script types that do not run (data blocks). */
export const DATA_SCRIPT = /json|template|text\/(x-)?(handlebars|template)/i;

export const PAGE_LIMITS = {
  metas: 2000,
  links: 500,
  jsonLdBlocks: 20,
  jsonLdBytes: 512 * 1024,
  images: 200,
  paragraphs: 8,
  textChars: 20_000,
  attributeChars: 8_192,
  itemprops: 300,
  /** Decoded characters parsed at most; metadata is at the top, so a huge page is cut there. */
  parseChars: 4_000_000,
  /** Wall-clock budget for one parse (checked between chunks). */
  parseMs: 1_500,
  /**
   * Element nesting at which the parse stops (the data is what came before). htmlparser2 keeps
   * its open-element stack with unshift/shift, so each tag costs time in proportion to the depth:
   * a deeply nested page would spend seconds of CPU inside one chunk, past parseMs (`npm run bench
   * -- hostile` times it). Browsers stop nesting at 512 too (Chromium's parser flattens deeper trees).
   */
  maxDepth: 512,
  /** Bytes per decoder/parser chunk. */
  chunkBytes: 64 * 1024,
};
