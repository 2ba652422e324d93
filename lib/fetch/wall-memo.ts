/**
 * The walled-host memo: a host that answered a direct request with a wall is remembered for
 * LINKPREVIEW_PROXY_MEMO_TTL_MS under `jobs/proxy-walls/` in the blob store (like the other memos,
 * lib/jobs/memo.ts), so the next preview of it, in any process, goes to the proxy first: one round
 * trip instead of two. Each process keeps what it read for a short while, so a busy host costs
 * one blob read per process and minute, not one per request.
 */
import { memoKey, readMemo, writeMemo } from '../jobs/memo.js';
import type { BlobStore } from '../ports.js';
import type { WallMemo } from './proxy-route.js';

/** How long a process trusts a "not walled" read before asking the store again. */
const NEGATIVE_CACHE_MS = 60_000;
/** Hosts a process keeps answers for (the oldest goes first). */
const MAX_CACHED_HOSTS = 1000;

interface Remembered {
  host: string;
  wall: string;
  /** Epoch ms when the wall was seen. */
  at: number;
}

export function blobWallMemo(blobs: BlobStore, ttlMs: number, now: () => number = Date.now): WallMemo {
  /** host -> until when the cached answer holds, and the answer. */
  const cache = new Map<string, { until: number; walled: boolean }>();
  const keep = (host: string, walled: boolean, until: number) => {
    cache.delete(host);
    if (cache.size >= MAX_CACHED_HOSTS) cache.delete(cache.keys().next().value as string);
    cache.set(host, { until, walled });
  };
  return {
    async isWalled(host) {
      if (ttlMs <= 0) return false;
      const t = now();
      const cached = cache.get(host);
      if (cached && cached.until > t) return cached.walled;
      const memo = (await readMemo(blobs, memoKey('proxy-walls', host))) as Partial<Remembered> | undefined;
      const until = typeof memo?.at === 'number' && memo.host === host ? memo.at + ttlMs : 0;
      const walled = until > t;
      keep(host, walled, walled ? until : t + Math.min(NEGATIVE_CACHE_MS, ttlMs));
      return walled;
    },
    async remember(host, wall) {
      if (ttlMs <= 0) return;
      const at = now();
      keep(host, true, at + ttlMs);
      await writeMemo(blobs, memoKey('proxy-walls', host), { host, wall, at } satisfies Remembered);
    },
  };
}
