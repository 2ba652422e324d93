/**
 * Plain text of a (sanitized) DOM subtree, the way a reader sees it: blocks on their own lines,
 * paragraphs separated by a blank line, list items bulleted, whitespace collapsed except in <pre>.
 */
import type { DomElement, DomNode } from './sanitize.js';

const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'details',
  'summary',
  'address',
  'hr',
]);
/** Blocks followed by a blank line (the others end a line only). */
const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'ul', 'ol', 'table', 'figure', 'dl', 'hr']);

export function plainText(root: DomNode): string {
  const out: string[] = [];
  /** Ends the output with at least `n` line breaks (a block boundary is never doubled). */
  const breaks = (n: number) => {
    let have = 0;
    for (let i = out.length - 1; i >= 0 && have < n; i--) {
      const m = /(\n*)[ \t]*$/.exec(out[i]);
      if (!m) break;
      have += m[1].length;
      if (m[0].length !== out[i].length) break;
    }
    if (out.length && have < n) out.push('\n'.repeat(n - have));
  };
  const visit = (node: DomNode, inPre: boolean) => {
    if (node.nodeType === 3) {
      const t = node.textContent ?? '';
      // Inside <pre>, spaces and tabs are kept (as markers that the line trimming below leaves alone).
      out.push(inPre ? t.replace(/ /g, '\uE001').replace(/\t/g, '\uE002') : t.replace(/\s+/g, ' '));
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as DomElement;
    const tag = el.tagName.toLowerCase();
    if (tag === 'br') {
      out.push('\n');
      return;
    }
    if (tag === 'img') {
      const alt = el.getAttribute('alt')?.trim();
      if (alt) out.push(alt);
      return;
    }
    const block = BLOCK.has(tag);
    if (block) breaks(1);
    if (tag === 'li') out.push('- ');
    if (tag === 'td' || tag === 'th') out.push('\t');
    for (let c = el.firstChild; c; c = c.nextSibling) visit(c, inPre || tag === 'pre');
    if (block) breaks(PARAGRAPH.has(tag) ? 2 : 1);
  };
  visit(root, false);
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/^[ \t]+|[ \t]+$/g, '').replace(/^- +/, '- '))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
    .replace(/\uE001/g, ' ')
    .replace(/\uE002/g, '\t');
}
