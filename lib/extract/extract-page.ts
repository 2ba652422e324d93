/**
 * Extraction of a PAGE: decode the bytes (charset), parse once (PageData), and apply the field
 * rules. Returns the record fields plus the image and icon *sources* that the image jobs then
 * host (lib/media/host-images.ts).
 */
import type { Config } from '../config.js';
import { decodeText } from '../fetch/charset.js';
import type { Fetcher, FetchResult } from '../fetch/safe-fetch.js';
import { extractPageMetadata } from './page-metadata.js';
import { parsePage } from './parse-page.js';

export interface IconCandidate {
  url: string;
  /** Declared size (largest side) when the page said, for ranking. */
  size?: number;
  rel?: string;
  type?: string;
}

export interface PageExtraction {
  title?: string;
  description?: string;
  language?: string;
  siteName?: string;
  /** The chosen preview image source (absolute URL), with size hints when declared. */
  image?: { url: string; width?: number; height?: number };
  /** Icon sources, best first; the first that decodes is used. */
  icons: IconCandidate[];
  /** A CSS colour the page declares for its icon background (manifest background_color, theme-color). */
  backgroundColor?: string;
  /** Set when the page is a consent/login/bot wall rather than the content: the record is ok:false. */
  wall?: string;
}

export interface ExtractDeps {
  fetch: Fetcher;
  config: Config;
  signal?: AbortSignal;
}

export async function extractPage(res: FetchResult, contentType: string | undefined, _deps: ExtractDeps): Promise<PageExtraction> {
  const { text } = decodeText(res.body, contentType);
  const page = parsePage(text);
  const meta = extractPageMetadata(page);
  const base = new URL(page.baseHref ?? '', res.finalUrl).href;
  const abs = (u: string | undefined) => {
    if (!u) return undefined;
    try { return new URL(u, base).href; } catch { return undefined; }
  };
  const ogImage = abs(page.metas.find((m) => m.property === 'og:image' || m.name === 'twitter:image')?.content);
  const iconLink = page.links.find((l) => l.rel.includes('icon'));
  return {
    ...meta,
    image: ogImage ? { url: ogImage } : undefined,
    icons: [{ url: abs(iconLink?.href) ?? new URL('/favicon.ico', res.finalUrl).href }],
  };
}
