/**
 * GET /oembed inside the preview handler (lib/http/preview-handler.ts): the route's key, its
 * query as a preview request, and its answers. The preview itself is POST /'s, step for step.
 *
 * The key: the `Authorization: Bearer` header, as on POST /; when the request has none, the `key`
 * query parameter, for oEmbed consumers that cannot send a header. A header that is present
 * decides, blank too (a 401, never the query's key). POST / never reads the query.
 * Why a query key is acceptable here and what keeps it out of logs and caches: docs/api.md#the-key-of-an-oembed-consumer.
 */
import type { LinkRecord } from '../contract/link.js';
import { type PreviewRequest, validatePreviewRequest } from '../contract/request.js';
import { LinkPreviewError } from '../errors.js';
import { oembedAnswer } from '../oembed/answer.js';
import { type OEmbedBounds, parseOEmbedQuery, queryKey } from '../oembed/request.js';
import type { HttpRequestInfo } from './event.js';

/** The route's path (after the stage prefix, as routePath gives it). */
export const OEMBED_PATH = '/oembed';

/** The credential of a GET /oembed: its Authorization header when it has one (blank included), else its `key` parameter as a bearer key. */
export function oembedAuthorization(info: HttpRequestInfo): string | undefined {
  const header = info.headers.authorization;
  if (header !== undefined) return header;
  const key = queryKey(info.query);
  return key === undefined ? undefined : `Bearer ${key}`;
}

/** The route's query as the preview request of its `url` (validated as POST / validates `link`), and its bounds. */
export function oembedRequest(info: HttpRequestInfo): { input: PreviewRequest; bounds: OEmbedBounds } {
  const { url, maxwidth, maxheight } = parseOEmbedQuery(info.query);
  let input: PreviewRequest;
  try {
    input = validatePreviewRequest({ link: url });
  } catch (err) {
    if (err instanceof LinkPreviewError)
      throw new LinkPreviewError(err.status, err.errorCode, err.message.replace(/^link\b/, 'url'), { details: { field: 'url' } });
    throw err;
  }
  return { input, bounds: { maxwidth, maxheight } };
}

/**
 * An error as this route answers it: a url it cannot give a response for (not an http(s) URL,
 * refused by the guard or a host rule: 400 on POST /) is 404, as the specification has it.
 * Everything else keeps its status (a missing url 400, a wrong key 401, a format 501).
 */
export function oembedError(err: LinkPreviewError): LinkPreviewError {
  if (err.status !== 400 || (err.errorCode !== 'LINK_INVALID' && err.errorCode !== 'LINK_NOT_ALLOWED')) return err;
  return new LinkPreviewError(404, err.errorCode, err.message, { details: err.details, cause: err });
}

/** The answer to a preview: the oEmbed response of an ok record, else 404 LINK_UNAVAILABLE. */
export function oembedOutcome(
  record: LinkRecord,
  bounds: OEmbedBounds,
): { status: 200; body: Record<string, unknown> } | { status: 404; error: LinkPreviewError } {
  if (!record.ok)
    return {
      status: 404,
      error: new LinkPreviewError(404, 'LINK_UNAVAILABLE', 'The link could not be previewed, so it has no oEmbed response.', {
        details: { status: record.status },
      }),
    };
  return { status: 200, body: { ...oembedAnswer(record, bounds) } };
}
