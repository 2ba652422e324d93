/**
 * Who wrote a page: the `author` rules (first match wins, in this order) and the cleaning a name
 * goes through.
 *
 *  1. JSON-LD `author` of the nodes that describe the page (a Person's or an Organization's
 *     `name`, with its `url`; several authors joined with ", ");
 *  2. the author metas: `author`, `article:author` (a URL there is the author's page, not a
 *     name), Dublin Core `dc.creator`, citation, parsely, sailthru, `byl`;
 *  3. microdata: the `name` inside an `itemprop=author` scope (a Person, an Organization), or the
 *     `itemprop=author` text;
 *  4. a `rel=author` link's text (its href is the author's page);
 *  5. the article's byline: a link naming the author (`class=author…`, `href=/author/…`), then an
 *     element whose class names the byline;
 *  6. oEmbed's `author_name` (with `author_url`).
 *
 * A URL or a social handle (`@name`) is no name, and neither is a date or a "Share" label;
 * "By"/"Written by" (and their French, German, Spanish, Italian and Portuguese forms) are not part
 * of one, nor is a date or "Updated …" that follows it.
 */
import { type LdNode, ldString } from './json-ld.js';
import { metaValues, type RuleContext } from './rules.js';
import { cleanText, resolveUrl } from './text.js';

export interface Author {
  name: string;
  url?: string;
}

interface Candidate {
  name?: string;
  url?: string;
}

const BY = /^(?:(?:written|posted|published|reported|story|text|words|photos?)\s+)?(?:(?:by|von|par|por|di|da|de|door|av|af)\s*[:\-–—]?\s+|by(?=\p{Lu}))/iu;
const NOT_A_NAME =
  /^(share|follow|subscribe|author|authors|by|posted by|written by|admin|administrator|staff|anonymous|unknown|guest|editor|contributor|more|view all|see all|read more)$/i;
const DATE_LIKE =
  /\b(\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{4})\b/i;

/** A name as a card shows it, or undefined when the text is no name. */
export function cleanName(raw: string | undefined): string | undefined {
  let t = cleanText(raw, 400);
  if (!t) return undefined;
  t = t.replace(BY, '').replace(/^[|·•,:;\-–—\s]+|[|·•,:;\-–—\s]+$/g, '');
  // What follows the name in a byline: a date, "Updated …", "| 5 min read".
  if (/^(last\s+)?updated\b/i.test(t)) return undefined;
  t = t.split(/\s+(?:[|·•]|—|–|on\s+(?=\w+\s+\d|\d)|updated\b|published\b)\s*/i)[0].trim();
  // "by Jane Roe in Science": the section the byline names after the name.
  const inSection = /^(\p{Lu}[\p{L}.'’-]*(?:\s+\p{Lu}[\p{L}.'’-]*){0,3})\s+in\s+\p{Lu}/u.exec(t);
  if (inSection) t = inSection[1];
  const date = DATE_LIKE.exec(t);
  if (date && date.index > 0) t = t.slice(0, date.index).replace(/[,\s\-–—|]+$/, '');
  if (!t || t.length > 100 || t.split(/\s+/).length > 12) return undefined;
  if (/^https?:\/\/|^www\.|\.(com|org|net)\b|^@\w|^\S+@\S+\.\S+$/i.test(t)) return undefined;
  if (NOT_A_NAME.test(t) || DATE_LIKE.test(t) || !/\p{L}/u.test(t)) return undefined;
  return t;
}

const isUrl = (s: string | undefined) => !!s && /^(https?:)?\/\//i.test(s.trim());

/** A JSON-LD author value (a string, a Person or Organization, a list of them) as one candidate. */
function ldAuthor(v: unknown): Candidate | undefined {
  const list = (Array.isArray(v) ? v : [v]).slice(0, 8);
  const names: string[] = [];
  let url: string | undefined;
  for (const a of list) {
    if (typeof a === 'string') {
      if (isUrl(a)) url ??= a;
      else names.push(a);
    } else if (a && typeof a === 'object') {
      const node = a as LdNode;
      const name = ldString(node.name);
      if (name) names.push(name);
      // Its `url` may be relative (resolved against the page); `sameAs` is a profile elsewhere.
      const u = ldString(node.url) ?? ldString(node.sameAs);
      if (u) url ??= u;
    }
  }
  const cleaned = names.map((n) => cleanName(n)).filter((n): n is string => !!n);
  return cleaned.length || url ? { name: cleaned.join(', ') || undefined, url } : undefined;
}

