import { createHash, timingSafeEqual } from 'node:crypto';
import { errorFields, type Log } from '../log.js';
import type { KeyHashSource, KeyStore } from '../ports.js';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Keys are held as SHA-256 digests (plain keys are hashed on load), and a presented key is
 * hashed and compared with every stored digest with timingSafeEqual, without an early exit:
 * the time taken depends neither on the key's length nor on how much of it matched.
 *
 * With a `source` (an SSM parameter or a secret, lib/adapters/aws/key-hash-source.ts) its current
 * digests are added to the configured ones at each check; the source caches them.
 */
export function createKeyStore(options: { apiKeys: string[]; apiKeyHashes: string[] }, source?: KeyHashSource): KeyStore {
  const fixed = [...options.apiKeys.map((k) => createHash('sha256').update(k, 'utf8').digest()), ...options.apiKeyHashes.map((h) => Buffer.from(h, 'hex'))];
  let fetched: { hashes: readonly string[]; digests: Buffer[] } | undefined;
  const digests = async (): Promise<Buffer[]> => {
    if (!source) return fixed;
    const hashes = await source.hashes();
    if (fetched?.hashes !== hashes) fetched = { hashes, digests: hashes.map((h) => Buffer.from(h, 'hex')) };
    return fixed.length ? [...fixed, ...fetched.digests] : fetched.digests;
  };
  return {
    async verify(presentedKey: string): Promise<boolean> {
      const current = await digests();
      const presented = createHash('sha256').update(presentedKey, 'utf8').digest();
      let match = false;
      for (const d of current) match = timingSafeEqual(presented, d) || match;
      return match;
    },
  };
}

/**
 * The digests in a parameter's or a secret's value: a JSON array of strings, or digests separated
 * by commas or white space (an SSM StringList's value is comma-separated). Anything that is not a
 * SHA-256 hex digest is counted in `invalid` and never used (a plain key pasted by mistake).
 */
export function parseKeyHashes(value: string): { hashes: string[]; invalid: number } {
  const text = value.trim();
  let items: unknown[];
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      items = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      return { hashes: [], invalid: 1 };
    }
  } else {
    items = text.split(/[\s,]+/).filter(Boolean);
  }
  const hashes: string[] = [];
  let invalid = 0;
  for (const item of items) {
    const h = typeof item === 'string' ? item.trim().toLowerCase() : '';
    if (SHA256_HEX.test(h)) hashes.push(h);
    else invalid++;
  }
  return { hashes, invalid };
}

export interface ReadKeyHashesOptions {
  /** What the value is, for the logs (`SSM parameter /linklens/keys`); the value itself is never logged. */
  name: string;
  log: Log;
  /** After a failed read, the last digests are kept this long before the next read (default 60 s). */
  retryAfterMs?: number;
  now?: () => number;
}

/**
 * A KeyHashSource over `read`, which returns the stored value (cached by the reader, e.g.
 * Powertools' parameter providers). A failed read keeps the last digests for `retryAfterMs`
 * (logged as an error), so an outage of the store neither refuses every caller nor adds a
 * retried call to each request; with no digests yet the failure is thrown (a 500).
 */
export function keyHashSource(read: () => Promise<string | Uint8Array | undefined>, options: ReadKeyHashesOptions): KeyHashSource {
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 60_000;
  let last: { value: string; hashes: readonly string[] } | undefined;
  let failedUntil = 0;
  return {
    async hashes(): Promise<readonly string[]> {
      if (last && now() < failedUntil) return last.hashes;
      let raw: string | Uint8Array | undefined;
      try {
        raw = await read();
      } catch (err) {
        if (!last) throw err;
        failedUntil = now() + retryAfterMs;
        options.log.error('api keys: read failed, the last keys stay in use', { source: options.name, ...errorFields(err) });
        return last.hashes;
      }
      const value = raw === undefined ? '' : typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
      if (last?.value === value) return last.hashes;
      const { hashes, invalid } = parseKeyHashes(value);
      if (invalid > 0)
        options.log.warn('api keys: entries that are not SHA-256 hex digests are ignored', { source: options.name, invalid, keys: hashes.length });
      last = { value, hashes };
      return hashes;
    },
  };
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The one bearer check of the HTTP API (POST / and the deep GET /status): undefined when the
 * `Authorization` header carries a configured key, else the message of the 401.
 */
export async function bearerRejection(keys: KeyStore, authorization: string | undefined): Promise<string | undefined> {
  const m = BEARER.exec(authorization ?? '');
  if (m !== null && (await keys.verify(m[1]))) return undefined;
  return m ? 'The API key is not valid.' : 'A valid "Authorization: Bearer <key>" header is required.';
}
