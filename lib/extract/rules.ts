/**
 * Field rules as data. Each field is an ordered list of small named rules; a rule reads the
 * parsed page (never the network) and returns a candidate value or a list of them. The first
 * candidate that survives the field's cleaning and junk filter wins.
 *
 * Platform extractors put their own rules in front with `withRules({ title: [myRule] })`.
 */
import { type LdNode, ldImage, ldString, ldTypes } from './json-ld.js';
import type { MetaTag, PageData } from './page-data.js';
import { APP_NAME_METAS, publisherNames, titleSiteName } from './site-name.js';
import { cleanText, isJunkImage, isJunkText, resolveUrl, toInt } from './text.js';

export interface OEmbedData {
  title?: string;
  author_name?: string;
  author_url?: string;
  provider_name?: string;
  thumbnail_url?: string;
  thumbnail_width?: number;
  thumbnail_height?: number;
  type?: string;
  /** The provider's markup: read only for its one iframe's address and size (lib/embed/oembed-player.ts), never copied. */
  html?: string;
  /** The player's size, in CSS pixels (video and rich answers). */
  width?: number;
  height?: number;
}

export interface RuleContext {
  page: PageData;
  /** The final URL after redirects. */
  url: string;
  /** `<base href>` resolved against the final URL (the final URL when there is none). */
  base: string;
  /** JSON-LD nodes that describe the page, best first. */
  ld: LdNode[];
  /** Response headers (lower-case names). */
  headers: Record<string, string | undefined>;
  oembed?: OEmbedData;
  /** The rules' clock (epoch ms): no date after it is a publication date. Default: Date.now(). */
  now?: number;
}

export interface ImageCandidate {
  url: string;
  width?: number;
  height?: number;
  /** The image's own description where the page gives one (og:image:alt, twitter:image:alt, an ImageObject's caption, the <img alt>). */
  alt?: string;
}

type Many<T> = T | undefined | null | (T | undefined | null)[];

export interface Rule<T> {
  name: string;
  get(ctx: RuleContext): Many<T>;
  /** The rule reads `ctx.oembed` (and only that): the oEmbed sub-fetch is needed only when such a rule could win. */
  oembed?: true;
}

export interface FieldRules {
  title: Rule<string>[];
  description: Rule<string>[];
  image: Rule<ImageCandidate>[];
  siteName: Rule<string>[];
  /** Declared languages, in order of trust (detection is applied afterwards, see language.ts). */
  language: Rule<string>[];
}

// ---- readers -------------------------------------------------------------------------

/** Values of `<meta>` tags whose name or property is one of `keys`, in document order per key. */
export function metaValues(page: PageData, ...keys: string[]): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const k = key.toLowerCase();
    for (const m of page.metas) if ((m.property === k || m.name === k) && m.content.trim()) out.push(m.content);
  }
  return out;
}

function metaValue(page: PageData, ...keys: string[]): string | undefined {
  return metaValues(page, ...keys)[0];
}

function metaTags(page: PageData, ...keys: string[]): MetaTag[] {
  const out: MetaTag[] = [];
  for (const key of keys) {
    const k = key.toLowerCase();
    for (const m of page.metas) if ((m.property === k || m.name === k) && m.content.trim()) out.push(m);
  }
  return out;
}

function itempropValues(page: PageData, prop: string): string[] {
  const out: string[] = [];
  for (const m of page.metas) if (m.itemprop?.toLowerCase() === prop && m.content.trim()) out.push(m.content);
  for (const p of page.itemprops) if (p.prop.toLowerCase() === prop && p.value) out.push(p.value);
  return out;
}

const ld = (field: string) => (ctx: RuleContext) => ctx.ld.map((n) => ldString(n[field]));
const ldOf = (types: RegExp, field: string) => (ctx: RuleContext) => ctx.ld.filter((n) => ldTypes(n).some((t) => types.test(t))).map((n) => ldString(n[field]));

