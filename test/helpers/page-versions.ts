/**
 * The page versions' tests' helpers: a preview through the local server's handler, a GET of an
 * address, every asset address of a record, a wait that assumes no time; and a page whose
 * versions a record named: its memo written as the preview writes it (that a record named them,
 * and the job's deadline `until`), nothing stored at those addresses yet, for the tests of what
 * serves them (lib/page/page-versions.ts `awaitVersion`, functions/version-origin.ts).
 */
import { pageDigest, pageMemoKey, rememberPage } from '../../lib/page/page-memo';
import { pageVersionKeys } from '../../lib/page/page-versions';
import type { BlobStore } from '../../lib/ports';
import { previewOn } from './service';

/** A local server (startTestServer's): its URL and key. */
type Server = { url: string; apiKey: string };

/** Every address of a record on the server's /assets/ (images, icon, versions), wherever it is in the record. */
export function assetUrls(record: unknown, server: Server): string[] {
  const found = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === 'string' && v.startsWith(`${server.url}/assets/`)) found.add(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(record);
  return [...found].sort();
}

/** A preview through the local server's handler (test/helpers/service.ts previewOn). */
export const preview = previewOn;

export async function get(url: string, method = 'GET'): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const res = await fetch(url, { method });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/** Until `check` holds, looking again after each turn of the event loop (no time is assumed). */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

export async function rememberNamedVersions(blobs: BlobStore, name: string, until: number) {
  const page = { url: `https://example.com/${name}`, contentType: 'text/html', bytes: Buffer.from(`<p>${name}</p>`) };
  const keys = pageVersionKeys(page);
  const memoKey = pageMemoKey(page);
  const written = await rememberPage(blobs, memoKey, { versionsUntil: until });
  if (written !== 'written') throw new Error(`the page memo was not written: ${written}`);
  return { keys, memoKey, digest: pageDigest(page) };
}
