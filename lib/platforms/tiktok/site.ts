/**
 * What TikTok's video and user readers share: the canonical origin, TikTok's icon and the page's
 * embedded state (`__UNIVERSAL_DATA_FOR_REHYDRATION__`, else the older `SIGI_STATE`).
 */
import { obj, parseJson } from '../shared/json.js';
import { scriptById } from '../shared/page.js';

/** TikTok's own address, in the records (a user's `url`) and in oEmbed's `url` parameter. */
export const CANONICAL = 'https://www.tiktok.com';

export const ICONS = [{ url: 'https://www.tiktok.com/favicon.ico' }];

/** The embedded state: the rehydration scope, else SIGI_STATE. */
export function pageState(html: string): { scope?: Record<string, unknown>; sigi?: Record<string, unknown> } {
  const universal = obj(parseJson(scriptById(html, '__UNIVERSAL_DATA_FOR_REHYDRATION__')));
  const scope = obj(universal?.__DEFAULT_SCOPE__);
  const sigiRaw = scriptById(html, 'SIGI_STATE') ?? /window\['SIGI_STATE'\]\s*=\s*(\{[\s\S]*?\});\s*window\[/.exec(html)?.[1];
  const sigi = obj(parseJson(sigiRaw));
  return { ...(scope ? { scope } : {}), ...(sigi ? { sigi } : {}) };
}
