/**
 * YouTube the site, as the video and channel readers share it: which URLs are videos and channels
 * (match), the canonical origin, the consent wall, the page's icons and the JSON of the API and oEmbed.
 */
import { type IconCandidate, iconCandidates } from '../../extract/icons.js';
import type { PageData } from '../../extract/page-data.js';
import { isConsentPage } from '../../extract/walls.js';
import type { FetchResult } from '../../fetch/types.js';
import { hostOf } from '../../host.js';
import { fetchSource } from '../shared/fetch.js';
import { type Json, obj, parseJson } from '../shared/json.js';
import type { PlatformMatch } from '../types.js';
import { VIDEO_ID } from './player.js';
import type { Ctx } from './settings.js';

export const CANONICAL = 'https://www.youtube.com';

export function matchYoutube(url: URL): PlatformMatch | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = hostOf(url);
  const segs = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeSafe(s));
  if (host === 'youtu.be' || host === 'www.youtu.be') {
    return segs[0] && VIDEO_ID.test(segs[0]) ? { kind: 'video', ids: { videoId: segs[0] } } : undefined;
  }
  if (!/^((www|m|music|gaming)\.)?youtube\.com$/.test(host) && !/^(www\.)?youtube-nocookie\.com$/.test(host)) return undefined;
  const first = segs[0] ?? '';
  if (first === 'watch') {
    const v = url.searchParams.get('v') ?? '';
    return VIDEO_ID.test(v) ? { kind: 'video', ids: { videoId: v } } : undefined;
  }
  if (['shorts', 'live', 'embed', 'v', 'e'].includes(first)) {
    return segs[1] && VIDEO_ID.test(segs[1]) ? { kind: 'video', ids: { videoId: segs[1] } } : undefined;
  }
  if (first.startsWith('@') && first.length > 1) return { kind: 'channel', ids: { handle: first } };
  if (first === 'channel' && /^UC[A-Za-z0-9_-]{22}$/.test(segs[1] ?? '')) return { kind: 'channel', ids: { channelId: segs[1] } };
  if (first === 'c' && segs[1]) return { kind: 'channel', ids: { custom: segs[1] } };
  if (first === 'user' && segs[1]) return { kind: 'channel', ids: { user: segs[1] } };
  return undefined;
}

export function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A JSON object from the API or oEmbed (`json` only on a 2xx answer that is one). A FetchFailure propagates. */
export async function fetchJson(url: string, ctx: Ctx): Promise<{ status: number; json?: Json }> {
  const { status, text } = await fetchSource(url, ctx, { accept: 'application/json' });
  return { status, json: obj(parseJson(text)) };
}

/** The site icons the page declares, best first (the page extraction's ranking), then YouTube's favicon. */
export function iconsOf(page: PageData | undefined): IconCandidate[] {
  return iconCandidates(page ?? { links: [] }, `${CANONICAL}/`, `${CANONICAL}/`);
}

/** The answer is Google's consent interstitial, not the page asked for (lib/extract/walls.ts). */
export function isConsentWall(res: FetchResult): boolean {
  return isConsentPage(res.finalUrl);
}
