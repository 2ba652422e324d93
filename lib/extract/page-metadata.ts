/**
 * Page metadata from a PageData with the default field rules, without network sub-fetches or
 * language detection: a synchronous view for callers that only have parsed HTML (platform
 * extractors use it for embedded documents). extract-page.ts is the full extraction.
 */
import { contentNodes, flattenJsonLd } from './json-ld.js';
import { normalizeLanguage } from './language.js';
import type { PageData } from './parse-page.js';
import { DEFAULT_RULES, firstText, metaValue, type FieldRules, type RuleContext } from './rules.js';

export interface PageMetadata {
  title?: string;
  description?: string;
  language?: string;
  siteName?: string;
}

export { normalizeLanguage };

export function metaContent(page: PageData, ...keys: string[]): string | undefined {
  const v = metaValue(page, ...keys);
  return v?.replace(/\s+/g, ' ').trim() || undefined;
}

export function extractPageMetadata(page: PageData, url = 'http://localhost/', rules: FieldRules = DEFAULT_RULES): PageMetadata {
  const ctx: RuleContext = { page, url, base: url, ld: contentNodes(flattenJsonLd(page.jsonLd)), headers: {} };
  let language: string | undefined;
  for (const rule of rules.language) {
    const v = rule.get(ctx);
    for (const x of Array.isArray(v) ? v : [v]) if (!language && typeof x === 'string') language = normalizeLanguage(x);
  }
  return {
    title: firstText(rules.title, ctx, 500)?.value,
    description: firstText(rules.description, ctx, 1000)?.value,
    language,
    siteName: firstText(rules.siteName, ctx, 200)?.value,
  };
}
