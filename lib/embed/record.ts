/**
 * The record's `embed` (docs/embeds.md), as the pipeline adds it: a platform's player
 * (lib/platforms/run.ts), a page's (./pipeline.ts finds it), a media file's native element. Each
 * passes the gate first: embeds on (LINKPREVIEW_EMBEDS), no `no-embed` host rule on the link or
 * where it led, nor `no-embed`/`deny` on the player's own host.
 */
import type { Embed, LinkRecord } from '../contract/link.js';
import { domainOf } from '../ids.js';
import { embedsFor, httpsAddress, playerHostAllowed } from './address.js';
import { embedOf, nativeEmbedOf } from './html.js';
import type { EmbedConfig, Player } from './types.js';

/** The record's embed for `player`, titled with the record's title; undefined when the gate says no. */
export function gatedEmbed(player: Player | undefined, title: string | undefined, urls: readonly string[], config: EmbedConfig): Embed | undefined {
  if (!player || !embedsFor(config, urls) || !playerHostAllowed(config, player.url)) return undefined;
  return embedOf(player, title);
}

/**
 * A VIDEO or AUDIO file link's native element: `<video>` (the hosted image as its poster) or
 * `<audio>`, with the file's https address; none when the file cannot be had over https (an http
 * address on a port of its own), the link did not answer 2xx, or the gate says no.
 */
export function fileEmbed(record: LinkRecord, fileUrl: string, config: EmbedConfig): Embed | undefined {
  if ((record.type !== 'VIDEO' && record.type !== 'AUDIO') || !record.ok) return undefined;
  const src = httpsAddress(fileUrl);
  if (!src || !embedsFor(config, [record.url, fileUrl]) || !playerHostAllowed(config, src)) return undefined;
  const video = record.type === 'VIDEO';
  const { width, height } = record.video ?? {};
  const size = video && width && height ? { width, height, aspectRatio: width / height } : {};
  const player: Player = { type: video ? 'video' : 'audio', url: src.href, provider: domainOf(src.href), ...size };
  const image = video ? record.image : undefined;
  const poster = image?.large?.url ?? image?.original?.url;
  return nativeEmbedOf(player, poster);
}
