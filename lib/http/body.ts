/**
 * Request bodies: the Content-Type gate (json, multipart/form-data or text/plain, with charset
 * parameters) and the text/plain form, which may be JSON text or a bare URL. JSON and multipart
 * themselves are parsed by middy's body parsers after this gate has normalised the event.
 */
import { BadRequestError } from '../errors.js';
import { decodeWithLabel, encodingForLabel } from './encodings.js';

export type BodyKind = 'json' | 'multipart' | 'text';

export interface ContentTypeInfo {
  kind: BodyKind;
  mime: string;
  /** The declared charset as the WHATWG Encoding Standard names it (`latin1` is windows-1252). */
  charset?: string;
  boundary?: string;
}

export function parseContentType(header: string | undefined): ContentTypeInfo {
  if (!header?.trim()) {
    throw new BadRequestError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type is required: application/json, multipart/form-data or text/plain.');
  }
  const [rawMime, ...rawParams] = header.split(';');
  const mime = rawMime.trim().toLowerCase();
  const params: Record<string, string> = {};
  for (const p of rawParams) {
    const eq = p.indexOf('=');
    if (eq > 0)
      params[p.slice(0, eq).trim().toLowerCase()] = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
  }
  let kind: BodyKind | undefined;
  if (mime === 'application/json' || /^application\/[\w.-]+\+json$/.test(mime)) kind = 'json';
  else if (mime === 'multipart/form-data') kind = 'multipart';
  else if (mime === 'text/plain') kind = 'text';
  if (!kind) {
    throw new BadRequestError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${mime} is not supported: use application/json, multipart/form-data or text/plain.`, {
      contentType: mime.slice(0, 100),
    });
  }
  // A text encoding of the WHATWG Encoding Standard, by any of its labels; an empty charset is none.
  const label = params.charset?.trim() || undefined;
  const charset = label === undefined ? undefined : encodingForLabel(label);
  if (label !== undefined && charset === undefined) {
    throw new BadRequestError(
      'UNSUPPORTED_CHARSET',
      `The charset ${label.slice(0, 50)} is not supported: use a text encoding of the WHATWG Encoding Standard (utf-8, utf-16le, windows-1252, shift_jis, ...).`,
    );
  }
  if (kind === 'multipart') {
    const boundary = params.boundary;
    if (!boundary) throw new BadRequestError('BODY_INVALID', 'multipart/form-data needs a boundary parameter.');
    if (!/^[a-zA-Z0-9-]{1,70}$/.test(boundary)) {
      throw new BadRequestError('BODY_INVALID', 'The multipart boundary may only use letters, digits and "-" (at most 70).');
    }
    return { kind, mime, charset, boundary };
  }
  return { kind, mime, charset };
}

/**
 * Decodes a (possibly base64) event body to text in the declared charset (UTF-8 by default), a
 * name from parseContentType; a UTF-8 or UTF-16 byte order mark wins over it, as in the standard.
 */
export function decodeBodyText(body: string, isBase64Encoded: boolean, charset?: string): string {
  if (!isBase64Encoded) return body;
  return decodeWithLabel(Buffer.from(body, 'base64'), charset ?? 'utf-8');
}

/** A text/plain body: JSON text when it looks like JSON, else a bare URL. */
export function parseTextBody(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed) throw new BadRequestError('LINK_REQUIRED', 'link is required: send a URL or a JSON object as the text/plain body.', { field: 'link' });
  if (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('"')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      throw new BadRequestError('BODY_INVALID', 'The text/plain body looks like JSON but is malformed.');
    }
  }
  return { link: trimmed };
}
