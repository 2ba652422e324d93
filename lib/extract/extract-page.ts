/**
 * Extraction of a PAGE: decode the bytes (charset) and parse them in one streaming pass
 * (PageData), fetch the few sub-resources that carry metadata (oEmbed, the web app manifest)
 * through the guarded fetcher, and apply the field rules (rules.ts). Returns the record fields
 * plus the image and icon *sources* that the image jobs then host (lib/media/host-images.ts).
 */
import type { CoreConfig } from '../core-settings.js';
import { detectEncoding } from '../fetch/charset.js';
import { flatHeaders } from '../fetch/headers.js';
import type { Fetcher, FetchResult } from '../fetch/safe-fetch.js';
import { backgroundColor, iconCandidates, manifestHref, parseManifest, type IconCandidate, type ManifestData } from './icons.js';
import { contentNodes, flattenJsonLd } from './json-ld.js';
import { resolveLanguage } from './language.js';
import { fetchOEmbed, oembedUrl } from './oembed.js';
import { parsePageBytes, type PageData } from './parse-page.js';
import { DEFAULT_RULES, firstImage, firstText, type FieldRules, type OEmbedData, type RuleContext } from './rules.js';
import { detectWall, isWallTitle } from './walls.js';

export interface PageExtraction {
  title?: string;
  description?: string;
  language?: string;
  siteName?: string;
  author?: string;
  /** The chosen preview image source (absolute URL), with size hints when declared. */
  image?: { url: string; width?: number; height?: number };
  /** Icon sources, best first; the first that decodes is used. */
  icons: IconCandidate[];
  /** A CSS colour the page declares for its icon background (manifest background_color, theme-color). */
  backgroundColor?: string;
  /** Set when the page is a consent/login/bot wall rather than the content: the record is ok:false. */
  wall?: string;
  /** The rule that gave each field (for logs and debugging). */
  sources: Partial<Record<'title' | 'description' | 'image' | 'siteName' | 'author' | 'language', string>>;
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

async function fetchManifest(fetch: Fetcher, url: string, signal?: AbortSignal): Promise<ManifestData | undefined> {
  try {
    const res = await fetch(url, { maxBytes: SUBFETCH_LIMITS.manifestBytes, onTooLarge: 'fail', timeoutMs: SUBFETCH_LIMITS.timeoutMs, signal, headers: { accept: 'application/manifest+json,application/json' }, maxRedirects: 3 });
    if (res.status < 200 || res.status >= 300) return undefined;
    return parseManifest(res.body.toString('utf8'));
  } catch {
    return undefined;
  }
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

export async function extractPage(res: FetchResult, contentType: string | undefined, deps: ExtractDeps): Promise<PageExtraction> {
  const rules = deps.rules ?? DEFAULT_RULES;
  const encoding = detectEncoding(res.body, contentType);
  const page = parsePageBytes(res.body, encoding);
  const finalUrl = res.finalUrl;
  const base = resolveBase(page, finalUrl);
  const headers = flatHeaders(res.headers);

  const wall = detectWall({
    status: res.status,
    url: res.url,
    finalUrl,
    headers,
    page,
    head: res.body.subarray(0, 32 * 1024).toString('latin1'),
  });

  // Sub-resources, concurrently, each capped in bytes and time. None on a wall.
  const oUrl = wall ? undefined : oembedUrl(page, base, finalUrl);
  const mUrl = wall ? undefined : manifestHref(page, base);
  const [oembed, manifest] = await Promise.all([
    oUrl ? fetchOEmbed(deps.fetch, oUrl, deps.signal) : Promise.resolve<OEmbedData | undefined>(undefined),
    mUrl ? fetchManifest(deps.fetch, mUrl, deps.signal) : Promise.resolve<ManifestData | undefined>(undefined),
  ]);

  const ctx: RuleContext = { page, url: finalUrl, base, ld: contentNodes(flattenJsonLd(page.jsonLd)), headers, oembed };
  const sources: PageExtraction['sources'] = {};

  // A wall's own title ("Just a moment...") is never kept; real metadata on the wall page is.
  const title = firstText(rules.title, ctx, 500, (t) => !isWallTitle(t));
  const description = firstText(rules.description, ctx, 4000, (t) => !isWallTitle(t));
  const siteName = firstText(rules.siteName, ctx, 200);
  const author = firstText(rules.author, ctx, 200, (t) => !/^https?:\/\//i.test(t));
  const image = firstImage(rules.image, ctx);
  if (title) sources.title = title.rule;
  if (description) sources.description = description.rule;
  if (siteName) sources.siteName = siteName.rule;
  if (author) sources.author = author.rule;
  if (image) sources.image = image.rule;

  const declared: string[] = [];
  for (const rule of rules.language) {
    try {
      const v = rule.get(ctx);
      for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string' && x.trim()) declared.push(x);
    } catch { /* a broken rule gives nothing */ }
  }
  const lang = await resolveLanguage({
    declared,
    text: [title?.value, description?.value, page.text].filter(Boolean).join('. '),
  });
  if (lang.language) sources.language = lang.source;

  return {
    title: title?.value,
    description: description?.value,
    language: lang.language,
    siteName: siteName?.value,
    author: author?.value,
    image: image ? { url: image.url, ...(image.width ? { width: image.width } : {}), ...(image.height ? { height: image.height } : {}) } : undefined,
    icons: iconCandidates(page, base, finalUrl, manifest, mUrl),
    backgroundColor: backgroundColor(page, manifest),
    ...(wall ? { wall } : {}),
    sources,
    encoding,
  };
}
