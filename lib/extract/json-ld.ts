/**
 * JSON-LD blocks into a flat list of nodes: tolerant of the broken JSON pages ship (trailing
 * commas, raw newlines in strings, HTML comments / CDATA around the block, several objects
 * back to back), with `@graph` and arrays flattened and nested main entities reachable.
 */
export type LdNode = Record<string, unknown>;

const MAX_NODES = 200;

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The value before junk that follows a whole JSON value (`{...}}`, `{...};`): the parser names where the junk starts. */
function parsePrefix(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = /after JSON at position (\d+)/.exec(String((err as Error).message));
    return at ? tryParse(text.slice(0, Number(at[1]))) : undefined;
  }
}

/** Parse one block, repairing the common breakages. */
function parseJsonLdBlock(raw: string): unknown {
  let text = raw
    .trim()
    .replace(/^<!--/, '')
    .replace(/-->$/, '')
    .replace(/^\/\*\s*<!\[CDATA\[\s*\*\//, '')
    .replace(/\/\*\s*\]\]>\s*\*\/$/, '')
    .replace(/^<!\[CDATA\[/, '')
    .replace(/\]\]>$/, '')
    .trim();
  const direct = parsePrefix(text);
  if (direct !== undefined) return direct;
  // Raw control characters inside strings, trailing commas.
  text = text.replace(/[\u0000-\u001f]+/g, ' ').replace(/,\s*([}\]])/g, '$1');
  const repaired = tryParse(text);
  if (repaired !== undefined) return repaired;
  // Several top-level objects back to back: `{...}{...}` or `{...},{...}`.
  const wrapped = tryParse(`[${text.replace(/}\s*,?\s*{/g, '},{')}]`);
  if (wrapped !== undefined) return wrapped;
  // A trailing `;` or junk after the object: cut at the last closing brace.
  const last = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  if (last > 0) return tryParse(text.slice(0, last + 1));
  return undefined;
}

export function flattenJsonLd(blocks: string[]): LdNode[] {
  const out: LdNode[] = [];
  const visit = (v: unknown, depth: number) => {
    if (out.length >= MAX_NODES || depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const node = v as LdNode;
    if (Array.isArray(node['@graph'])) {
      for (const x of node['@graph'] as unknown[]) visit(x, depth + 1);
    }
    if (node['@type'] !== undefined || node.headline !== undefined || node.name !== undefined) out.push(node);
    // A WebPage's mainEntity (often the Article or Product) is a node of its own.
    for (const key of ['mainEntity', 'mainEntityOfPage', 'itemReviewed']) {
      const child = node[key];
      if (child && typeof child === 'object') visit(child, depth + 1);
    }
  };
  for (const b of blocks) visit(parseJsonLdBlock(b), 0);
  return out;
}

export function ldTypes(node: LdNode): string[] {
  const t = node['@type'];
  const list = Array.isArray(t) ? t : t === undefined ? [] : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^https?:\/\/schema\.org\//, '').toLowerCase());
}

/** Types whose name/headline/description describe the page itself. */
const CONTENT_TYPES =
  /^(\w*article|blogposting|report|scholarlyarticle|techarticle|socialmediaposting|discussionforumposting|liveblogposting|product|productgroup|videoobject|audioobject|musicrecording|musicalbum|musicplaylist|podcastepisode|podcastseries|episode|tvepisode|movie|tvseries|book|recipe|event|course|jobposting|softwareapplication|mobileapplication|webapplication|videogame|creativework|dataset|qapage|question|profilepage|collectionpage|itempage|aboutpage|webpage|mediaobject|imageobject|localbusiness|restaurant|hotel|place|person)$/;
const ARTICLE_TYPES = /^(\w*article|blogposting|report|socialmediaposting|discussionforumposting|liveblogposting)$/;

/** Nodes ordered so the ones that describe the page come first: articles, then other content, then pages. */
export function contentNodes(nodes: LdNode[]): LdNode[] {
  const rank = (n: LdNode) => {
    const types = ldTypes(n);
    if (types.some((t) => ARTICLE_TYPES.test(t))) return 0;
    if (types.some((t) => CONTENT_TYPES.test(t) && !/^(webpage|collectionpage|itempage|aboutpage|profilepage|person|place)$/.test(t))) return 1;
    if (types.some((t) => /^(webpage|itempage|collectionpage|aboutpage|profilepage|qapage)$/.test(t))) return 2;
    return 9;
  };
  return nodes
    .map((n, i) => ({ n, i, r: rank(n) }))
    .filter((x) => x.r < 9)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.n);
}

export function ldString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) {
    for (const x of v) {
      const s = ldString(x);
      if (s) return s;
    }
    return undefined;
  }
  if (v && typeof v === 'object') {
    const o = v as LdNode;
    return ldString(o['@value'] ?? o.name);
  }
  return undefined;
}

/** The first image URL of an `image`/`thumbnailUrl` value: a string, an ImageObject, or a list of either. */
export function ldImage(v: unknown): { url: string; width?: number; height?: number; alt?: string } | undefined {
  if (typeof v === 'string') return v.trim() ? { url: v } : undefined;
  if (Array.isArray(v)) {
    for (const x of v) {
      const img = ldImage(x);
      if (img) return img;
    }
    return undefined;
  }
  if (v && typeof v === 'object') {
    const o = v as LdNode;
    const url =
      typeof o.url === 'string'
        ? o.url
        : typeof o.contentUrl === 'string'
          ? o.contentUrl
          : typeof o['@id'] === 'string' && /\.(jpe?g|png|webp|gif|avif)(\?|$)/i.test(o['@id'] as string)
            ? (o['@id'] as string)
            : undefined;
    if (!url) return undefined;
    const num = (x: unknown) => (typeof x === 'number' ? x : typeof x === 'string' && /^\d+/.test(x) ? parseInt(x, 10) : undefined);
    // An ImageObject's caption (else its description) describes it.
    const alt = typeof o.caption === 'string' ? o.caption : typeof o.description === 'string' ? o.description : undefined;
    return { url, width: num(o.width), height: num(o.height), ...(alt?.trim() ? { alt } : {}) };
  }
  return undefined;
}
