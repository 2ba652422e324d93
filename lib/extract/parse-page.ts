/**
 * One streaming pass of htmlparser2 over a page into a compact PageData (lib/extract/page-data.ts):
 * the metadata the field rules need, and bounded text for defaults and language detection. Nothing
 * is kept that the rules do not read, and every collection is capped (PAGE_LIMITS), so memory stays
 * small on huge pages.
 */
import { Parser } from 'htmlparser2';
import iconv from 'iconv-lite';
import { DATA_SCRIPT, MOUNT_IDS, MOUNT_TAGS, PAGE_LIMITS, type PageData } from './page-data.js';
import { MarkCollector } from './page-marks.js';
import { PageTokenizer } from './page-tokenizer.js';
import { cutByStrayQuote } from './stray-quote.js';

/** Microdata properties whose value is text even on elements with an href or src. */
const TEXT_PROPS = new Set(['headline', 'name', 'alternativeheadline', 'description', 'title']);

const SKIP_TEXT = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'nav',
  'footer',
  'header',
  'aside',
  'form',
  'select',
  'button',
  'iframe',
  'object',
]);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param']);
const CHROME = new Set(['nav', 'footer', 'header', 'aside', 'form']);
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

/** `s` cut to `n` characters; a string stays a string, undefined stays undefined. */
function clip(s: string, n?: number): string;
function clip(s: string | undefined, n?: number): string | undefined;
function clip(s: string | undefined, n = PAGE_LIMITS.attributeChars): string | undefined {
  return s === undefined ? undefined : s.length > n ? s.slice(0, n) : s;
}
const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const num = (s: string | undefined) => (s && /^\d+/.test(s) ? parseInt(s, 10) : undefined);

/** A streaming page parser: write() chunks of decoded text, then end() for the PageData. */
class PageParser {
  private readonly data: PageData = {
    metas: [],
    links: [],
    jsonLd: [],
    itemprops: [],
    paragraphs: [],
    images: [],
    marks: [],
    text: '',
    wordCount: 0,
    cjkChars: 0,
    shell: { scripts: 0, scriptSrcs: [], mounts: [], noscript: '' },
  };
  private noscriptDepth = 0;
  private readonly marks = new MarkCollector();
  private readonly parser: Parser;
  private stack: string[] = [];
  private skipFlags: boolean[] = [];
  private skipDepth = 0;
  private inTitle = false;
  private titleBuf = '';
  private headDepth = 0;
  private jsonLdBuf: string | null = null;
  private jsonLdBytes = 0;
  private h1Buf: string | null = null;
  private pBuf: string | null = null;
  private propBuf: { prop: string; buf: string; depth: number; itemtype?: string } | null = null;
  /** Per open element: its itemscope's type and the itemprop it is the value of (`author` for a byline's Person). */
  private itemtypes: ({ type?: string; prop?: string } | undefined)[] = [];
  private textLen = 0;
  private lastWasSpace = true;
  private chromeDepth = 0;
  /** Depth inside elements whose text is never content (script, style, hidden ...), unlike site chrome. */
  private hardSkipDepth = 0;
  private hardFlags: boolean[] = [];
  private chars = 0;
  private readonly started = Date.now();
  private stopped = false;

  constructor() {
    this.parser = new Parser(
      {
        onopentag: (name, attrs) => this.open(name, attrs),
        onclosetag: (name) => this.close(name),
        ontext: (text) => this.onText(text),
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true, Tokenizer: PageTokenizer },
    );
  }

  /** Feed decoded text. Returns false once the character or time budget is spent (the rest is ignored). */
  write(chunk: string): boolean {
    if (this.stopped) return false;
    this.chars += chunk.length;
    this.parser.write(chunk);
    if (this.chars >= PAGE_LIMITS.parseChars || Date.now() - this.started > PAGE_LIMITS.parseMs) {
      this.stopped = true;
      this.data.cutShort = true;
    }
    return !this.stopped;
  }

