/**
 * Response content negotiation and encoding. application/json is the default and the answer
 * to * / *; text/plain carries the same JSON text; multipart/form-data has one part per
 * top-level field, object fields JSON-encoded.
 */
import { randomBytes } from 'node:crypto';
import { NotAcceptableError } from '../errors.js';

const RESPONSE_TYPES = ['application/json', 'text/plain', 'multipart/form-data'] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const part of accept.split(',').slice(0, 50)) {
    const [media, ...params] = part.trim().split(';');
    const m = /^([\w.+*-]+)\/([\w.+*-]+)$/.exec(media.trim().toLowerCase());
    if (!m) continue;
    let q = 1;
    for (const p of params) {
      const qm = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (qm) q = Math.max(0, Math.min(1, Number(qm[1]) || 0));
    }
    ranges.push({ type: m[1], subtype: m[2], q });
  }
  return ranges;
}

/** Picks the response type for an Accept header, or throws 406. */
export function negotiate(accept: string | undefined): ResponseType {
  if (!accept?.trim()) return 'application/json';
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'application/json';
  let best: ResponseType | undefined;
  let bestQ = 0;
  for (const candidate of RESPONSE_TYPES) {
    const [type, subtype] = candidate.split('/');
    // The most specific matching range decides the candidate's quality.
    let q = -1;
    let specificity = -1;
    for (const r of ranges) {
      const s = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
      if (s > specificity) {
        specificity = s;
        q = r.q;
      }
    }
    if (q > bestQ) {
      best = candidate;
      bestQ = q;
    }
  }
  if (!best) throw new NotAcceptableError(accept.slice(0, 200));
  return best;
}

export interface EncodedBody {
  contentType: string;
  body: string;
}

export function encodeBody(value: Record<string, unknown>, type: ResponseType): EncodedBody {
  if (type === 'application/json') return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) };
  if (type === 'text/plain') return { contentType: 'text/plain; charset=utf-8', body: JSON.stringify(value) };
  const boundary = `linklens-${randomBytes(12).toString('hex')}`;
  const parts: string[] = [];
  for (const [name, field] of Object.entries(value)) {
    if (field === undefined) continue;
    const isObject = field !== null && typeof field === 'object';
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name.replace(/"/g, '%22')}"\r\n` +
        `Content-Type: ${isObject ? 'application/json' : 'text/plain'}; charset=utf-8\r\n\r\n` +
        `${isObject ? JSON.stringify(field) : String(field)}\r\n`,
    );
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: `${parts.join('')}--${boundary}--\r\n` };
}
