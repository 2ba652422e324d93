/**
 * The players a link and its page give without any fetch (docs/embeds.md), most specific first:
 * a built-in provider's player made from the link (and the page: Bluesky's DID, Bandcamp's
 * player), then the page's own player metas: `twitter:player` (with twitter:player:width/height)
 * and an `og:video` of type `text/html` (og:video:width/height), kept when the address is on an
 * allowed player origin or on the link's own site. oEmbed's player (./oembed-player.ts) ranks between the two.
 */
import type { PageData } from '../extract/page-data.js';
import { embedsFor, playerHostAllowed } from './address.js';
import { playerAt } from './allow.js';
import { PROVIDERS } from './players/index.js';
import type { EmbedConfig, LinkContext, Player, PlayerSize } from './types.js';

/** What the extract step found: a link's player, and the page's own. */
export interface PagePlayers {
  /** A built-in provider's player for the link (or where it led). */
  direct?: Player;
  /** The player the page's metas name. */
  meta?: Player;
}

const num = (s: string | undefined) => (s && /^\d{1,5}$/.test(s.trim()) ? Number(s.trim()) : undefined);

function sizeOf(width: string | undefined, height: string | undefined): PlayerSize | undefined {
  const w = num(width);
  const h = num(height);
  return w || h ? { ...(w ? { width: w } : {}), ...(h ? { height: h } : {}) } : undefined;
}

/** The page's `twitter:player` card player, with its size. */
function twitterPlayer(page: PageData): { src: string; size?: PlayerSize } | undefined {
  const value = (key: string) => page.metas.find((m) => m.name === key || m.property === key)?.content;
  const src = value('twitter:player');
  return src ? { src, size: sizeOf(value('twitter:player:width'), value('twitter:player:height')) } : undefined;
}

/** The page's first `og:video` whose type is text/html (a player page, not a file), with its size. */
function ogVideoPlayer(page: PageData): { src: string; size?: PlayerSize } | undefined {
  type Video = { src?: string; type?: string; width?: string; height?: string };
  const videos: Video[] = [];
  for (const m of page.metas) {
    const key = m.property ?? m.name;
    if (!key?.startsWith('og:video')) continue;
    // og:video (or og:video:url) starts a video; its structured properties follow it.
    if (key === 'og:video' || key === 'og:video:url') videos.push({ src: m.content });
    const current = videos.at(-1);
    if (!current) continue;
    if (key === 'og:video:secure_url') current.src = m.content;
    else if (key === 'og:video:type') current.type = m.content.trim().toLowerCase();
    else if (key === 'og:video:width') current.width = m.content;
    else if (key === 'og:video:height') current.height = m.content;
  }
  const html = videos.find((v) => v.src && v.type === 'text/html');
  return html?.src ? { src: html.src, size: sizeOf(html.width, html.height) } : undefined;
}

/** A built-in provider's player for `url`, made from the address and the page. */
export function linkPlayer(url: string, ctx: LinkContext): Player | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  for (const provider of PROVIDERS) {
    const player = provider.fromLink?.(u, ctx);
    if (player) return playerHostAllowed(ctx.config, player.url) ? player : undefined;
  }
  return undefined;
}

/**
 * The players of a link that answered with a page, without any fetch; undefined when the link
 * may have none (LINKPREVIEW_EMBEDS=off, a `no-embed` host rule on the link or where it led).
 */
export function pagePlayers(input: { link: string; finalUrl: string; page: PageData; base: string }, config: EmbedConfig): PagePlayers | undefined {
  const { link, finalUrl, page, base } = input;
  if (!embedsFor(config, [link, finalUrl])) return undefined;
  const ctx: LinkContext = { config, page };
  const direct = linkPlayer(finalUrl, ctx) ?? (link === finalUrl ? undefined : linkPlayer(link, ctx));
  let meta: Player | undefined;
  for (const named of [twitterPlayer(page), ogVideoPlayer(page)]) {
    meta ??= named && playerAt(named.src, { type: 'video', size: named.size, ownSite: finalUrl }, ctx, base);
  }
  return { ...(direct ? { direct } : {}), ...(meta ? { meta } : {}) };
}
