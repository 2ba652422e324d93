/**
 * The allow list of player addresses (docs/embeds.md): an address found in an oEmbed answer or a
 * page's player meta becomes a player only on a built-in provider's player origin and path (the
 * list the client shares, lib/client/players.ts: on a provider's origin, any other path is
 * refused), on an origin the operator added (LINKPREVIEW_EMBED_ORIGINS), or, for a page's own
 * metas, on the link's own site (its registrable domain by the Public Suffix List: `a.github.io`
 * is not `b.github.io`'s). An address with an encoded slash or a dot segment is refused everywhere. A built-in provider's address is rebuilt by its entry (YouTube's moves to its
 * no-cookie host, Twitch's gets the configured parents); the others are kept as they are, https,
 * less an autoplay parameter (a preview never starts playing by itself).
 * A host rule `no-embed` or `deny` on the player's host drops it.
 */
import { listedOrigin, onPlace, traversal } from '../client/players.js';
import { domainOf } from '../ids.js';
import { sameSite, siteOf } from '../site.js';
import { httpsAddress, playerHostAllowed } from './address.js';
import { PROVIDERS } from './players/index.js';
import type { LinkContext, Player, PlayerProvider, PlayerSize } from './types.js';

/** What the source says of the address besides it: the kind of player, its size, its name. */
export interface AddressHint {
  type: Player['type'];
  size?: PlayerSize;
  /** The provider's name as the source gives it (oEmbed's provider_name). */
  provider?: string;
  /** The page the address was found on: an address on its own site is allowed too (a page's own metas). */
  ownSite?: string;
}

/** Sizes outside these bounds are not believed. */
const MAX_PIXELS = 4000;
const MIN_RATIO = 0.1;
const MAX_RATIO = 10;

const pixels = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n >= 1 && n <= MAX_PIXELS ? Math.round(n) : undefined);

/** The most a player may be: a built-in provider's bounds (lib/client/players.ts). */
export interface SizeBounds {
  maxWidth: number;
  maxHeight: number;
}

/**
 * A believed width and height scaled down to the bounds, together (a box keeps its ratio); a
 * lone width or height is clamped. Within the bounds, or with none, as they are.
 */
function clamped(width: number | undefined, height: number | undefined, bounds: SizeBounds | undefined): { width?: number; height?: number } {
  const scale = Math.min(1, bounds && width ? bounds.maxWidth / width : 1, bounds && height ? bounds.maxHeight / height : 1);
  const scaled = (n: number | undefined) => (n === undefined ? undefined : Math.max(1, Math.floor(n * scale)));
  return { width: scaled(width), height: scaled(height) };
}

/** The default size of a kind of player the source gave no size for. */
const DEFAULT_SIZE: Record<Player['type'], PlayerSize> = {
  video: { aspectRatio: 16 / 9 },
  audio: { height: 152 },
  rich: { height: 500 },
  photo: { aspectRatio: 4 / 3 },
};

/**
 * A sane size for a kind of player: a video or photo scales (its aspect ratio, from its width and
 * height when those are all it has), an audio bar has a fixed height, a post a box. A size past
 * MAX_PIXELS is not believed; a built-in provider's player larger than its bounds (`bounds`,
 * lib/client/players.ts) is scaled down to them, its ratio kept.
 */
export function sizeFor(type: Player['type'], size: PlayerSize = {}, bounds?: SizeBounds): PlayerSize {
  const believed = { width: pixels(size.width), height: pixels(size.height) };
  const { width, height } = clamped(believed.width, believed.height, bounds);
  const stated = size.aspectRatio && size.aspectRatio >= MIN_RATIO && size.aspectRatio <= MAX_RATIO ? size.aspectRatio : undefined;
  const ratio = believed.width && believed.height ? believed.width / believed.height : undefined;
  const aspectRatio = stated ?? (ratio && ratio >= MIN_RATIO && ratio <= MAX_RATIO ? ratio : undefined);
  if ((type === 'video' || type === 'photo') && aspectRatio) return { ...(width && height ? { width, height } : {}), aspectRatio };
  if (height) return { ...(width ? { width } : {}), height };
  if (aspectRatio) return { aspectRatio };
  return DEFAULT_SIZE[type];
}

/** The built-in provider whose player place (origin, path, checked query) `url` is on. */
export function providerAt(url: URL): PlayerProvider | undefined {
  return PROVIDERS.find((p) => p.origins.some((o) => onPlace(url, o)));
}

/** True when `url`'s origin is one the operator added. */
export function operatorOrigin(url: URL, ctx: LinkContext): boolean {
  return ctx.config.embedOrigins.includes(url.origin);
}

/** The sites whose oEmbed answers may hold an allowed player: the built-in origins' and the operator's. */
export function playerSites(ctx: LinkContext): Set<string> {
  const origins = [...PROVIDERS.flatMap((p) => p.origins.map((o) => o.origin)), ...ctx.config.embedOrigins];
  return new Set(origins.map((o) => siteOf(new URL(o).hostname)));
}

/** A query parameter that starts a player by itself: a preview never plays before the reader asks. */
const AUTOPLAY = /^auto_?play$/i;

/** The address without its autoplay parameters (a provider's own entry builds its address itself). */
function withoutAutoplay(src: URL): URL {
  const url = new URL(src.href);
  for (const key of [...url.searchParams.keys()]) if (AUTOPLAY.test(key)) url.searchParams.delete(key);
  return url;
}

/** The player at `raw` (an iframe src, a meta's content), when the address is allowed; undefined otherwise. */
export function playerAt(raw: string | undefined, hint: AddressHint, ctx: LinkContext, base?: string): Player | undefined {
  const src = httpsAddress(raw, base);
  if (!src || traversal(raw?.trim() ?? '', src)) return undefined;
  const provider = providerAt(src);
  let player: Player | undefined;
  if (provider) {
    const rebuilt = provider.fromAddress ? provider.fromAddress(src, ctx) : { url: withoutAutoplay(src) };
    if (!rebuilt) return undefined;
    player = { type: provider.type, url: rebuilt.url.href, provider: provider.name, ...sizeFor(provider.type, rebuilt.size ?? hint.size, provider) };
  } else if (listedOrigin(src)) {
    // A built-in provider's origin, off its player paths: no player, whatever else would allow it.
    return undefined;
  } else if (operatorOrigin(src, ctx) || (hint.ownSite && sameSite(src, hint.ownSite))) {
    player = { type: hint.type, url: withoutAutoplay(src).href, provider: hint.provider ?? domainOf(src.href), ...sizeFor(hint.type, hint.size) };
  }
  return player && playerHostAllowed(ctx.config, player.url) ? player : undefined;
}
