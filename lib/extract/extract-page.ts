/**
 * Extraction of a PAGE, in steps the preview runs on its critical path (lib/preview/preview-link.ts):
 *  - readPage: decode the bytes (charset), parse them in one streaming pass (PageData), detect a
 *    wall, and name the sub-resources that carry metadata (oEmbed, the web app manifest);
 *  - pageFields: apply the field rules (rules.ts), with oEmbed data once it is there; it also
 *    says which fields oEmbed could still change, so oEmbed is fetched only for those;
 *  - pageIcons: the icon sources, with the manifest's once it is there;
 *  - pageLanguage: the declared language, checked by detection on the final title and text.
 * Sub-resources are fetched through the guarded fetcher (fetchOEmbed, fetchManifest).
 * `extractPage` runs them all in order, for callers that want the whole extraction at once.
 * The image and icon *sources* found here are hosted by the image jobs (lib/media/host-images.ts).
 */
import type { CoreConfig } from '../core-settings.js';
import { detectEncoding } from '../fetch/charset.js';
import { flatHeaders } from '../fetch/headers.js';
import { fetchSmallText } from '../fetch/safe-fetch.js';
import type { Fetcher, FetchResult } from '../fetch/types.js';
import { type Author, pageAuthor } from './byline.js';
import { publishedAt } from './dates.js';
import { backgroundColor, type IconCandidate, iconCandidates, type ManifestData, manifestHref, parseManifest } from './icons.js';
import { contentNodes, flattenJsonLd } from './json-ld.js';
import { resolveLanguage } from './language.js';
import { fetchOEmbed, oembedUrl } from './oembed-source.js';
import type { PageData } from './page-data.js';
import { parsePageBytes } from './parse-page.js';
import { DEFAULT_RULES, type FieldRules, firstImage, firstText, type OEmbedData, oembedCouldChange, type RuleContext } from './rules.js';
import { detectWall, signInWallSite } from './walls.js';

export interface PageExtraction {
  title?: string;
  description?: string;
  language?: string;
  siteName?: string;
  /** Who wrote the page (lib/extract/byline.ts); oEmbed's author only when oEmbed was fetched for another field. */
  author?: Author;
  /** When the page was first published (lib/extract/dates.ts). */
  publishedAt?: string;
  /** The chosen preview image source (absolute URL), with size hints when declared. */
  image?: { url: string; width?: number; height?: number; alt?: string };
  /** Icon sources, best first; the first that decodes is used. */
  icons: IconCandidate[];
  /** A CSS colour the page declares for its icon background (manifest background_color, theme-color). */
  backgroundColor?: string;
  /** Set when the page is a consent/login/bot wall rather than the content: the record is ok:false. */
  wall?: string;
  /** The rule that gave each field (for logs and debugging). */
  sources: Partial<Record<'title' | 'description' | 'image' | 'siteName' | 'author' | 'publishedAt' | 'language', string>>;
  /** The character encoding the page was decoded with. */
  encoding: string;
}

export interface ExtractDeps {
  fetch: Fetcher;
  config: CoreConfig;
  signal?: AbortSignal;
  /** Field rules to use (platform extractors pass `withRules({...})`); DEFAULT_RULES otherwise. */
  rules?: FieldRules;
}

export const SUBFETCH_LIMITS = { manifestBytes: 64 * 1024, timeoutMs: 2500 };

export async function fetchManifest(fetch: Fetcher, url: string, signal?: AbortSignal): Promise<ManifestData | undefined> {
  const limits = { maxBytes: SUBFETCH_LIMITS.manifestBytes, timeoutMs: SUBFETCH_LIMITS.timeoutMs, accept: 'application/manifest+json,application/json' };
  const text = await fetchSmallText(fetch, url, limits, signal);
  return text === undefined ? undefined : parseManifest(text);
}

function resolveBase(page: PageData, finalUrl: string): string {
  if (!page.baseHref) return finalUrl;
  try {
    const b = new URL(page.baseHref, finalUrl);
    return b.protocol === 'http:' || b.protocol === 'https:' ? b.href : finalUrl;
  } catch {
    return finalUrl;
  }
}

