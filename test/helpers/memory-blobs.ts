/** A BlobStore in a Map, for tests that need none of a real store's behaviour (the adapters are tested against the filesystem and S3's protocol). */
import type { BlobHead, BlobStore } from '../../lib/ports';

export function memoryBlobs(base = 'http://assets.test'): BlobStore & { keys(): string[] } {
  const store = new Map<string, { body: Buffer; metadata: Record<string, string> }>();
  return {
    put: async (k, b, o) => void store.set(k, { body: Buffer.from(b), metadata: { ...o.metadata } }),
    has: async (k) => store.has(k),
    head: async (k): Promise<BlobHead | undefined> => {
      const o = store.get(k);
      return o && { metadata: { ...o.metadata } };
    },
    get: async (k) => store.get(k)?.body,
    publicUrl: (k) => `${base}/${k}`,
    list: async (prefix) => [...store.keys()].filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('/')),
    delete: async (k) => void store.delete(k),
    keys: () => [...store.keys()],
  };
}
