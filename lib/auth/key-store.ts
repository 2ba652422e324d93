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
