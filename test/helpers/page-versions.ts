/**
 * A page whose versions a record named: its memo written as the preview writes it (the three
 * version addresses, the job's deadline `until`), nothing stored at those addresses yet. For the
 * tests of what serves them (lib/page/page-versions.ts `awaitVersion`, functions/version-origin.ts).
 */
import { pageMemoKey, rememberPage } from '../../lib/page/page-memo';
import { pageVersionKeys } from '../../lib/page/page-versions';
import type { BlobStore } from '../../lib/ports';

export async function rememberNamedVersions(blobs: BlobStore, name: string, until: number) {
  const page = { url: `https://example.com/${name}`, contentType: 'text/html', bytes: Buffer.from(`<p>${name}</p>`) };
  const keys = pageVersionKeys(page);
  const memoKey = pageMemoKey(page);
  const content = {
    words: 1,
    cjkChars: 0,
    article: true,
    htmlUrl: blobs.publicUrl(keys.html),
    markdownUrl: blobs.publicUrl(keys.markdown),
    rawTextUrl: blobs.publicUrl(keys.text),
  };
  const written = await rememberPage(blobs, memoKey, { content, versionsUntil: until });
  if (written !== 'written') throw new Error(`the page memo was not written: ${written}`);
  return { keys, memoKey };
}
