/**
 * The byline and date marks of a page, collected during the one parse (lib/extract/parse-page.ts
 * calls it for every tag and text): the elements where pages write who wrote them and when, which
 * no meta tag states. The author and date rules (lib/extract/byline.ts, lib/extract/dates.ts) read
 * them from PageData.marks.
 *
 *  - `rel-author`: a link with `rel=author` (its text and href);
 *  - `author-link`: a link whose class names the author or whose href is an author page
 *    (`/author/…`, `/authors/…`, `/people/…`, `/profile/…`, `/author-bio…`, `?author_id=`);
 *  - `byline`: an element whose class or id names a byline or an author (its whole text);
 *  - `time`: a `<time datetime>` (its datetime, and whether the page marks it as the publication:
 *    `pubdate`, `itemprop=datePublished`, a class naming publication, or inside an article's header).
 *
 * A mark's text is collected until its element closes, capped, and only the first few of each kind
 * are kept (MARK_LIMITS): the byline is at the top of an article.
 */
import type { PageMark } from './page-data.js';

export const MARK_LIMITS = { perKind: 6, textChars: 300, open: 6 };

const AUTHOR_CLASS = /(^|[\s_-])(author|byline|by-line|writer|contributor|article-by|post-by|posted-by|entry-author|author-name|authorname|creator)([\s_-]|$)/i;
const AUTHOR_HREF =
  /\/(author|authors|people|profile|profiles|staff|writer|writers|contributors?|journalist|autor|auteur|autore)\/[^/?#]+|\/author[-_](bio|page|profile)\b|[?&]author(_?id)?=/i;
const PUBLISHED_CLASS = /publish|posted|pubdate|date-?pub|created|entry-date|article-date|post-date|timestamp/i;

interface Open {
  mark: PageMark;
  depth: number;
  /** A `rel=author` link hidden itself (Blogger's `style="display:none"`): a relation, not page text, so its text counts. */
  hidden: boolean;
}

export class MarkCollector {
  readonly marks: PageMark[] = [];
  private readonly open: Open[] = [];
  private readonly counts = new Map<PageMark['kind'], number>();
  /** Depth of the innermost open <article> and <header> inside it (an article's header holds its byline and date). */
  private articleDepth = 0;
  private articleHeaderDepth = 0;

  /** A tag opened at `depth` (the parser's stack length after it). */
  onOpen(name: string, a: Record<string, string>, depth: number): void {
    // An element inside a mark separates its text from what came before ("Kelly Sheridan" "News").
    for (const o of this.open) if (o.mark.text && !o.mark.text.endsWith(' ')) o.mark.text += ' ';
    if (name === 'article' && !this.articleDepth) this.articleDepth = depth;
    if (name === 'header' && this.articleDepth && !this.articleHeaderDepth) this.articleHeaderDepth = depth;
    if (name === 'time' && a.datetime) {
      const hinted = a.pubdate !== undefined || /datepublished/i.test(a.itemprop ?? '') || PUBLISHED_CLASS.test(`${a.class ?? ''} ${a.id ?? ''}`);
      this.add({ kind: 'time', text: '', datetime: a.datetime.slice(0, 100), published: hinted || this.articleHeaderDepth > 0 || undefined });
    }
    const kind = this.kindOf(name, a);
    if (!kind || this.open.length >= MARK_LIMITS.open) return;
    const mark: PageMark = { kind, text: '', ...(a.href ? { href: a.href.slice(0, 2048) } : {}) };
    const hidden = kind === 'rel-author' && (a.hidden !== undefined || /display\s*:\s*none/i.test(a.style ?? ''));
    if (this.add(mark)) this.open.push({ mark, depth, hidden });
  }

  /**
   * Text inside the open marks; `skipped` is how many elements around it hide their text (script,
   * style, hidden): such text goes nowhere, but a hidden `rel=author` link's own (its one hiding).
   */
  onText(text: string, skipped = 0): void {
    for (const o of this.open) {
      if (skipped > (o.hidden ? 1 : 0)) continue;
      if (o.mark.text.length < MARK_LIMITS.textChars) o.mark.text += text.slice(0, MARK_LIMITS.textChars - o.mark.text.length);
    }
  }

  /** The element at `depth` closed (with every element inside it). */
  onClose(depth: number): void {
    while (this.open.length && this.open[this.open.length - 1].depth >= depth) {
      const done = this.open.pop();
      if (done) done.mark.text = done.mark.text.replace(/\s+/g, ' ').trim();
    }
    if (this.articleHeaderDepth && this.articleHeaderDepth >= depth) this.articleHeaderDepth = 0;
    if (this.articleDepth && this.articleDepth >= depth) this.articleDepth = 0;
  }

  /** Called for every tag: the attributes a tag lacks are not tested (most tags have no class or id). */
  private kindOf(name: string, a: Record<string, string>): PageMark['kind'] | undefined {
    if (name === 'a') {
      if (a.rel && /author/i.test(a.rel) && a.rel.toLowerCase().split(/\s+/).includes('author')) return 'rel-author';
      if ((a.class && AUTHOR_CLASS.test(a.class)) || (a.href && AUTHOR_HREF.test(a.href))) return 'author-link';
      return undefined;
    }
    if (name === 'meta' || name === 'link') return undefined;
    // The class and the id apart: a name the pattern finds in `${class} ${id}` lies wholly in one of them.
    return (a.class && AUTHOR_CLASS.test(a.class)) || (a.id && AUTHOR_CLASS.test(a.id)) ? 'byline' : undefined;
  }

  private add(mark: PageMark): boolean {
    const n = this.counts.get(mark.kind) ?? 0;
    if (n >= MARK_LIMITS.perKind) return false;
    this.counts.set(mark.kind, n + 1);
    this.marks.push(mark);
    return true;
  }
}
