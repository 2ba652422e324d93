/**
 * The pipeline's extract step (lib/preview.ts): the body classified, and a PAGE read by the field
 * rules (a platform's page with the platform's rules in front), with no sub-fetch and no job.
 */
import type { LinkRecord, LinkType } from '../contract/link.js';
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
  /** A PAGE: the page read and its fields as found without any sub-fetch. */
  page?: { read: PageRead; found: PageFields };
}

/** 2. Classify the body, and read a PAGE's fields by the rules. */
export async function extract(res: FetchResult, answered: LinkRecord, platforms: PlatformRegistry): Promise<Extraction> {
  const contentType = header(res.headers, 'content-type');
  const { type } = await classify(contentType, res.body);
  const typed: LinkRecord = { ...answered, type: type as LinkType };
  if (type !== 'PAGE') return { record: typed, hints: { fileName: fileNameFromDisposition(header(res.headers, 'content-disposition')) } };
  // A platform page read generically (its own source failed) gets the platform's page rules in front, its name first.
  const platform = platforms.match(res.finalUrl)?.platform;
  const read = readPage(res, contentType, platform ? platformPageRules(platform) : undefined);
  const found = pageFields(read);
  return { record: pageRecord(typed, read, found), hints: pageHints(found), page: { read, found } };
}