function metaImage(ctx: RuleContext, prefix: 'og' | 'twitter'): ImageCandidate[] {
  const out: ImageCandidate[] = [];
  if (prefix === 'twitter') {
    const alt = metaValues(ctx.page, 'twitter:image:alt')[0];
    for (const v of metaValues(ctx.page, 'twitter:image', 'twitter:image:src', 'twitter:image0', 'twitter:image:url'))
      out.push({ url: v, ...(alt ? { alt } : {}) });
    return out;
  }
  // og:image, og:image:url and og:image:secure_url describe the same first image; its size hints
  // follow it. The secure URL wins when it is there.
  const metas = ctx.page.metas;
  let current: ImageCandidate | undefined;
  for (const m of metas) {
    const key = m.property ?? m.name;
    if (!key || !m.content.trim()) continue;
    if (key === 'og:image' || key === 'og:image:url') {
      if (current && current.url !== m.content) out.push(current);
      if (!current || current.url !== m.content) current = { url: m.content };
    } else if (key === 'og:image:secure_url') {
      // The secure URL of the current image (it follows its og:image): preferred when it is https.
      if (current && /^https:/i.test(m.content.trim())) current.url = m.content;
      else if (!current) current = { url: m.content };
    } else if (current && key === 'og:image:alt') current.alt = m.content;
    else if (current && key === 'og:image:width') current.width = toInt(m.content);
    else if (current && key === 'og:image:height') current.height = toInt(m.content);
  }
  if (current) out.push(current);
  return out;
}

const LOGO_LIKE =
  /(^|[\W_])(logo|sprite|icon|favicon|avatar|badge|emoji|banner-ad|advert|ads|spinner|loader|rating|star|button|btn|arrow|social|share|flag|gravatar|blank|pixel|spacer)([\W_]|$)/i;

