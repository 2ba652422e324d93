/**
 * Twitch: a video (`twitch.tv/videos/<id>`), a channel's live stream (`twitch.tv/<channel>`) and a
 * clip (`clips.twitch.tv/<slug>`, `twitch.tv/<channel>/clip/<slug>`) play at `player.twitch.tv/?video=`
 * / `?channel=` and `clips.twitch.tv/embed?clip=`, each with one `parent` per domain of the pages
 * that show it (dev.twitch.tv/docs/embed/video-and-clips: required, the player refuses to play
 * elsewhere). linklens cannot know those pages: they are LINKPREVIEW_EMBED_PARENTS, and without
 * it no Twitch link has a player. A Twitch address found elsewhere gets the same parents (its own dropped).
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { LinkContext, Player, PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const CHANNEL = /^[A-Za-z0-9_]{3,25}$/;
const CLIP = /^[A-Za-z0-9_-]{5,100}$/;
/** First path segments that are Twitch's own pages, not channels. */
const RESERVED = new Set([
  'directory',
  'videos',
  'settings',
  'search',
  'downloads',
  'jobs',
  'login',
  'signup',
  'subscriptions',
  'inventory',
  'wallet',
  'friends',
  'messages',
  'turbo',
  'store',
  'prime',
  'drops',
  'p',
  'about',
  'privacy',
  'legal',
]);

type Target = { video: string } | { channel: string } | { clip: string };

function twitchPlayer(target: Target, ctx: LinkContext): Player | undefined {
  const parents = ctx.config.embedParents;
  if (!parents.length) return undefined;
  const url = 'clip' in target ? new URL('https://clips.twitch.tv/embed') : new URL('https://player.twitch.tv/');
  for (const [k, v] of Object.entries(target)) url.searchParams.set(k, v);
  for (const p of parents) url.searchParams.append('parent', p);
  url.searchParams.set('autoplay', 'false');
  return { type: 'video', url: url.href, provider: 'Twitch', aspectRatio: 16 / 9 };
}

function linkTarget(url: URL): Target | undefined {
  const [a, b, c] = segments(url);
  if (hostIsOneOf(url, 'clips.twitch.tv')) return a && CLIP.test(a) && !b ? { clip: a } : undefined;
  if (!hostIsOneOf(url, 'twitch.tv', 'www.twitch.tv', 'm.twitch.tv')) return undefined;
  if (a === 'videos' && b && /^\d{1,15}$/.test(b)) return { video: b };
  if (a && CHANNEL.test(a) && !RESERVED.has(a.toLowerCase())) {
    if (!b) return { channel: a };
    if (b === 'clip' && c && CLIP.test(c)) return { clip: c };
  }
  return undefined;
}

function addressTarget(src: URL): Target | undefined {
  const q = (k: string) => src.searchParams.get(k) ?? '';
  if (src.hostname === 'clips.twitch.tv') return CLIP.test(q('clip')) ? { clip: q('clip') } : undefined;
  const video = q('video').replace(/^v/, '');
  if (/^\d{1,15}$/.test(video)) return { video };
  return CHANNEL.test(q('channel')) ? { channel: q('channel') } : undefined;
}

export const twitch: PlayerProvider = {
  ...PLAYER_LIST.twitch,
  fromLink(url, ctx) {
    const target = linkTarget(url);
    return target && twitchPlayer(target, ctx);
  },
  fromAddress(src, ctx) {
    const target = addressTarget(src);
    const player = target && twitchPlayer(target, ctx);
    return player && { url: new URL(player.url), size: { aspectRatio: player.aspectRatio } };
  },
};