type AuthorRule = { name: string; get(c: RuleContext): (Candidate | undefined)[] };

const AUTHOR_METAS = [
  'author',
  'article:author',
  'dc.creator',
  'dcterms.creator',
  'citation_author',
  'parsely-author',
  'sailthru.author',
  'byl',
  'og:article:author',
];

export const AUTHOR_RULES: AuthorRule[] = [
  { name: 'json-ld author', get: (c) => c.ld.map((n) => ldAuthor(n.author ?? n.creator)) },
  { name: 'meta author', get: (c) => metaValues(c.page, ...AUTHOR_METAS).map((v) => (isUrl(v) ? { url: v } : { name: v })) },
  {
    name: 'microdata author',
    get: (c) => [
      ...c.page.itemprops.filter((i) => i.prop.toLowerCase() === 'name' && /^(author|creator)$/.test(i.scope ?? '')).map((i) => ({ name: i.value })),
      ...c.page.itemprops.filter((i) => i.prop.toLowerCase() === 'author').map((i) => (isUrl(i.value) ? { url: i.value } : { name: i.value })),
    ],
  },
  { name: 'rel=author', get: (c) => c.page.marks.filter((m) => m.kind === 'rel-author').map((m) => ({ name: m.text, url: m.href })) },
  { name: 'byline link', get: (c) => c.page.marks.filter((m) => m.kind === 'author-link').map((m) => ({ name: m.text, url: m.href })) },
  { name: 'byline', get: (c) => c.page.marks.filter((m) => m.kind === 'byline').map((m) => ({ name: m.text })) },
  { name: 'oembed author', get: (c) => [c.oembed?.author_name ? { name: c.oembed.author_name, url: c.oembed.author_url } : undefined] },
  // Last: the X handle the page names as its content's creator (Twitter Cards' `twitter:creator`),
  // without its @, its profile as the URL; a site's own handle (`twitter:site`) is no author.
  { name: 'twitter:creator', get: (c) => metaValues(c.page, 'twitter:creator').map(creatorHandle) },
];

/** `@handle` (or `handle`) of twitter:creator as a candidate: the handle, and its profile. */
function creatorHandle(value: string): Candidate | undefined {
  const m = /^@?([A-Za-z0-9_]{1,15})$/.exec(value.trim());
  return m ? { name: m[1], url: `https://x.com/${m[1]}` } : undefined;
}

/** A user name rather than a person's name: one token with a digit or an underscore (`CC7567`, `jane_doe`). */
const HANDLE_LIKE = /^(?=\S*[\d_])[\p{L}\d_.-]+$/u;

/**
 * The page's author by AUTHOR_RULES: the first candidate with a name, its URL resolved; the rule
 * that gave it. A user name (HANDLE_LIKE) gives way to a later rule's name of several words (the
 * byline that writes out the person a CMS's JSON-LD names by their login).
 */
export function pageAuthor(c: RuleContext, rules: AuthorRule[] = AUTHOR_RULES): { value: Author; rule: string } | undefined {
  let handle: { value: Author; rule: string } | undefined;
  for (const rule of rules) {
    let found: (Candidate | undefined)[];
    try {
      found = rule.get(c);
    } catch {
      continue;
    }
    for (const cand of found) {
      const name = cleanName(cand?.name);
      if (!name || (handle && !/\s/.test(name))) continue;
      const url = cand?.url ? resolveUrl(cand.url, c.base) : undefined;
      const value = { value: { name, ...(url && /^https?:/i.test(url) ? { url } : {}) }, rule: rule.name };
      if (handle || !HANDLE_LIKE.test(name)) return value;
      handle = value;
    }
  }
  return handle;
}
