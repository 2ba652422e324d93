/**
 * The page's Markdown version (page.md): turndown (with the GFM plugin: tables, strikethrough,
 * fenced code) over the sanitized DOM only, written so that it carries no live markup in any
 * CommonMark renderer: the text's `&`, `<` and `>` become entity references (an image's alt and
 * title and the title heading too). lib/page/page-content-dom.ts calls it.
 */
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import type { DomElement } from './sanitize.js';

/**
 * Text as Markdown that carries no markup of its own: turndown escapes Markdown's syntax, and `&`,
 * `<` and `>` become entity references, so a page's text that shows a tag (`&lt;img onerror=…&gt;`,
 * a `<` in prose) stays text in any CommonMark renderer instead of becoming raw HTML.
 */
function escapeText(escapeMarkdown: (s: string) => string, s: string): string {
  // The references first: turndown's escapes (a backslash before `>` at a line's start) would
  // otherwise turn `&gt;` into a literal "&gt;".
  return escapeMarkdown(s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
}

let turndown: TurndownService | undefined;
function turndownService(): TurndownService {
  if (turndown) return turndown;
  const t = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---', linkStyle: 'inlined' });
  t.use(gfm);
  t.remove(['script', 'style', 'noscript'] as TurndownService.Filter);
  // Every text node goes through `escape` (code keeps its text: a code span or block is literal).
  const escapeMarkdown = t.escape.bind(t);
  t.escape = (s: string) => escapeText(escapeMarkdown, s);
  // turndown escapes an image's alt and title for Markdown only: the same escaping as text.
  t.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const img = node as unknown as { getAttribute(name: string): string | null };
      const src = img.getAttribute('src');
      if (!src) return '';
      const alt = escapeText(escapeMarkdown, (img.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim());
      const title = (img.getAttribute('title') ?? '').replace(/\s+/g, ' ').trim();
      const titlePart = title ? ` "${escapeText(escapeMarkdown, title).replace(/"/g, '\\"')}"` : '';
      return `![${alt}](${src.replace(/([<>()\s])/g, (c) => encodeURIComponent(c))}${titlePart})`;
    },
  });
  turndown = t;
  return t;
}

/** The Markdown of the sanitized content `root`, with `title` as its `# ` heading when given. */
export function toMarkdown(root: DomElement, title: string | undefined): string {
  // Turndown accepts a DOM node; linkedom's serves it without a second parse.
  let md: string;
  try {
    md = turndownService().turndown(root as unknown as TurndownService.Node);
  } catch {
    md = turndownService().turndown(root.innerHTML);
  }
  md = md.replace(/\n{3,}/g, '\n\n').trim();
  const heading = title ? `# ${turndownService().escape(title.replace(/\s+/g, ' '))}\n\n` : '';
  return `${heading}${md}\n`;
}
