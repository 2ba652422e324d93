/**
 * The `subfetch` phase: the two sub-resources a page may name, fetched through the guarded
 * fetcher from a loopback fixture: the oEmbed answer and the web app manifest, each alone and
 * both at once (medians). With BENCH_CORPUS=<dir> (a corpus folder as test/bench/corpus.ts
 * reads it), it also counts the pages that name each, and those whose oEmbed the preview still
 * fetches (a field of the record it could fill has no value from a higher-ranked rule).
 * `npm run bench -- subfetch`.
 */
import { fetchManifest, oembedToFetch, pageFields, readPage } from '../../lib/extract/extract-page.js';
import { fetchOEmbed } from '../../lib/extract/oembed-source.js';
import { createFetcher } from '../../lib/fetch/safe-fetch.js';
import { recordOEmbedFields } from '../../lib/preview/record.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { median, timeRuns } from './bench.js';
import { corpusPages } from './corpus.js';

function corpusCounts(dir: string): string {
  const pages = corpusPages(dir);
  let oembed = 0;
  let needed = 0;
  let manifest = 0;
  for (const p of pages) {
    const read = readPage(p.res, p.contentType);
    const found = pageFields(read);
    if (read.oembedUrl) oembed++;
    if (oembedToFetch(read, found, recordOEmbedFields(found))) needed++;
    if (read.manifestUrl) manifest++;
  }
  return `${pages.length} pages of ${dir}: ${oembed} name an oEmbed endpoint, ${needed} of them still need it for the record; ${manifest} name a manifest (fetched with the icon job)\n`;
}

export async function run(): Promise<void> {
  const site = await startFixtureServer({
    '/oembed.json': {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'video',
        version: '1.0',
        title: 'A clip',
        provider_name: 'Clips',
        thumbnail_url: 'https://clips.example/t.jpg',
        thumbnail_width: 480,
        thumbnail_height: 360,
      }),
    },
    '/manifest.json': {
      headers: { 'content-type': 'application/manifest+json' },
      body: JSON.stringify({
        icons: [
          { src: '/icon-192.png', sizes: '192x192' },
          { src: '/icon-512.png', sizes: '512x512' },
        ],
        background_color: '#ffffff',
      }),
    },
  });
  const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-bench', maxRedirects: 5 });
  const runs = Number(process.env.BENCH_RUNS ?? 50);
  try {
    const oembed = await timeRuns(runs, () => fetchOEmbed(fetch, site.url('/oembed.json')), 3);
    const manifest = await timeRuns(runs, () => fetchManifest(fetch, site.url('/manifest.json')), 3);
    const both = await timeRuns(runs, () => Promise.all([fetchOEmbed(fetch, site.url('/oembed.json')), fetchManifest(fetch, site.url('/manifest.json'))]), 3);
    process.stdout.write(
      `loopback, ${runs} runs: oEmbed median ${median(oembed).toFixed(2)} ms, manifest median ${median(manifest).toFixed(2)} ms, both at once median ${median(both).toFixed(2)} ms\n`,
    );
  } finally {
    await site.close();
  }
  if (process.env.BENCH_CORPUS) process.stdout.write(corpusCounts(process.env.BENCH_CORPUS));
}
