/**
 * The pipeline's extract step (lib/preview/preview-link.ts): the body classified, and a PAGE read by the field
 * rules (a platform's page with the platform's rules in front), with no sub-fetch and no job. The
 * record gets the player the link and its body give without a fetch (lib/embed/): a page's
 * (a built-in provider's, else its player metas'), a media file's native element without its
 * poster yet, so a record cut off from here on keeps it.
 */
import type { LinkRecord, LinkType } from '../contract/link.js';
import { embedOf } from '../embed/html.js';
import { type PagePlayers, pagePlayers } from '../embed/page.js';
import { fileEmbed } from '../embed/record.js';
import type { EmbedConfig } from '../embed/types.js';
import { classify } from '../extract/classify.js';
import type { DefaultHints } from '../extract/defaults.js';
import { type PageFields, type PageRead, pageFields, readPage } from '../extract/extract-page.js';
import { fileNameFromDisposition, header } from '../fetch/headers.js';
import type { FetchResult } from '../fetch/types.js';
import { platformPageRules } from '../platforms/card.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { pageHints, pageRecord } from './record.js';

/** What the extract step found in the body. */
export interface Extraction {
  /** The record as far as the body tells (the cut-off record until the jobs add to it). */
  record: LinkRecord;
  hints: DefaultHints;
  /** A PAGE: the page read, its fields as found without any sub-fetch, and the players it gives without one. */
  page?: { read: PageRead; found: PageFields; players?: PagePlayers };
}

/** 2. Classify the body, and read a PAGE's fields by the rules. */
export async function extract(res: FetchResult, answered: LinkRecord, platforms: PlatformRegistry, config: EmbedConfig): Promise<Extraction> {
  const contentType = header(res.headers, 'content-type');
  const { type } = await classify(contentType, res.body);
  const typed: LinkRecord = { ...answered, type: type as LinkType };
  if (type !== 'PAGE') {
    const embed = fileEmbed(typed, res.finalUrl, config);
    return { record: embed ? { ...typed, embed } : typed, hints: { fileName: fileNameFromDisposition(header(res.headers, 'content-disposition')) } };
  }
  // A platform page read generically (its own source failed) gets the platform's page rules in front, its name first.
  const platform = platforms.match(res.finalUrl)?.platform;
  const read = readPage(res, contentType, platform ? platformPageRules(platform) : undefined);
  const found = pageFields(read);
  const record = pageRecord(typed, read, found);
  // A wall, or a page that did not answer 2xx, has no player.
  const players =
    !read.wall && record.ok ? pagePlayers({ link: answered.url, finalUrl: res.finalUrl, page: read.page, base: read.ctx.base }, config) : undefined;
  const player = players?.direct ?? players?.meta;
  return { record: player ? { ...record, embed: embedOf(player, record.title) } : record, hints: pageHints(found), page: { read, found, players } };
}