/** The first large content image: sized at least 200px when sizes are declared, not a logo or sprite, not in site chrome. */
function firstContentImage(ctx: RuleContext): ImageCandidate | undefined {
  for (const img of ctx.page.images) {
    if (img.inChrome) continue;
    if (/^data:/i.test(img.src) || /\.svg(\?|$)/i.test(img.src)) continue;
    // Beacons: no image extension and a path full of ids and separators (`/1/batch/1/OP/...:...$uedata=...`).
    const path = img.src.split(/[?#]/)[0];
    if (!/\.(jpe?g|png|webp|gif|avif|bmp)$/i.test(path) && /[$:;]|uedata|beacon|\/batch\//i.test(path.replace(/^https?:/i, ''))) continue;
    if ((img.width !== undefined && img.width < 200) || (img.height !== undefined && img.height < 120)) continue;
    const words = `${img.src.split('?')[0]} ${img.className ?? ''} ${img.id ?? ''} ${img.alt ?? ''}`;
    if (LOGO_LIKE.test(words)) continue;
    return { url: img.src, width: img.width, height: img.height, ...(img.alt?.trim() ? { alt: img.alt } : {}) };
  }
  return undefined;
}

/** The first paragraph that reads like content: long enough, a sentence, not a cookie or script notice. */
function firstParagraph(ctx: RuleContext): string | undefined {
  for (const p of ctx.page.paragraphs) {
    const t = p.trim();
    if (t.length < 60) continue;
    if (/cookie|javascript|browser|subscribe|sign (in|up)|log ?in|advertis|copyright|©|all rights reserved/i.test(t) && t.length < 400) continue;
    if (!/[.!?。！？…:;)"”'’]|\p{L}{3,}\s+\p{L}{3,}/u.test(t)) continue;
    return t;
  }
  return undefined;
}

// ---- meta values cut short ----------------------------------------------------------------

const TITLE_METAS = ['og:title', 'twitter:title', 'dc.title', 'dcterms.title', 'citation_title', 'parsely-title', 'sailthru.title'];
const DESCRIPTION_METAS = ['og:description', 'twitter:description', 'description', 'dc.description', 'dcterms.description', 'sailthru.description'];

/** `<title>` without a trailing "| Site" naming og:site_name (or application-name), when it has one. */
function titleWithoutSite(c: RuleContext): string | undefined {
  const t = cleanText(c.page.title);
  const site = cleanText(metaValue(c.page, 'og:site_name', 'application-name'));
  if (!t || !site || !t.toLowerCase().endsWith(site.toLowerCase())) return undefined;
  const head = t.slice(0, t.length - site.length);
  const m = /^(.*\S)\s*[|\-–—:·•»]\s*$/.exec(head);
  return m ? m[1] : undefined;
}

/** Where the whole text of a cut title or description may be found, best first. */
const LONGER: Record<'title' | 'description', (c: RuleContext) => (string | undefined)[]> = {
  title: (c) => [
    ...metaValues(c.page, ...TITLE_METAS),
    ...c.ld.flatMap((n) => [ldString(n.headline), ldString(n.name)]),
    // The h1 is the headline without a site suffix, like the meta title was meant to be.
    c.page.h1,
    titleWithoutSite(c),
    c.page.title,
  ],
  description: (c) => [
    ...metaValues(c.page, ...DESCRIPTION_METAS),
    ...itempropValues(c.page, 'description'),
    ...c.ld.map((n) => ldString(n.description)),
    ...c.page.paragraphs,
  ],
};

const OPENING_QUOTE = /^\s+["'“”‘’«»„‚]/;

/**
 * The whole text of a meta value that broken markup cut short, else the value as it is.
 *
 * A stray quote inside an attribute ends it early: `content="Mayor opens the "new" bridge"` reads
 * "Mayor opens the " (the parser marks such a meta `cut`). When another source (a meta, JSON-LD,
 * the h1, `<title>`, a paragraph) starts with the value and goes on, that one is taken. Unmarked
 * values qualify only when they end mid-phrase: trailing whitespace, and a quote next in the longer
 * text ("Headline " + ` "quoted" rest`). A meta title that is a prefix of `<title>` because
 * `<title>` adds a site suffix ("Headline" / "Headline | Site") is not cut and stays.
 */
function uncut(m: MetaTag, longer: () => (string | undefined)[]): string {
  const raw = m.content;
  if (!m.cut && !/\s$/.test(raw)) return raw;
  const v = cleanText(raw, 4000);
  if (!v) return raw;
  const lower = v.toLowerCase();
  for (const l of longer()) {
    const t = cleanText(l, 4000);
    if (!t || t.length <= v.length || !t.toLowerCase().startsWith(lower)) continue;
    if (m.cut || OPENING_QUOTE.test(t.slice(v.length))) return t;
  }
  return raw;
}

/** Values of the metas named `keys`, each made whole again when it was cut short (see `uncut`). */
function wholeMetaValues(c: RuleContext, field: 'title' | 'description', ...keys: string[]): string[] {
  return metaTags(c.page, ...keys).map((m) => uncut(m, () => LONGER[field](c)));
}

// ---- the rule lists ----------------------------------------------------------------------

export const DEFAULT_RULES: FieldRules = {
  title: [
    { name: 'og:title', get: (c) => wholeMetaValues(c, 'title', 'og:title') },
    { name: 'twitter:title', get: (c) => wholeMetaValues(c, 'title', 'twitter:title') },
    {
      name: 'json-ld headline',
      // When a node's headline is not in <title> but its name is (Wikipedia puts a description in headline), the name wins.
      get: (c) =>
        c.ld.map((n) => {
          const headline = ldString(n.headline);
          const name = ldString(n.name);
          const t = c.page.title?.toLowerCase();
          if (headline && name && t && !t.includes(headline.toLowerCase()) && t.includes(name.toLowerCase())) return name;
          return headline;
        }),
    },
    { name: 'json-ld name', get: ldOf(/./, 'name') },
    { name: 'oembed title', oembed: true, get: (c) => c.oembed?.title },
    { name: 'meta title', get: (c) => wholeMetaValues(c, 'title', 'dc.title', 'dcterms.title', 'citation_title', 'parsely-title', 'sailthru.title') },
    {
      name: '<title>',
      // Kept whole, site suffix included, unless the whole title is only the site's name on an inner page with an h1.
      get: (c) => {
        const t = c.page.title;
        if (!t) return undefined;
        const site = cleanText(metaValue(c.page, 'og:site_name', 'application-name'));
        const inner = new URL(c.url).pathname.replace(/\/+$/, '') !== '';
        if (site && inner && c.page.h1 && cleanText(t)?.toLowerCase() === site.toLowerCase()) return undefined;
        return t;
      },
    },
    // After <title>: pages mark sidebar and related-post links with itemprop=headline too.
    { name: 'microdata headline', get: (c) => itempropValues(c.page, 'headline') },
    { name: 'h1', get: (c) => c.page.h1 },
  ],
  description: [
    { name: 'og:description', get: (c) => wholeMetaValues(c, 'description', 'og:description') },
    { name: 'twitter:description', get: (c) => wholeMetaValues(c, 'description', 'twitter:description') },
    {
      name: 'meta description',
      get: (c) => [
        ...wholeMetaValues(c, 'description', 'description'),
        ...itempropValues(c.page, 'description').slice(0, 1),
        ...wholeMetaValues(c, 'description', 'dc.description', 'dcterms.description', 'sailthru.description'),
      ],
    },
    { name: 'json-ld description', get: ld('description') },
    { name: 'first paragraph', get: firstParagraph },
  ],
  image: [
    { name: 'og:image', get: (c) => metaImage(c, 'og') },
    { name: 'twitter:image', get: (c) => metaImage(c, 'twitter') },
    { name: 'json-ld image', get: (c) => c.ld.flatMap((n) => [ldImage(n.image), ldImage(n.thumbnailUrl), ldImage(n.thumbnail)]) },
    {
      name: 'oembed thumbnail',
      oembed: true,
      get: (c) => (c.oembed?.thumbnail_url ? { url: c.oembed.thumbnail_url, width: c.oembed.thumbnail_width, height: c.oembed.thumbnail_height } : undefined),
    },
    { name: 'image_src', get: (c) => c.page.links.filter((l) => l.rel.includes('image_src')).map((l) => ({ url: l.href })) },
    { name: 'microdata image', get: (c) => [...itempropValues(c.page, 'image'), ...itempropValues(c.page, 'thumbnailurl')].map((url) => ({ url })) },
    { name: 'first content <img>', get: firstContentImage },
  ],
  siteName: [
    { name: 'og:site_name', get: (c) => metaValues(c.page, 'og:site_name') },
    { name: 'application-name', get: (c) => metaValues(c.page, ...APP_NAME_METAS) },
    { name: 'json-ld publisher', get: publisherNames },
    { name: 'title suffix', get: titleSiteName },
    { name: 'oembed provider', oembed: true, get: (c) => c.oembed?.provider_name },
  ],
  language: [
    { name: '<html lang>', get: (c) => c.page.lang },
    { name: 'og:locale', get: (c) => metaValues(c.page, 'og:locale') },
    {
      name: 'Content-Language',
      get: (c) => [c.headers['content-language']?.split(',')[0], ...c.page.metas.filter((m) => m.httpEquiv === 'content-language').map((m) => m.content)],
    },
    { name: 'json-ld inLanguage', get: (c) => c.ld.map((n) => ldString(n.inLanguage)) },
    { name: 'meta language', get: (c) => metaValues(c.page, 'language', 'dc.language', 'dcterms.language', 'citation_language') },
  ],
};

/** The default rules with `extra` rules put in front of each field's list. */
export function withRules(extra: Partial<FieldRules>, base: FieldRules = DEFAULT_RULES): FieldRules {
  const out = { ...base };
  for (const key of Object.keys(extra) as (keyof FieldRules)[]) {
    (out[key] as Rule<unknown>[]) = [...((extra[key] ?? []) as Rule<unknown>[]), ...(base[key] as Rule<unknown>[])];
  }
  return out;
}

// ---- running them -------------------------------------------------------------------------

function candidates<T>(rule: Rule<T>, ctx: RuleContext): T[] {
  let v: Many<T>;
  try {
    v = rule.get(ctx);
  } catch {
    return [];
  }
  const list = Array.isArray(v) ? v : [v];
  return list.filter((x): x is T => x !== undefined && x !== null);
}

/** A field's value, the rule that gave it and that rule's place in the field's list. */
export interface Found {
  rule: string;
  /** The rule's index in the list (to tell whether a rule ranked above it could still give a value). */
  index: number;
}

/** First good text value, with the rule that gave it. */
export function firstText(
  rules: Rule<string>[],
  ctx: RuleContext,
  maxChars = 2000,
  accept: (s: string) => boolean = () => true,
): ({ value: string } & Found) | undefined {
  for (const [index, rule] of rules.entries()) {
    for (const raw of candidates(rule, ctx)) {
      if (typeof raw !== 'string') continue;
      const value = cleanText(raw, maxChars);
      if (value && !isJunkText(value) && accept(value)) return { value, rule: rule.name, index };
    }
  }
  return undefined;
}

export function firstImage(rules: Rule<ImageCandidate>[], ctx: RuleContext): (ImageCandidate & Found) | undefined {
  for (const [index, rule] of rules.entries()) {
    for (const c of candidates(rule, ctx)) {
      const raw = typeof c === 'string' ? { url: c as string } : c;
      if (!raw || typeof raw.url !== 'string') continue;
      const url = resolveUrl(cleanText(raw.url, 4096), ctx.base);
      if (!url || isJunkImage(url, raw)) continue;
      const alt = cleanText(raw.alt, 1000);
      return {
        url,
        ...(raw.width ? { width: raw.width } : {}),
        ...(raw.height ? { height: raw.height } : {}),
        ...(alt ? { alt } : {}),
        rule: rule.name,
        index,
      };
    }
  }
  return undefined;
}

/**
 * Whether oEmbed data could change a field: one of its rules reads oEmbed and is ranked above the
 * rule that gave the field its value without it (or the field has none). Rules ranked above it do
 * not read oEmbed, so their value stands whatever oEmbed says.
 */
export function oembedCouldChange(rules: Rule<unknown>[], found: Found | undefined): boolean {
  const first = rules.findIndex((r) => r.oembed);
  return first >= 0 && (found === undefined || found.index > first);
}
