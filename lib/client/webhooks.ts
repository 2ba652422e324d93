/**
 * Verifying linklens's webhooks (a batch's `preview.completed` and `batch.completed`), signed per
 * the Standard Webhooks specification: `webhook-signature` holds `v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<raw body>` with the secret's bytes (the base64 after
 * `whsec_`), one per secret the operator has set. Web Crypto only (Node 20+, browsers, edge
 * runtimes): no module is loaded. test/client/webhooks.test.ts checks it against the
 * `standardwebhooks` package, both ways.
 */
import type { BatchCompletedEvent, PreviewCompletedEvent } from '../contract/link.js';

/** A webhook linklens sends: an item finished, or the whole batch. */
export type WebhookEvent = PreviewCompletedEvent | BatchCompletedEvent;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** How far the timestamp may be from now, in seconds (Standard Webhooks' 5 minutes: a replay older than that is refused). */
const TOLERANCE_S = 5 * 60;

const header = (headers: Record<string, string | string[] | undefined> | Headers, name: string): string => {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? '';
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(' ') : (v ?? '');
  return '';
};

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes: ArrayBuffer): string {
  let bin = '';
  for (const b of new Uint8Array(bytes)) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Compares without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

/**
 * The event of a delivery whose signature is good, made with `secret` (or one of `secret`, while
 * the operator rotates); throws WebhookVerificationError otherwise. `body` is the raw body as
 * received (not parsed and serialized again); `headers` a Headers or a plain object (Node's
 * `req.headers`). `now` (ms) is for tests.
 */
export async function verifyWebhook(
  headers: Record<string, string | string[] | undefined> | Headers,
  body: string,
  secret: string | readonly string[],
  now: number = Date.now(),
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = /^\d+$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (Number.isNaN(seconds)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  if (Math.abs(now / 1000 - seconds) > TOLERANCE_S) throw new WebhookVerificationError('The webhook-timestamp is more than 5 minutes off');
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const given = signatures.split(' ').flatMap((s) => (s.startsWith('v1,') ? [s.slice(3)] : []));
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const key = await crypto.subtle.importKey('raw', fromBase64(s.replace(/^whsec_/, '')), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const expected = toBase64(await crypto.subtle.sign('HMAC', key, signed));
    if (given.some((g) => sameText(g, expected))) return JSON.parse(body) as WebhookEvent;
  }
  throw new WebhookVerificationError('No matching signature found');
}
