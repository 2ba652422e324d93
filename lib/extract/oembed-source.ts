/**
 * oEmbed as a metadata source: the endpoint the page advertises
 * (`<link rel=alternate type=application/json+oembed>`), else a provider from
 * data/oembed-providers.json matched on the URL. Fetched through the guarded fetcher with a
 * small byte cap and a short timeout; any failure just means no oEmbed data.
 */
import { fetchSmallText } from '../fetch/safe-fetch.js';
import type { Fetcher } from '../fetch/types.js';
import providersFile from './data/oembed-providers.json';
import type { PageData } from './page-data.js';
import type { OEmbedData } from './rules.js';
import { resolveUrl } from './text.js';

interface Provider {
  name: string;
  schemes: string[];
  endpoint: string;
}

const PROVIDERS: { name: string; patterns: RegExp[]; endpoint: string }[] = (providersFile.providers as Provider[]).map((p) => ({
  name: p.name,
  endpoint: p.endpoint,
  patterns: p.schemes.map(
    (s) =>
      new RegExp(
        `^${s
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/^https:/, 'https?:')}$`,
        'i',
      ),
  ),
}));

export const OEMBED_LIMITS = { maxBytes: 256 * 1024, timeoutMs: 2500 };

/** The longest `html` kept (a player is one iframe; a longer answer is some provider's widget). */
export const OEMBED_HTML_CHARS = 64 * 1024;

/** The oEmbed URL for a page: advertised by the page, else from the providers file. */
export function oembedUrl(page: PageData | undefined, base: string, pageUrl: string): string | undefined {
  const link = page?.links.find((l) => l.rel.includes('alternate') && /^(application|text)\/json\+oembed$/.test(l.type ?? ''));
  if (link) return resolveUrl(link.href, base);
  const provider = PROVIDERS.find((p) => p.patterns.some((re) => re.test(pageUrl)));
  if (!provider) return undefined;
  const u = new URL(provider.endpoint);
  u.searchParams.set('url', pageUrl);
  u.searchParams.set('format', 'json');
  return u.href;
}

export function parseOEmbed(text: string): OEmbedData | undefined {
  let j: unknown;
  try {
    j = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return undefined;
  const o = j as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' && (o[k] as string).trim() ? (o[k] as string).trim() : undefined);
  const num = (k: string) =>
    typeof o[k] === 'number' ? (o[k] as number) : typeof o[k] === 'string' && /^\d+$/.test(o[k] as string) ? Number(o[k]) : undefined;
  return {
    type: str('type'),
    title: str('title'),
    author_name: str('author_name'),
    author_url: str('author_url'),
    provider_name: str('provider_name'),
    thumbnail_url: str('thumbnail_url'),
    thumbnail_width: num('thumbnail_width'),
    thumbnail_height: num('thumbnail_height'),
    // The player's markup and size: lib/embed/oembed-player.ts reads the iframe's address from it.
    html: typeof o.html === 'string' && o.html.length <= OEMBED_HTML_CHARS ? o.html : undefined,
    width: num('width'),
    height: num('height'),
  };
}

export async function fetchOEmbed(fetch: Fetcher, url: string, signal?: AbortSignal): Promise<OEmbedData | undefined> {
  const text = await fetchSmallText(fetch, url, { ...OEMBED_LIMITS, accept: 'application/json' }, signal);
  return text === undefined ? undefined : parseOEmbed(text);
}