/** A page read: parsed, its wall detected, the rules' context (no oEmbed data yet) and the sub-resources it names. */
export interface PageRead {
  page: PageData;
  rules: FieldRules;
  ctx: RuleContext;
  /** The character encoding the page was decoded with. */
  encoding: string;
  wall?: string;
  /**
   * A sign-in wall: whether the sign-in page is the site's own (its name and icon are kept) or
   * another site's (nothing of it is kept). Its title, description and image are never kept.
   */
  signIn?: 'same-site' | 'elsewhere';
  /** The oEmbed endpoint (advertised, else from the providers file); none on a wall. */
  oembedUrl?: string;
  /** The web app manifest's URL; none on a wall. */
  manifestUrl?: string;
}

/** Decodes and parses the page: CPU only, no network. */
export function readPage(res: FetchResult, contentType: string | undefined, rules: FieldRules = DEFAULT_RULES): PageRead {
  const encoding = detectEncoding(res.body, contentType);
  const page = parsePageBytes(res.body, encoding);
  const finalUrl = res.finalUrl;
  const base = resolveBase(page, finalUrl);
  const headers = flatHeaders(res.headers);
  const trail = res.trail.at(-1) === finalUrl ? res.trail : [res.url, finalUrl];
  const wall = detectWall({
    status: res.status,
    url: res.url,
    finalUrl,
    trail,
    headers,
    page,
    head: res.body.subarray(0, 32 * 1024).toString('latin1'),
    size: res.body.length,
  });
  const signIn = signInWallSite(wall, trail);
  return {
    page,
    rules,
    ctx: { page, url: finalUrl, base, ld: contentNodes(flattenJsonLd(page.jsonLd)), headers },
    encoding,
    ...(wall ? { wall } : {}),
    ...(signIn ? { signIn } : {}),
    // Sub-resources: none on a wall.
    ...(wall ? {} : { oembedUrl: oembedUrl(page, base, finalUrl), manifestUrl: manifestHref(page, base) }),
  };
}

/** The fields oEmbed can fill (the rules that read it). */
export type OEmbedField = 'title' | 'image' | 'siteName' | 'author';

export interface PageFields {
  title?: string;
  description?: string;
  siteName?: string;
  author?: Author;
  /** When the page was first published (RFC 3339, the page's own offset: lib/extract/dates.ts). */
  publishedAt?: string;
  image?: { url: string; width?: number; height?: number; alt?: string };
  /** The rule that gave each field. */
  sources: PageExtraction['sources'];
  /** The fields whose value oEmbed data could still change (when these fields were found without it). */
  oembedCouldChange: OEmbedField[];
}

/** The fields by the rules, with the oEmbed data when there is some. */
export function pageFields(read: PageRead, oembed?: OEmbedData): PageFields {
  // A wall describes itself, not the link: nothing of its page is kept, whatever its status; a sign-in
  // page keeps only the site's name, when it is the site's own.
  if (read.wall) return wallFields(read);
  const { rules } = read;
  const ctx: RuleContext = oembed ? { ...read.ctx, oembed } : read.ctx;
  const title = firstText(rules.title, ctx, 500);
  const description = firstText(rules.description, ctx, 4000);
  const siteName = firstText(rules.siteName, ctx, 200);
  const author = pageAuthor(ctx);
  const image = firstImage(rules.image, ctx);
  const published = publishedAt(read.page, ctx);
  const sources: PageExtraction['sources'] = {};
  if (published) sources.publishedAt = published.rule;
  if (title) sources.title = title.rule;
  if (description) sources.description = description.rule;
  if (siteName) sources.siteName = siteName.rule;
  if (author) sources.author = author.rule;
  if (image) sources.image = image.rule;
  const changeable: [OEmbedField, boolean][] = [
    ['title', oembedCouldChange(rules.title, title)],
    ['image', oembedCouldChange(rules.image, image)],
    ['siteName', oembedCouldChange(rules.siteName, siteName)],
    // oEmbed's author is the last of the author rules.
    ['author', author === undefined],
  ];
  return {
    title: title?.value,
    description: description?.value,
    siteName: siteName?.value,
    author: author?.value,
    publishedAt: published?.value,
    image: image
      ? {
          url: image.url,
          ...(image.width ? { width: image.width } : {}),
          ...(image.height ? { height: image.height } : {}),
          ...(image.alt ? { alt: image.alt } : {}),
        }
      : undefined,
    sources,
    oembedCouldChange: changeable.filter(([, could]) => could).map(([field]) => field),
  };
}

