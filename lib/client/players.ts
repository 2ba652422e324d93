/**
 * The players linklens builds, as one list the server and the client share (docs/embeds.md):
 * each built-in provider's name, the kind of its players, the places they live (an origin, the
 * pattern of the paths that are players there, and the query parameters that must hold what the
 * provider names), and the largest size its player is given. The server (lib/embed/players/)
 * keeps a player address found elsewhere only on these places and clamps its size to these
 * bounds; the client's `buildPlayer` (./card-element.ts) rebuilds an iframe only on them, with
 * only the attributes linklens emits. No dependency: the client package loads nothing.
 *
 * An address whose path holds an encoded slash or backslash, a dot segment (`.`, `..`, in any
 * encoding), a percent sign once decoded or a control character is no player address anywhere:
 * a server that decodes its path would otherwise serve another page than the one allowed.
 */

/** The kinds of players (the record's `embed.type`). */
export type PlayerKind = 'video' | 'audio' | 'rich' | 'photo';

/** One place a provider's players live: an origin, the pattern of the paths that are players there, and checks of query parameters. */
export interface PlayerPlace {
  origin: string;
  path: RegExp;
  /** Query parameters the address must carry, each checked (Figma's and SoundCloud's `url`). */
  query?: Readonly<Record<string, (value: string) => boolean>>;
}

/** A built-in provider as both sides know it. */
export interface PlayerListing {
  /** The record's `embed.provider`. */
  name: string;
  type: PlayerKind;
  origins: readonly PlayerPlace[];
  /** The widest and tallest its player is given (CSS pixels): a larger size is scaled down to them. */
  maxWidth: number;
  maxHeight: number;
}

/**
 * The sandbox every player gets: its own scripts and origin (players keep state and talk to their
 * origin), and links that open in a new tab ("Watch on YouTube") as a normal page. No forms, no
 * top navigation, no downloads, no modals, no storage access.
 */
export const SANDBOX = 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox';

/** What each kind of player may use (Permissions Policy features): nothing else is granted. */
export const PLAYER_ALLOW: Readonly<Record<PlayerKind, readonly string[]>> = {
  video: ['autoplay', 'encrypted-media', 'fullscreen', 'picture-in-picture'],
  audio: ['autoplay', 'encrypted-media'],
  rich: ['fullscreen'],
  photo: ['fullscreen'],
};

/**
 * The Referer the player gets: the embedding page's origin only, never its path. YouTube's player
 * refuses to play without one (error 153 since 2025), and other players check the embedding origin.
 */
export const REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** `value` as an https URL on one of `hosts` whose path matches `path`. */
function addressOn(value: string, hosts: readonly string[], path: RegExp): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'https:' && !u.username && !u.password && !u.port && hosts.includes(u.hostname) && path.test(u.pathname) && !traversal(value, u);
  } catch {
    return false;
  }
}

const FIGMA_FILE = /^\/(design|file|proto|board|slides|deck)\/[A-Za-z0-9]{10,128}(\/[^/]*)?$/;
const SOUNDCLOUD_TARGET = /^\/[A-Za-z0-9_/-]{1,300}$/;
const VIDEO_BOUNDS = { maxWidth: 3840, maxHeight: 2160 } as const;
const one = (origin: string, path: RegExp): PlayerPlace[] => [{ origin, path }];