  /** Stops the parse inside the current chunk (the rest of it and every later chunk are ignored). */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.data.cutShort = true;
    this.parser.pause();
  }

  end(): PageData {
    this.parser.end();
    if (this.titleBuf && !this.data.title) this.data.title = collapse(this.titleBuf);
    this.data.text = this.data.text.trim();
    this.data.marks = this.marks.marks;
    return this.data;
  }

  private open(name: string, a: Record<string, string>): void {
    if (!VOID.has(name)) {
      this.enter(name, a);
      this.marks.onOpen(name, a, this.stack.length);
    }
    this.readTag(name, a);
    const d = this.data;
    if ((MOUNT_TAGS.has(name) || (a.id && MOUNT_IDS.has(a.id.toLowerCase()))) && d.shell.mounts.length < 8)
      d.shell.mounts.push(MOUNT_TAGS.has(name) ? name : `#${a.id}`);
    if (a.itemprop && name !== 'meta' && name !== 'link' && name !== 'img') this.openItemprop(name, a, a.itemprop);
  }

  /** An element that has content: onto the stack, with whether its text is skipped (chrome, hidden) and its itemscope. */
  private enter(name: string, a: Record<string, string>): void {
    const skip = SKIP_TEXT.has(name) || a.hidden !== undefined || (a.style !== undefined && /display\s*:\s*none/i.test(a.style));
    this.stack.push(name);
    if (this.stack.length > PAGE_LIMITS.maxDepth) this.stop();
    this.skipFlags.push(skip);
    if (skip) this.skipDepth++;
    if (CHROME.has(name)) this.chromeDepth++;
    const hard = skip && !CHROME.has(name);
    this.hardFlags.push(hard);
    if (hard) this.hardSkipDepth++;
    this.itemtypes.push(a.itemscope !== undefined ? { type: clip(a.itemtype, 300), prop: clip(a.itemprop?.toLowerCase(), 100) } : undefined);
  }

  /** What a tag itself tells (lang, base, metas, links, scripts, images) and which text buffers it opens. */
  private readTag(name: string, a: Record<string, string>): void {
    const d = this.data;
    switch (name) {
      case 'html':
        if (a.lang && !d.lang) d.lang = clip(a.lang, 50);
        else if (a['xml:lang'] && !d.lang) d.lang = clip(a['xml:lang'], 50);
        break;
      case 'base':
        if (a.href && d.baseHref === undefined) d.baseHref = clip(a.href, 2048);
        break;
      case 'title':
        if (d.title === undefined && this.skipDepth === 0) {
          this.inTitle = true;
          this.titleBuf = '';
        }
        break;
      case 'meta':
        if (d.metas.length < PAGE_LIMITS.metas) this.readMeta(a);
        break;
      case 'link':
        this.readLink(a);
        break;
      case 'script':
        if ((a.type ?? '').toLowerCase().trim() === 'application/ld+json' && d.jsonLd.length < PAGE_LIMITS.jsonLdBlocks) this.jsonLdBuf = '';
        if (!DATA_SCRIPT.test(a.type ?? '')) {
          d.shell.scripts++;
          if (a.src && d.shell.scriptSrcs.length < 8) d.shell.scriptSrcs.push(clip(a.src, 300) ?? '');
        }
        break;
      case 'noscript':
        this.noscriptDepth++;
        break;
      case 'head':
        this.headDepth++;
        break;
      case 'h1':
        // An article's h1 often sits in a <header>: only script-like and hidden parents exclude it.
        if (d.h1 === undefined && this.hardSkipDepth === 0 && !this.inNav()) this.h1Buf = '';
        break;
      case 'p':
        if (d.paragraphs.length < PAGE_LIMITS.paragraphs && this.skipDepth === 0) this.pBuf = '';
        break;
      case 'img':
        this.readImage(a);
        break;
      default:
        break;
    }
  }

  private readMeta(a: Record<string, string>): void {
    const d = this.data;
    const contentKey = a.content !== undefined ? 'content' : 'value';
    const content = a[contentKey];
    if (a.charset) d.metas.push({ charset: clip(a.charset, 50), content: '' });
    if (content !== undefined && (a.name || a.property || a.itemprop || a['http-equiv'])) {
      d.metas.push({
        name: clip(a.name?.toLowerCase(), 200),
        property: clip(a.property?.toLowerCase(), 200),
        itemprop: clip(a.itemprop, 200),
        httpEquiv: clip(a['http-equiv']?.toLowerCase(), 100),
        content: clip(content),
        ...(a.media ? { media: clip(a.media, 200) } : {}),
        ...(content.trim() && cutByStrayQuote(a, contentKey) ? { cut: true as const } : {}),
      });
    }
  }

  private readLink(a: Record<string, string>): void {
    const d = this.data;
    if (a.href && a.rel && d.links.length < PAGE_LIMITS.links) {
      d.links.push({
        rel: a.rel.toLowerCase().split(/\s+/).filter(Boolean),
        href: clip(a.href, 4096),
        type: clip(a.type?.toLowerCase(), 200),
        sizes: clip(a.sizes, 200),
        title: clip(a.title, 500),
        media: clip(a.media, 200),
        color: clip(a.color, 50),
        hreflang: clip(a.hreflang, 50),
      });
    }
    // `<link itemprop=name content=…>` (a Person's name inside itemprop=author) has no href.
    if (a.itemprop && (a.href ?? a.content)) this.itemprop(a.itemprop, a.href ?? a.content);
  }

  private readImage(a: Record<string, string>): void {
    const d = this.data;
    const src = a.src || a['data-src'] || a['data-lazy-src'] || a['data-original'];
    if (src && d.images.length < PAGE_LIMITS.images) {
      d.images.push({
        src: clip(src, 4096),
        width: num(a.width),
        height: num(a.height),
        alt: clip(a.alt, 300),
        className: clip(a.class, 300),
        id: clip(a.id, 200),
        inChrome: this.chromeDepth > 0 || this.headDepth > 0 || undefined,
      });
    }
    if (a.itemprop && src) this.itemprop(a.itemprop, src);
  }

  /** An itemprop on another element: its value from an attribute, else its text (collected until it closes). */
  private openItemprop(name: string, a: Record<string, string>, prop: string): void {
    // A link's value is its href, except for text properties sites put on links (`<a itemprop=headline href=…>Title</a>`).
    const textual = TEXT_PROPS.has(prop.toLowerCase());
    // `<abbr itemprop=datePublished title="2024-02-03T20:38:00Z">8:38 pm</abbr>`: the title is the value.
    const value = a.content ?? (textual ? undefined : (a.href ?? a.src)) ?? a.datetime ?? (name === 'abbr' ? a.title : undefined);
    if (value !== undefined) this.itemprop(prop, value);
    else if (!VOID.has(name) && !this.propBuf) this.propBuf = { prop, buf: '', depth: this.stack.length, itemtype: this.currentItemtype() };
  }

  private inNav(): boolean {
    return this.stack.includes('nav') || this.stack.includes('footer');
  }

  private currentScope(): { type?: string; prop?: string } | undefined {
    for (let i = this.itemtypes.length - 1; i >= 0; i--) if (this.itemtypes[i]) return this.itemtypes[i];
    return undefined;
  }

  private currentItemtype(): string | undefined {
    return this.currentScope()?.type;
  }

  private itemprop(prop: string, value: string): void {
    if (this.data.itemprops.length < PAGE_LIMITS.itemprops) {
      const scope = this.currentScope();
      this.data.itemprops.push({ prop: clip(prop, 100), value: collapse(clip(value)), itemtype: scope?.type, ...(scope?.prop ? { scope: scope.prop } : {}) });
    }
  }

  private close(name: string): void {
    const d = this.data;
    if (VOID.has(name)) return;
    if (name === 'title' && this.inTitle) {
      this.inTitle = false;
      const t = collapse(this.titleBuf);
      if (t) d.title = t;
    }
    if (name === 'script' && this.jsonLdBuf !== null) {
      if (this.jsonLdBuf.trim()) d.jsonLd.push(this.jsonLdBuf);
      this.jsonLdBuf = null;
    }
    if (name === 'h1' && this.h1Buf !== null) {
      const t = collapse(this.h1Buf);
      if (t) d.h1 = t.slice(0, 500);
      this.h1Buf = null;
    }
    if (name === 'p' && this.pBuf !== null) {
      const t = collapse(this.pBuf);
      if (t) d.paragraphs.push(t.slice(0, 2000));
      this.pBuf = null;
    }
    if (this.propBuf && this.propBuf.depth === this.stack.length) {
      this.itemprop(this.propBuf.prop, this.propBuf.buf);
      this.propBuf = null;
    }
    // Pop to the matching open tag (tolerates unclosed children).
    const idx = this.stack.lastIndexOf(name);
    if (idx === -1) return;
    this.marks.onClose(idx + 1);
    while (this.stack.length > idx) {
      const tag = this.stack.pop();
      if (tag === undefined) break;
      this.itemtypes.pop();
      if (this.skipFlags.pop()) this.skipDepth--;
      if (CHROME.has(tag) && this.chromeDepth > 0) this.chromeDepth--;
      if (this.hardFlags.pop()) this.hardSkipDepth--;
      if (tag === 'head' && this.headDepth > 0) this.headDepth--;
      if (tag === 'noscript' && this.noscriptDepth > 0) this.noscriptDepth--;
    }
    if (this.stack.length === 0) {
      this.skipDepth = 0;
      this.headDepth = 0;
      this.chromeDepth = 0;
      this.hardSkipDepth = 0;
      this.noscriptDepth = 0;
    }
  }

  private onText(text: string): void {
    if (this.inTitle) {
      if (this.titleBuf.length < 2000) this.titleBuf += text;
      return;
    }
    if (this.jsonLdBuf !== null) {
      if (this.jsonLdBytes + text.length <= PAGE_LIMITS.jsonLdBytes) {
        this.jsonLdBuf += text;
        this.jsonLdBytes += text.length;
      }
      return;
    }
    if (this.propBuf && this.propBuf.buf.length < 2000) this.propBuf.buf += text;
    if (this.h1Buf !== null && this.h1Buf.length < 1000 && this.hardSkipDepth === 0) this.h1Buf += text;
    this.marks.onText(text, this.hardSkipDepth);
    if (this.noscriptDepth > 0 && this.data.shell.noscript.length < 500) this.data.shell.noscript += text.slice(0, 500 - this.data.shell.noscript.length);
    if (this.skipDepth > 0 || this.headDepth > 0) return;
    if (this.pBuf !== null && this.pBuf.length < 4000) this.pBuf += text;
    // Visible text: counted in full, stored up to the cap.
    const d = this.data;
    const words = text.match(/[^\s\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+/g);
    if (words) d.wordCount += words.length;
    const cjk = text.match(CJK);
    if (cjk) d.cjkChars += cjk.length;
    if (this.textLen < PAGE_LIMITS.textChars) {
      const piece = text.replace(/\s+/g, ' ');
      if (piece === ' ' && this.lastWasSpace) return;
      const add = piece.slice(0, PAGE_LIMITS.textChars - this.textLen);
      d.text += add;
      this.textLen += add.length;
      this.lastWasSpace = add.endsWith(' ');
    }
  }
}

export function parsePage(html: string): PageData {
  const p = new PageParser();
  // Feed in slices so a huge string is not retained twice inside the tokenizer.
  for (let i = 0; i < html.length; i += PAGE_LIMITS.chunkBytes) {
    if (!p.write(html.slice(i, i + PAGE_LIMITS.chunkBytes))) break;
  }
  return p.end();
}

/**
 * Decode and parse in one streaming pass: the bytes go through an iconv-lite decoder in chunks
 * straight into the parser, so the whole decoded page never exists as one string.
 */
export function parsePageBytes(bytes: Uint8Array, encoding: string): PageData {
  const p = new PageParser();
  const decoder = iconv.getDecoder(encoding, { stripBOM: true });
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let going = true;
  for (let i = 0; i < buf.length && going; i += PAGE_LIMITS.chunkBytes) {
    const text = decoder.write(buf.subarray(i, i + PAGE_LIMITS.chunkBytes));
    if (text) going = p.write(text);
  }
  if (going) {
    const rest = decoder.end();
    if (rest) p.write(rest);
  }
  return p.end();
}
