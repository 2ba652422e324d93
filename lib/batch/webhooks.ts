/**
 * Webhooks, signed per the Standard Webhooks specification (https://www.standardwebhooks.com/)
 * with the `standardwebhooks` package: `webhook-id` (stable across retries), `webhook-timestamp`
 * (this attempt's, in seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`, one per secret, space-separated, so a receiver holding either of
 * two secrets verifies while they are rotated).
 *
 * A delivery is one POST through the guarded fetcher (the SSRF guard and the host rules apply at
 * every attempt, and its redirects are not followed): a 2xx is delivered, a 410 stops, anything
 * else (a redirect included) or no answer within 15 s is a failed attempt.
 */
import { Webhook } from 'standardwebhooks';
import { isWebhookSecret } from '../core-settings.js';
import { LinkPreviewError } from '../errors.js';
import { FetchFailure } from '../fetch/fetch-failure.js';
import type { Fetcher } from '../fetch/types.js';

/** No answer within this is a failed attempt (the issue's and Standard Webhooks' 15 s). */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** The receiver's answer is read up to this (and dropped). */
const ANSWER_BYTES = 16 * 1024;

export type WebhookType = 'preview.completed' | 'batch.completed';

/** The body of a webhook: Standard Webhooks' recommended envelope. */
export interface WebhookEvent<D = unknown> {
  type: WebhookType;
  /** When the event happened (the item or the batch finished): the same on every retry. */
  timestamp: string;
  data: D;
}

/** Signs with every secret (the first is the current one; the others still valid while rotating). */
export class WebhookSigner {
  private readonly signers: Webhook[];

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('webhooks need at least one secret (LINKPREVIEW_WEBHOOK_SECRETS)');
    this.signers = secrets.map((s) => new Webhook(s));
  }

  /** The three headers of a delivery of `body` under `id`, signed at `at`. */
  headers(id: string, at: Date, body: string): Record<string, string> {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': this.signers.map((w) => w.sign(id, at, body)).join(' '),
    };
  }
}

/** How one attempt went: `delivered` (2xx), `gone` (410), or failed with the status seen or the failure's code. */
export type AttemptResult = { outcome: 'delivered' | 'gone'; status: number } | { outcome: 'failed'; status?: number; error?: string };

export interface DeliverOptions {
  fetch: Fetcher;
  signer: WebhookSigner;
  now?: () => number;
  timeoutMs?: number;
}

/**
 * The secrets a stored value holds (AWS: the webhook secret, LINKPREVIEW_WEBHOOK_SECRET_ID):
 * comma-, space- or line-separated, each `whsec_…` or the bare base64 the CDK stack generates
 * (given `whsec_` here, as receivers are told to). Throws, naming no secret, when one is malformed.
 */
export function webhookSecretsIn(value: string): string[] {
  const secrets = value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((x) => (x.startsWith('whsec_') ? x : `whsec_${x}`));
  if (secrets.length === 0 || !secrets.every(isWebhookSecret))
    throw new Error('The webhook secret must hold whsec_ secrets (or bare base64), each of at least 24 random bytes');
  return secrets;
}

/** One attempt to deliver `event` to `url` under the stable `id`. Never throws. */
export async function deliverWebhook(url: string, id: string, event: WebhookEvent, options: DeliverOptions): Promise<AttemptResult> {
  const body = JSON.stringify(event);
  const at = new Date((options.now ?? Date.now)());
  try {
    const answer = await options.fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...options.signer.headers(id, at, body) },
      maxBytes: ANSWER_BYTES,
      onTooLarge: 'truncate',
      timeoutMs: options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      maxRedirects: 0,
    });
    if (answer.status >= 200 && answer.status < 300) return { outcome: 'delivered', status: answer.status };
    if (answer.status === 410) return { outcome: 'gone', status: answer.status };
    return { outcome: 'failed', status: answer.status };
  } catch (err) {
    if (err instanceof FetchFailure) return { outcome: 'failed', ...(err.status ? { status: err.status } : {}), error: err.code };
    if (err instanceof LinkPreviewError) return { outcome: 'failed', error: err.errorCode };
    return { outcome: 'failed', error: 'DELIVERY_FAILED' };
  }
}