/** The built-in providers, by the key the server's entries use. */
export const PLAYER_LIST = {
  youtube: {
    name: 'YouTube',
    type: 'video',
    origins: [
      { origin: 'https://www.youtube-nocookie.com', path: /^\/embed\/([A-Za-z0-9_-]{11})\/?$/ },
      { origin: 'https://www.youtube.com', path: /^\/embed\/([A-Za-z0-9_-]{11})\/?$/ },
    ],
    ...VIDEO_BOUNDS,
  },
  vimeo: { name: 'Vimeo', type: 'video', origins: one('https://player.vimeo.com', /^\/video\/(\d{1,12})\/?$/), ...VIDEO_BOUNDS },
  spotify: {
    name: 'Spotify',
    type: 'audio',
    origins: one('https://open.spotify.com', /^\/embed\/(track|album|playlist|episode|show|artist)\/([A-Za-z0-9]{22})\/?$/),
    maxWidth: 1920,
    maxHeight: 720,
  },
  soundcloud: {
    name: 'SoundCloud',
    type: 'audio',
    origins: [
      {
        origin: 'https://w.soundcloud.com',
        path: /^\/player\/?$/,
        query: { url: (v) => addressOn(v, ['soundcloud.com', 'api.soundcloud.com', 'api-widget.soundcloud.com'], SOUNDCLOUD_TARGET) },
      },
    ],
    maxWidth: 1920,
    maxHeight: 720,
  },
  dailymotion: {
    name: 'Dailymotion',
    type: 'video',
    origins: [
      { origin: 'https://geo.dailymotion.com', path: /^\/player(\/x[a-z0-9]{2,15})?\.html$/i },
      { origin: 'https://www.dailymotion.com', path: /^\/embed\/video\/x[a-z0-9]{4,12}\/?$/i },
    ],
    ...VIDEO_BOUNDS,
  },
  twitch: {
    name: 'Twitch',
    type: 'video',
    origins: [
      { origin: 'https://player.twitch.tv', path: /^\/$/ },
      { origin: 'https://clips.twitch.tv', path: /^\/embed$/ },
    ],
    ...VIDEO_BOUNDS,
  },
  appleMusic: {
    name: 'Apple Music',
    type: 'audio',
    origins: one('https://embed.music.apple.com', /^\/[a-z]{2}\/(album|playlist|song|music-video)\/(?:[^/]+\/)?(?:id)?(pl\.[A-Za-z0-9.-]+|\d{1,15})\/?$/),
    maxWidth: 1920,
    maxHeight: 1080,
  },
  applePodcasts: {
    name: 'Apple Podcasts',
    type: 'audio',
    origins: one('https://embed.podcasts.apple.com', /^\/[a-z]{2}\/podcast\/(?:[^/]+\/)?id\d{1,15}\/?$/),
    maxWidth: 1920,
    maxHeight: 720,
  },
  ted: { name: 'TED', type: 'video', origins: one('https://embed.ted.com', /^\/talks\/(lang\/[a-z-]+\/)?[a-z0-9_]+(\.html)?$/i), ...VIDEO_BOUNDS },
  bluesky: {
    name: 'Bluesky',
    type: 'rich',
    origins: one('https://embed.bsky.app', /^\/embed\/did:(plc|web):[A-Za-z0-9._:%-]+\/app\.bsky\.feed\.post\/[A-Za-z0-9]+$/),
    maxWidth: 800,
    maxHeight: 2000,
  },
  bandcamp: {
    name: 'Bandcamp',
    type: 'audio',
    origins: one('https://bandcamp.com', /^\/EmbeddedPlayer\/(?:[a-z_]+=[A-Za-z0-9_.-]*\/)*[a-z_]+=[A-Za-z0-9_.-]*\/?$/i),
    maxWidth: 1920,
    maxHeight: 1080,
  },
  loom: { name: 'Loom', type: 'video', origins: one('https://www.loom.com', /^\/embed\/[0-9a-f]{32}\/?$/), ...VIDEO_BOUNDS },
  codepen: {
    name: 'CodePen',
    type: 'rich',
    origins: one('https://codepen.io', /^\/[A-Za-z0-9_-]{1,60}\/embed\/(preview\/)?[A-Za-z0-9]{3,20}\/?$/),
    maxWidth: 1920,
    maxHeight: 1200,
  },
  figma: {
    name: 'Figma',
    type: 'rich',
    origins: [
      { origin: 'https://embed.figma.com', path: /^\/(design|proto|board|slides|deck)\/[A-Za-z0-9]{10,128}(\/[^/]*)?$/ },
      { origin: 'https://www.figma.com', path: /^\/embed\/?$/, query: { url: (v) => addressOn(v, ['figma.com', 'www.figma.com'], FIGMA_FILE) } },
    ],
    maxWidth: 1920,
    maxHeight: 1200,
  },
  x: { name: 'X', type: 'rich', origins: one('https://platform.twitter.com', /^\/embed\/Tweet\.html$/), maxWidth: 550, maxHeight: 2000 },
  instagram: {
    name: 'Instagram',
    type: 'rich',
    origins: one('https://www.instagram.com', /^\/(p|reel|tv)\/[A-Za-z0-9_-]{5,40}\/embed(\/captioned)?\/?$/),
    maxWidth: 658,
    maxHeight: 2000,
  },
  tiktok: {
    name: 'TikTok',
    type: 'video',
    origins: one('https://www.tiktok.com', /^\/(player\/v1|embed\/v2|embed)\/\d{8,25}\/?$/),
    maxWidth: 1080,
    maxHeight: 1920,
  },
  reddit: {
    name: 'Reddit',
    type: 'rich',
    origins: one('https://embed.reddit.com', /^\/r\/[A-Za-z0-9_]{2,32}\/comments\/[a-z0-9]{3,12}(\/[A-Za-z0-9_%-]{0,300})?\/?$/),
    maxWidth: 800,
    maxHeight: 2000,
  },
} as const satisfies Record<string, PlayerListing>;

