import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyStore } from '../ports.js';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Keys are held as SHA-256 digests (plain keys are hashed on load), and a presented key is
 * hashed and compared with every stored digest with timingSafeEqual, without an early exit:
 * the time taken depends neither on the key's length nor on how much of it matched.
 */
export function createKeyStore(options: { apiKeys: string[]; apiKeyHashes: string[] }): KeyStore {
  const digests = [
    ...options.apiKeys.map((k) => createHash('sha256').update(k, 'utf8').digest()),
    ...options.apiKeyHashes.map((h) => Buffer.from(h, 'hex')),
  ];
  return {
    size: digests.length,
    verify(presentedKey: string): boolean {
      const presented = createHash('sha256').update(presentedKey, 'utf8').digest();
      let match = false;
      for (const d of digests) match = timingSafeEqual(presented, d) || match;
      return match;
    },
  };
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The one bearer check of the HTTP API (POST / and the deep GET /status): undefined when the
 * `Authorization` header carries a configured key, else the message of the 401.
 */
export function bearerRejection(keys: KeyStore, authorization: string | undefined): string | undefined {
  const m = BEARER.exec(authorization ?? '');
  if (m !== null && keys.size > 0 && keys.verify(m[1])) return undefined;
  return m ? 'The API key is not valid.' : 'A valid "Authorization: Bearer <key>" header is required.';
}
