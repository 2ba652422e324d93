/**
 * Classifies a fetched resource into a LinkType from its Content-Type header and its first
 * bytes (magic numbers via file-type). Bytes win over a generic or lying header, except that
 * a declared HTML/text type is kept when the bytes are plain text (no magic number).
 */
import { fileTypeFromBuffer } from 'file-type';
import type { LinkType } from '../contract/link.js';

export interface Classification {
  type: LinkType;
  /** The media type used for the decision (sniffed when the bytes said so). */
  mime: string;
}

function mimeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
}

const TEXT_MIMES = new Set([
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'text/csv',
  'text/tab-separated-values',
  'application/json',
  'application/ld+json',
  'text/json',
  'application/x-ndjson',
  'text/x-log',
]);
const DOCUMENT_MIMES = new Set(['application/pdf', 'application/x-pdf']);
const HTML_MIMES = new Set(['text/html', 'application/xhtml+xml']);

function typeFromMime(mime: string): LinkType {
  if (HTML_MIMES.has(mime)) return 'PAGE';
  if (DOCUMENT_MIMES.has(mime)) return 'DOCUMENT';
  if (mime.startsWith('image/')) return 'IMAGE';
  if (mime.startsWith('video/') || mime === 'application/vnd.apple.mpegurl' || mime === 'application/x-mpegurl') return 'VIDEO';
  if (mime.startsWith('audio/') || mime === 'application/ogg') return 'AUDIO';
  if (TEXT_MIMES.has(mime) || mime.endsWith('+json')) return 'TEXT';
  if (mime.startsWith('text/')) return 'TEXT';
  return 'UNKNOWN';
}

function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 1024))
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart()
    .toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html') || /<(head|body|meta|title)[\s>]/.test(head);
}

export async function classify(contentType: string | undefined, bytes: Uint8Array): Promise<Classification> {
  const declared = mimeOf(contentType);
  let sniffed: string | undefined;
  if (bytes.length > 0) {
    try {
      sniffed = (await fileTypeFromBuffer(bytes.subarray(0, 64 * 1024)))?.mime;
    } catch {
      sniffed = undefined;
    }
  }
  // file-type reports SVG-less XML and some containers generically; treat its answer as authoritative
  // only when it maps to a type we handle.
  if (sniffed) {
    const t = typeFromMime(sniffed);
    if (t !== 'UNKNOWN') return { type: t, mime: sniffed };
  }
  if (
    declared === 'image/svg+xml' ||
    (bytes.length && /^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<svg[\s>]/is.test(Buffer.from(bytes.subarray(0, 2048)).toString('utf8')))
  ) {
    return { type: 'IMAGE', mime: 'image/svg+xml' };
  }
  const fromHeader = typeFromMime(declared);
  if (fromHeader === 'PAGE' || fromHeader === 'TEXT') {
    // A text/plain label on an HTML document (common on misconfigured servers) is still a page.
    if (fromHeader === 'TEXT' && declared === 'text/plain' && looksLikeHtml(bytes)) return { type: 'PAGE', mime: 'text/html' };
    return { type: fromHeader, mime: declared };
  }
  if (fromHeader !== 'UNKNOWN' && !sniffed) {
    // Declared binary media with no recognisable magic (e.g. raw AAC streams, MPEG-TS): trust the header.
    return { type: fromHeader, mime: declared };
  }
  if (bytes.length && looksLikeHtml(bytes)) return { type: 'PAGE', mime: 'text/html' };
  return { type: 'UNKNOWN', mime: sniffed ?? declared };
}
