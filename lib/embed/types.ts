/**
 * The embedded players' types (docs/embeds.md): a Player is the record's `embed` before its
 * `html`, which lib/embed/html.ts builds from it, never from a provider's markup; a provider is one
 * entry of the built-in list (lib/embed/players/); the embed context is what the settings and
 * the host rules say. This module imports only types.
 */
import type { PlayerListing } from '../client/players.js';
import type { Embed } from '../contract/link.js';
import type { CoreConfig } from '../core-settings.js';
import type { PageData } from '../extract/page-data.js';

/** The record's `embed` without its `html`: the player's kind, its https address, its size and its name. */
export type Player = Omit<Embed, 'html'>;

/** What a player's size is made of: a fixed box, a fixed height (width 100%), or an aspect ratio (width 100%). */
export type PlayerSize = Pick<Player, 'width' | 'height' | 'aspectRatio'>;

/** The settings a player depends on: on or off, the operator's origins, Twitch's parents, Dailymotion's player, the host rules. */
export type EmbedConfig = Pick<CoreConfig, 'embeds' | 'embedOrigins' | 'embedParents' | 'dailymotionPlayer' | 'hostRules' | 'proxyHosts' | 'renderHosts'>;

/** What a provider may read to find a link's player without a fetch: the page (when the link is one) and the settings. */
export interface LinkContext {
  config: EmbedConfig;
  /** The link's page, parsed (lib/extract/page-data.ts), when the link answered with one. */
  page?: PageData;
}

/**
 * A provider of the built-in list (lib/embed/players/): its entry of the list the client shares
 * (lib/client/players.ts: its name, the kind of its players, where they live, its size bounds),
 * and how to find one for a link. Everything here is pure: no fetch.
 */
export interface PlayerProvider extends PlayerListing {
  /** The player of a link of the provider's own site (and its page), from the address and the page alone. */
  fromLink?(url: URL, ctx: LinkContext): Player | undefined;
  /**
   * A player address of the provider's found elsewhere (oEmbed, a page's meta), made the one to
   * use (YouTube's on its no-cookie host, Twitch's with the configured parents), with its size;
   * undefined drops it. Default: kept as it is, the size the source gave.
   */
  fromAddress?(src: URL, ctx: LinkContext): { url: URL; size?: PlayerSize } | undefined;
}
