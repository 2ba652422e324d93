/**
 * The request body (LinkPreviewRequestBody of openapi.yaml) and its validation with valibot. Each
 * field has its own schema so a failure names the field and the problem with its own errorCode.
 * The types come from the schemas, checked against the document's generated type (see PreviewRequest).
 */
import * as v from 'valibot';
import { BadRequestError } from '../errors.js';
import type { LinkPreviewRequestBody } from './openapi.gen.js';

export const MAX_LINK_LENGTH = 4096;

const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** `scheme:` with something other than a port after it (mailto:x, javascript:..., data:...). */
const OPAQUE_SCHEME = /^[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))/i;

/** Trims the link and takes a bare `example.com/x` (or `//example.com`) as https. */
export function normalizeLinkInput(raw: string): string {
  const link = raw.trim();
  if (link.startsWith('//')) return `https:${link}`;
  if (HAS_SCHEME.test(link) || OPAQUE_SCHEME.test(link)) return link;
  return `https://${link}`;
}

const LinkSchema = v.pipe(
  v.string('LINK_INVALID:link must be a string'),
  v.trim(),
  v.minLength(1, 'LINK_REQUIRED:link is required'),
  v.maxLength(MAX_LINK_LENGTH, `LINK_INVALID:link must be at most ${MAX_LINK_LENGTH} characters`),
  v.check((s) => !/[\s\u0000-\u001f]/.test(s), 'LINK_INVALID:link must not contain whitespace or control characters'),
  v.transform(normalizeLinkInput),
  v.check((s) => /^https?:/i.test(s), 'LINK_INVALID:link must be an http or https URL'),
  v.url('LINK_INVALID:link is not a valid URL'),
  v.check((s) => {
    const u = new URL(s);
    return u.hostname.length > 0 && !u.hostname.startsWith('.') && !u.hostname.includes('..');
  }, 'LINK_INVALID:link has no valid host'),
  v.transform((s) => new URL(s).href),
);

const SourceSchema = v.optional(v.picklist(['API', 'WEB'], 'SOURCE_INVALID:source must be "API" or "WEB"'), 'API');

const flag = (field: string, code: string) =>
  v.optional(
    v.pipe(
      v.union([v.boolean(), v.picklist(['true', 'false'])], `${code}:${field} must be "true" or "false"`),
      v.transform((x) => x === true || x === 'true'),
    ),
    true,
  );

const BodySchema = v.object({
  link: v.optional(v.unknown()),
  source: SourceSchema,
  forceNewSnapshot: flag('forceNewSnapshot', 'FORCE_NEW_SNAPSHOT_INVALID'),
  forceNewSnapshotRecursive: flag('forceNewSnapshotRecursive', 'FORCE_NEW_SNAPSHOT_RECURSIVE_INVALID'),
});

/** The body as the validator reads it (each field's input), and what it returns. */
type AcceptedBody = Flat<Omit<v.InferInput<typeof BodySchema>, 'link'> & { link: v.InferInput<typeof LinkSchema> }>;
type ValidatedBody = Flat<Omit<v.InferOutput<typeof BodySchema>, 'link'> & { link: v.InferOutput<typeof LinkSchema> }>;
type Flat<T> = { [K in keyof T]: T[K] };
type Same<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
/** T, provided each check is true: tsc fails on the alias below when one is false. */
type Checked<T, _Checks extends true[]> = T;

/**
 * The validated request: the link normalized, every default applied, the flags as booleans.
 * tsc fails here when the validator drifts from openapi.yaml: it must read exactly the
 * document's LinkPreviewRequestBody, and return that body with every field set.
 */
export type PreviewRequest = Checked<
  ValidatedBody,
  [Same<AcceptedBody, LinkPreviewRequestBody>, ValidatedBody extends Required<LinkPreviewRequestBody> ? true : false]
>;

function fail(message: string, field: string): never {
  const i = message.indexOf(':');
  const code = i > 0 ? message.slice(0, i) : 'BODY_INVALID';
  throw new BadRequestError(code, i > 0 ? message.slice(i + 1) : message, { field });
}

/** Validates a parsed body (any JSON value) into a PreviewRequest, or throws a 400. */
export function validatePreviewRequest(body: unknown): PreviewRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestError('BODY_INVALID', 'The request body must be an object with a "link" field.');
  }
  const fields = v.safeParse(BodySchema, body, { abortPipeEarly: true });
  if (!fields.success) {
    const issue = fields.issues[0];
    fail(issue.message, String(issue.path?.[0]?.key ?? 'body'));
  }
  const rawLink = (body as Record<string, unknown>).link;
  if (rawLink === undefined || rawLink === null) {
    throw new BadRequestError('LINK_REQUIRED', 'link is required', { field: 'link' });
  }
  const link = v.safeParse(LinkSchema, rawLink, { abortPipeEarly: true });
  if (!link.success) fail(link.issues[0].message, 'link');
  return {
    link: link.output,
    source: fields.output.source,
    forceNewSnapshot: fields.output.forceNewSnapshot,
    forceNewSnapshotRecursive: fields.output.forceNewSnapshotRecursive,
  };
}
