/**
 * The built-in players, one entry per provider (docs/embeds.md lists them with their addresses).
 * A link's player is the first entry's that gives one; an address found elsewhere is kept when it
 * is on one of their player origins (or the operator's, LINKPREVIEW_EMBED_ORIGINS).
 */
import type { PlayerProvider } from '../types.js';
import { appleMusic, applePodcasts } from './apple.js';
import { bandcamp } from './bandcamp.js';
import { bluesky } from './bluesky.js';
import { codepen } from './codepen.js';
import { dailymotion } from './dailymotion.js';
import { figma } from './figma.js';
import { loom } from './loom.js';
import { instagram, reddit, tiktok, x } from './platforms.js';
import { soundcloud } from './soundcloud.js';
import { spotify } from './spotify.js';
import { ted } from './ted.js';
import { twitch } from './twitch.js';
import { vimeo } from './vimeo.js';
import { youtube } from './youtube.js';

export const PROVIDERS: readonly PlayerProvider[] = [
  youtube,
  vimeo,
  spotify,
  soundcloud,
  dailymotion,
  twitch,
  appleMusic,
  applePodcasts,
  ted,
  bluesky,
  bandcamp,
  loom,
  codepen,
  figma,
  x,
  instagram,
  tiktok,
  reddit,
];