/** The oEmbed URL to fetch for these fields, or undefined when oEmbed could change none of them. */
export function oembedToFetch(read: PageRead, fields: PageFields, wanted: readonly OEmbedField[]): string | undefined {
  return read.oembedUrl && fields.oembedCouldChange.some((f) => wanted.includes(f)) ? read.oembedUrl : undefined;
}

/** The icon sources, best first, and the icon background; the manifest's icons and colour when it was fetched. */
export function pageIcons(read: PageRead, manifest?: ManifestData): { icons: IconCandidate[]; backgroundColor?: string } {
  // Another site's sign-in page (an identity provider's): its icon is not the link's site's.
  if (read.signIn === 'elsewhere') return { icons: [] };
  return {
    icons: iconCandidates(read.page, read.ctx.base, read.ctx.url, manifest && read.manifestUrl ? { data: manifest, url: read.manifestUrl } : undefined),
    backgroundColor: backgroundColor(read.page, manifest),
  };
}

/** A wall's fields: none; a sign-in wall's, the site's name from its own sign-in page, nothing else. */
function wallFields(read: PageRead): PageFields {
  const siteName = read.signIn === 'same-site' ? firstText(read.rules.siteName, read.ctx, 200) : undefined;
  return { siteName: siteName?.value, sources: siteName ? { siteName: siteName.rule } : {}, oembedCouldChange: [] };
}

/** The page's language: the first declaration, checked by detection on the title, description and text. */
export async function pageLanguage(read: PageRead, fields: Pick<PageFields, 'title' | 'description'>): Promise<{ language?: string; source: string }> {
  const declared: string[] = [];
  for (const rule of read.rules.language) {
    try {
      const v = rule.get(read.ctx);
      for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string' && x.trim()) declared.push(x);
    } catch {
      /* a broken rule gives nothing */
    }
  }
  return resolveLanguage({
    declared,
    text: [fields.title, fields.description, read.page.text].filter(Boolean).join('. '),
  });
}

/** The whole extraction at once: the steps above in order, the sub-resources fetched concurrently (oEmbed only when it could change a field). */
export async function extractPage(res: FetchResult, contentType: string | undefined, deps: ExtractDeps): Promise<PageExtraction> {
  const read = readPage(res, contentType, deps.rules);
  const found = pageFields(read);
  const oUrl = oembedToFetch(read, found, ['title', 'image', 'siteName', 'author']);
  const [oembed, manifest] = await Promise.all([
    oUrl ? fetchOEmbed(deps.fetch, oUrl, deps.signal) : undefined,
    read.manifestUrl ? fetchManifest(deps.fetch, read.manifestUrl, deps.signal) : undefined,
  ]);
  const fields = oembed ? pageFields(read, oembed) : found;
  const lang = await pageLanguage(read, fields);
  return pageExtraction(read, fields, lang, pageIcons(read, manifest));
}

/** The extraction's record shape from its steps' results. */
export function pageExtraction(
  read: PageRead,
  fields: PageFields,
  lang: { language?: string; source: string },
  icons: { icons: IconCandidate[]; backgroundColor?: string },
): PageExtraction {
  const { oembedCouldChange: _, sources, ...values } = fields;
  return {
    ...values,
    language: lang.language,
    icons: icons.icons,
    backgroundColor: icons.backgroundColor,
    ...(read.wall ? { wall: read.wall } : {}),
    sources: { ...sources, ...(lang.language ? { language: lang.source } : {}) },
    encoding: read.encoding,
  };
}
