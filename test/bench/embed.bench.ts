/**
 * What the players (docs/embeds.md) cost a preview. The CPU part: finding a page's players in
 * the extract step (a built-in provider from the link, the page's player metas) and reading an
 * oEmbed answer's iframe, per page (medians). The whole preview, on a loopback fixture with real
 * host names: a page whose player is its own twitter:player (no fetch) and a page whose player
 * comes only from an oEmbed answer fetched for it (beside the image job), each previewed with
 * LINKPREVIEW_EMBEDS on and off; every preview is of new page bytes (a nonce), so the page memo
 * never answers and the jobs run each time. `npm run bench -- embed`.
 */
import { loadConfig } from '../../lib/config.js';
import { oembedPlayer } from '../../lib/embed/oembed-player.js';
import { pagePlayers } from '../../lib/embed/page.js';
import { parseOEmbed } from '../../lib/extract/oembed-source.js';
import { parsePageBytes } from '../../lib/extract/parse-page.js';
import { createFetcher } from '../../lib/fetch/safe-fetch.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { createTestHandler } from '../helpers/service.js';
import { png, virtualHosts } from '../platforms/harness.js';
import { median, timeRuns } from './bench.js';

const PAGES: [string, string, string][] = [
  [
    'a YouTube watch page',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    '<meta property="og:title" content="A video"><meta property="og:video:url" content="https://www.youtube.com/embed/dQw4w9WgXcQ"><meta property="og:video:type" content="text/html">',
  ],
  [
    'a page with its own twitter:player',
    'https://www.example-news.com/video/7',
    '<meta property="og:title" content="Fireworks"><meta name="twitter:player" content="https://player.example-news.com/embed/7"><meta name="twitter:player:width" content="640"><meta name="twitter:player:height" content="360">',
  ],
  ['an article with no player', 'https://blog.example/post', '<meta property="og:title" content="A post"><meta name="description" content="Words.">'],
];

const VIMEO_ANSWER = JSON.stringify({
  type: 'video',
  version: '1.0',
  provider_name: 'Vimeo',
  title: 'Kites',
  width: 640,
  height: 360,
  html: '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e&amp;app_id=122963" width="640" height="360" frameborder="0" allow="autoplay; fullscreen" title="Kites"></iframe>',
});

function cpu(): void {
  const config = loadConfig({});
  for (const [name, url, head] of PAGES) {
    const page = parsePageBytes(Buffer.from(`<html><head>${head}</head><body><p>${'Words. '.repeat(200)}</p></body></html>`), 'utf-8');
    const runs = 2000;
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) pagePlayers({ link: url, finalUrl: url, page, base: url }, config);
    process.stdout.write(`players of ${name}: ${(((performance.now() - t0) / runs) * 1000).toFixed(1)} µs\n`);
  }
  const answer = parseOEmbed(VIMEO_ANSWER);
  const t0 = performance.now();
  for (let i = 0; i < 2000; i++) oembedPlayer(answer, config);
  process.stdout.write(`an oEmbed answer's iframe: ${(((performance.now() - t0) / 2000) * 1000).toFixed(1)} µs\n`);
}

async function previews(): Promise<void> {
  let nonce = 0;
  const site = await startFixtureServer();
  const image = await png(1200, 630);
  const page = (head: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<html><head>${head}<meta property="og:image" content="https://img.example-news.com/og.png"></head><body><p>${'Words of the page. '.repeat(80)}</p><!-- ${nonce++} --></body></html>`,
    );
  };
  site.route('/www.example-news.com/video/7', page(PAGES[1][2]));
  site.route(
    '/www.example-talks.com/watch',
    page(
      '<meta property="og:title" content="A talk"><meta name="description" content="About kites."><link rel="alternate" type="application/json+oembed" href="https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F76979871">',
    ),
  );
  site.route('/vimeo.com/api/oembed.json', { headers: { 'content-type': 'application/json' }, body: VIMEO_ANSWER });
  site.route('/img.example-news.com/og.png', { headers: { 'content-type': 'image/png' }, body: image });
  const fetch = virtualHosts(createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: 'linklens-bench', maxRedirects: 5 }), site.origin);
  try {
    for (const [name, link] of [
      ['own twitter:player (no fetch)', 'https://www.example-news.com/video/7'],
      ['oEmbed fetched for the player', 'https://www.example-talks.com/watch'],
    ]) {
      for (const embeds of ['off', 'on', 'off', 'on'] as const) {
        const svc = createTestHandler({ fetch, config: { embeds, screenshots: 'off' } });
        let embedded = 0;
        const times = await timeRuns(
          15,
          async () => {
            const r = await svc.post(JSON.stringify({ link }));
            if (r.json?.embed) embedded++;
          },
          2,
        );
        svc.cleanup();
        process.stdout.write(`${name}, embeds ${embeds}: preview p50 ${median(times).toFixed(1)} ms (${embedded}/17 with a player)\n`);
      }
    }
  } finally {
    await site.close();
  }
}

export async function run(): Promise<void> {
  cpu();
  await previews();
}
