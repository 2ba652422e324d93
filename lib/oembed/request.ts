/**
 * The query of GET /oembed (oEmbed 1.0, https://oembed.com/ section 2.2): `url`, `maxwidth`,
 * `maxheight` and `format`, plus `key`, the API key of a consumer that cannot send a header.
 * Other parameters (WordPress adds `dnt=1`) are ignored.
 */
import { BadRequestError, LinkPreviewError } from '../errors.js';

/**
 * The largest maxwidth and maxheight taken (CSS pixels): a larger one is read as this one. It is a
 * bound, so an answer within it is within the consumer's too; no player or image is larger.
 */
export const MAX_BOUND = 4000;

export interface OEmbedBounds {
  /** The widest the answer's player, photo and thumbnail may be (CSS pixels). */
  maxwidth?: number;
  /** The tallest they may be. */
  maxheight?: number;
}

export interface OEmbedQuery extends OEmbedBounds {
  /** The `url` parameter as given, not yet validated as a link. */
  url: string;
}

/** The one format answered; the specification's answer to any other is 501 Not Implemented. */
const FORMAT = 'json';

/**
 * The query read: a format other than json is 501 FORMAT_NOT_IMPLEMENTED, a missing or blank url
 * 400 LINK_REQUIRED, a maxwidth or maxheight that is not a positive integer 400; one above
 * MAX_BOUND is clamped to it.
 */
export function parseOEmbedQuery(query: string): OEmbedQuery {
  const params = new URLSearchParams(query);
  const format = params.get('format');
  if (format !== null && format.trim().toLowerCase() !== FORMAT)
    throw new LinkPreviewError(501, 'FORMAT_NOT_IMPLEMENTED', 'Only format=json is answered.', { details: { field: 'format' } });
  const url = params.get('url') ?? '';
  if (url.trim() === '') throw new BadRequestError('LINK_REQUIRED', 'The url parameter is required.', { field: 'url' });
  return { url, maxwidth: dimension(params, 'maxwidth'), maxheight: dimension(params, 'maxheight') };
}

function dimension(params: URLSearchParams, name: 'maxwidth' | 'maxheight'): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !(value >= 1))
    throw new BadRequestError(`${name.toUpperCase()}_INVALID`, `${name} must be a positive integer.`, { field: name });
  return Math.min(value, MAX_BOUND);
}

/** The `key` parameter (GET /oembed only: POST / never reads the query). */
export function queryKey(query: string): string | undefined {
  const key = new URLSearchParams(query).get('key');
  return key === null || key === '' ? undefined : key;
}
