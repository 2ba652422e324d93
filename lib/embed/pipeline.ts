/**
 * A page's player, as the preview's jobs step settles it (lib/preview/preview-link.ts), most specific first:
 * the built-in provider's player of the link (found by the extract step, no fetch), then the
 * oEmbed answer's when oEmbed was fetched for the record's fields anyway, then the page's player
 * metas. Only when none gave one is oEmbed fetched for the player alone, and only from an endpoint
 * on an allowed player site; that fetch runs beside the record's jobs and is dropped (aborted) if
 * the rest of the record is ready first, so a player never makes the record wait. A player so
 * fetched is remembered with the page's other parts (the page memo), so the next preview of the
 * same page has it without the fetch.
 */
import type { LinkRecord } from '../contract/link.js';
import type { OEmbedData } from '../extract/rules.js';
import { playerAt } from './allow.js';
import { embedOf } from './html.js';
import { oembedPlayer, oembedWorthFetching } from './oembed-player.js';
import type { PagePlayers } from './page.js';
import type { EmbedConfig, Player } from './types.js';

export interface PagePlayerSources {
  /** What the extract step found; undefined when the link may have no player (or its page is a wall). */
  found: PagePlayers | undefined;
  /** The oEmbed answer fetched for the record's fields, when it was. */
  oembed?: Promise<OEmbedData | undefined>;
  /** The page's oEmbed endpoint (advertised, or from the providers file). */
  oembedUrl?: string;
  /** A player remembered for the same page bytes (the page memo), fetched by an earlier preview. */
  remembered?: Promise<Player | undefined>;
  /** Settles once the rest of the record is ready: a fetch for the player alone is not waited for past it. */
  othersReady: Promise<unknown>;
  /** Fetches an oEmbed answer (through the preview's guarded fetcher, under its budget). */
  fetchOEmbed(url: string, signal: AbortSignal): Promise<OEmbedData | undefined>;
}

export interface PagePlayer {
  player?: Player;
  /** The player oEmbed gave when it was fetched for the player alone: the page memo keeps it. */
  fetched?: Player;
}

const LATE = Symbol('late');

/** The page's player (see the module's comment); `{}` when it has none. */
export async function pagePlayer(sources: PagePlayerSources, config: EmbedConfig): Promise<PagePlayer> {
  const { found } = sources;
  if (!found) return {};
  if (found.direct) return { player: found.direct };
  if (sources.oembed) return { player: oembedPlayer(await sources.oembed, config) ?? found.meta };
  if (found.meta) return { player: found.meta };
  const kept = await sources.remembered;
  // A remembered player passes the allow list again: the settings may have changed since.
  const remembered = kept && playerAt(kept.url, { type: kept.type, size: kept, provider: kept.provider }, { config });
  if (remembered) return { player: remembered };
  const url = sources.oembedUrl;
  if (!url || !oembedWorthFetching(url, config)) return {};
  const abort = new AbortController();
  const fetched = sources
    .fetchOEmbed(url, abort.signal)
    .then((o) => oembedPlayer(o, config))
    .catch(() => undefined);
  const first = await Promise.race([
    fetched,
    sources.othersReady.then(
      (): typeof LATE => LATE,
      (): typeof LATE => LATE,
    ),
  ]);
  if (first === LATE) {
    abort.abort();
    return {};
  }
  return first ? { player: first, fetched: first } : {};
}

/** The record with the embed of its settled player (titled with its final title), or without any. */
export function settledEmbed(record: LinkRecord, player: Player | undefined): LinkRecord {
  const { embed: _cheap, ...rest } = record;
  return player ? { ...rest, embed: embedOf(player, record.title) } : rest;
}