/** Every provider of the list. */
export const PLAYER_LISTINGS: readonly PlayerListing[] = Object.values(PLAYER_LIST);

/** A dot segment, in the written address: `.` or `..` in any mix of `.` and `%2e`, between slashes or backslashes. */
const DOT_SEGMENT = /(^|[/\\])(?:\.|%2e){1,2}(?=[/\\?#]|$)/i;
/** An encoded slash or backslash. */
const ENCODED_SEPARATOR = /%(2f|5c)/i;

/**
 * True when an address could lead somewhere else than its path says: `raw` (as written) has a dot
 * segment, or the parsed path has an encoded slash or backslash, a segment that decodes to a dot
 * segment, to a percent sign (double encoding) or to a control character, or cannot be decoded.
 */
export function traversal(raw: string, url: URL): boolean {
  const written = raw.split(/[?#]/, 1)[0].replace(/^(?:[a-z][a-z0-9+.-]*:)?[/\\]{2}[^/\\]*/i, '');
  if (DOT_SEGMENT.test(written) || ENCODED_SEPARATOR.test(url.pathname)) return true;
  for (const segment of url.pathname.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return true;
    }
    if (decoded === '.' || decoded === '..' || /[%/\\\u0000-\u001f\u007f]/.test(decoded)) return true;
  }
  return false;
}

/** True when `url` is on `place`: its origin, a path of the pattern, every named query parameter present (once) and valid. */
export function onPlace(url: URL, place: PlayerPlace): boolean {
  if (url.origin !== place.origin || !place.path.test(url.pathname)) return false;
  for (const [name, check] of Object.entries(place.query ?? {})) {
    const values = url.searchParams.getAll(name);
    if (values.length !== 1 || !check(values[0])) return false;
  }
  return true;
}

/** True when `url`'s origin is one of the list's (whatever its path). */
export function listedOrigin(url: URL): boolean {
  return PLAYER_LISTINGS.some((l) => l.origins.some((o) => o.origin === url.origin));
}

/**
 * The provider whose player `raw` (an absolute https address, as written) is, when it is on one
 * of the list's places and leads nowhere else (`traversal`); undefined otherwise.
 */
export function listedPlayer(raw: string): PlayerListing | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username || url.password || traversal(raw, url)) return undefined;
  return PLAYER_LISTINGS.find((l) => l.origins.some((o) => onPlace(url, o)));
}

/**
 * What the client lets an iframe at `raw` use, when it may build one there: a listed provider's
 * player (what its kind may use), or an address on one of `origins`, https origins the embedding
 * page trusts besides the list (an operator's LINKPREVIEW_EMBED_ORIGINS, a site's own player),
 * which may use what a video may; undefined anywhere else.
 */
export function frameAllowance(raw: string, origins: readonly string[] = []): readonly string[] | undefined {
  const listing = listedPlayer(raw);
  if (listing) return PLAYER_ALLOW[listing.type];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const trusted = url.protocol === 'https:' && !url.username && !url.password && origins.includes(url.origin) && !listedOrigin(url);
  return trusted && !traversal(raw, url) ? PLAYER_ALLOW.video : undefined;
}
