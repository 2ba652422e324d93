/**
 * What X's post and user readers share: the bot page as the last source, X's icon, images found
 * in the bot page, and the user bits a post carries too (object id, verified flag, title, avatar
 * size).
 */
import type { MicroblogUser } from '../../contract/link.js';
import { fetchPlatformPage, isOk } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { str } from '../shared/json.js';
import { type ParsedPage, parsePlatformPage } from '../shared/page.js';
import type { Ctx } from './settings.js';

export const ICONS = [{ url: 'https://abs.twimg.com/favicons/twitter.3.ico' }];

/** The bot HTML, the last source: a FetchFailure propagates (the generic preview). */
export async function tryPage(url: string, ctx: Ctx): Promise<ParsedPage | undefined> {
  const res = await fetchPlatformPage(url, ctx);
  if (!isOk(res.status)) return undefined;
  const page = parsePlatformPage(res, ctx);
  return page.wall ? undefined : page;
}

export function biggerAvatar(u: string | undefined): string | undefined {
  return u?.replace(/_(normal|bigger|mini|200x200)(\.[a-z]+)$/i, '_400x400$2');
}

export const MEDIA_PATHS = /\/(media|tweet_video_thumb|ext_tw_video_thumb|amplify_video_thumb)\//;

/** The first pbs.twimg.com image URL in the HTML whose path matches. */
export function firstTwimg(html: string, path: RegExp): string | undefined {
  for (const m of html.matchAll(/https:\/\/pbs\.twimg\.com\/[^"'\s)&<>]+\.(?:jpe?g|png|webp)/g)) {
    if (path.test(m[0])) return m[0];
  }
  return undefined;
}

/** Users are identified by their lower-cased username, which every source (and the URL) gives. */
export function userId(username: string): number {
  return platformObjectId('microblog', 'user', username.toLowerCase());
}

export function verifiedFlag(u: Record<string, unknown>): boolean | undefined {
  if (u.is_blue_verified === true || u.verified === true || str(u.verified_type)) return true;
  return u.is_blue_verified === false || u.verified === false ? false : undefined;
}

export function userTitle(u: Pick<MicroblogUser, 'name' | 'username'>): string {
  if (u.name && u.username) return `${u.name} (@${u.username}) on X`;
  if (u.username) return `@${u.username} on X`;
  return u.name ? `${u.name} on X` : 'Post on X';
}
