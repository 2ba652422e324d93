/**
 * Page metadata from a PageData: each field is an ordered list of sources, the first non-empty
 * value wins. (The extraction issue grows these into full rule lists.)
 */
import type { PageData } from './parse-page.js';

export interface PageMetadata {
  title?: string;
  description?: string;
  language?: string;
  siteName?: string;
}

const clean = (s: string | undefined) => {
  const t = s?.replace(/\s+/g, ' ').trim();
  return t ? t : undefined;
};

export function metaContent(page: PageData, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const k = key.toLowerCase();
    const hit = page.metas.find((m) => (m.property === k || m.name === k) && clean(m.content));
    if (hit) return clean(hit.content);
  }
  return undefined;
}

/** `en-US` / `en_us` -> `en-US`; `x-default` and garbage -> undefined. */
export function normalizeLanguage(tag: string | undefined): string | undefined {
  if (!tag) return undefined;
  const m = /^([a-z]{2,3})(?:[-_]([a-z]{2}|\d{3}))?\b/i.exec(tag.trim());
  if (!m) return undefined;
  const lang = m[1].toLowerCase();
  if (lang === 'und' || lang === 'mul' || lang === 'zxx') return undefined;
  return m[2] ? `${lang}-${m[2].toUpperCase()}` : lang;
}

export function extractPageMetadata(page: PageData): PageMetadata {
  return {
    title: metaContent(page, 'og:title', 'twitter:title') ?? clean(page.title),
    description: metaContent(page, 'og:description', 'twitter:description', 'description'),
    language: normalizeLanguage(page.lang),
    siteName: metaContent(page, 'og:site_name', 'application-name'),
  };
}
