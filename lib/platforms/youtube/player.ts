/**
 * YouTube's player (docs/embeds.md): the embed on the no-cookie host, `youtube-nocookie.com/embed/<id>`,
 * 16:9 and scaling; a Short is a 9:16 box. The common players (lib/embed/players/) use it for a
 * YouTube link previewed generically and for a youtube.com embed address found elsewhere.
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { Player } from '../../embed/types.js';
import type { PlatformMatch } from '../types.js';

/** The no-cookie host, the first place of YouTube's in the shared list (lib/client/players.ts). */
export const YOUTUBE_PLAYER_ORIGIN = PLAYER_LIST.youtube.origins[0].origin;

/** A video's id: 11 characters of the URL-safe base64 alphabet (the link matcher, site.ts, reads it too). */
export const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;

/** The player of one video; a Short (`/shorts/<id>`) is a portrait box. */
export function youtubePlayer(videoId: string, short = false): Player | undefined {
  if (!VIDEO_ID.test(videoId)) return undefined;
  const url = `${YOUTUBE_PLAYER_ORIGIN}/embed/${videoId}`;
  return short ? { type: 'video', url, provider: 'YouTube', width: 315, height: 560 } : { type: 'video', url, provider: 'YouTube', aspectRatio: 16 / 9 };
}

export function player(url: URL, match: PlatformMatch): Player | undefined {
  return match.kind === 'video' ? youtubePlayer(match.ids.videoId, /^\/shorts\//.test(url.pathname)) : undefined;
}
