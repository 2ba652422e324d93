/**
 * Page screenshots in headless Chromium on loopback fixture pages (the article fixture, and a page
 * with six images and a stylesheet): the capture with a cold browser (launched for it) and a warm
 * one, the whole job (capture, then the four sizes hosted), and whole records with screenshots on
 * (a URL previewed the first time, then again). Each run follows half a second of
 * idle time, as between two previews. Each page shows a new number on every load, so no capture
 * is deduplicated by the image store. Medians of several runs.
 * `npm run bench -- screenshot` (skipped when no browser is installed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store.js';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner.js';
import { browserAvailable, closeBrowser } from '../../lib/browser/browser.js';
import { captureScreenshot, runScreenshotJob } from '../../lib/browser/screenshot.js';
import { loadConfig } from '../../lib/config.js';
import type { PreviewRequest } from '../../lib/contract/request.js';
import { createFetcher } from '../../lib/fetch/safe-fetch.js';
import { previewLink } from '../../lib/preview/preview-link.js';
import { PhaseTimer } from '../../lib/timing.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { articlePage } from '../page/fixtures.js';
import { median } from './bench.js';

const COLD_RUNS = 3;
const WARM_RUNS = 9;

/** Idle time before each warm run (not timed), as between two previews: the browser opens the next tab in it. */
const IDLE_MS = 500;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  await sleep(IDLE_MS);
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-bench-'));
  const config = { ...loadConfig(process.env), allowPrivateNetworks: true, screenshots: 'on' as const, dataDir };
  if (!browserAvailable(config)) {
    process.stdout.write(`screenshot: skipped, no browser at ${config.browserPath}\n`);
    return;
  }
  let n = 0;
  // A number drawn in the page, new on each load: every capture is a new image to host.
  const stamp = () => `<p style="font: 40px sans-serif">load ${++n}</p>`;
  const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#5a7' } })
    .png()
    .toBuffer();
  const images = Array.from({ length: 6 }, (_, i) => `<img src="/img/${i}.png" width="400" height="300">`).join('');
  const site = await startFixtureServer({
    '/article': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(articlePage().replace('<body>', `<body>${stamp()}`));
    },
    '/images': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><head><title>Images</title><link rel="stylesheet" href="/style.css"></head><body>${stamp()}${images}</body></html>`);
    },
    '/style.css': { headers: { 'content-type': 'text/css' }, body: 'body { margin: 0; background: #eee } img { margin: 4px }' },
  });
  for (let i = 0; i < 6; i++) site.route(`/img/${i}.png`, { headers: { 'content-type': 'image/png' }, body: png });
  const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: config.userAgent, maxRedirects: 5 });
  const blobs = new FsBlobStore(dataDir, () => 'http://assets.bench');
  const jobs = new InlineJobRunner({ fetch, blobs, config }, config.jobConcurrency);
  let requests = 0;
  const preview = async (link: string) =>
    (await previewLink({ link } as PreviewRequest, { config, fetch, blobs, jobs }, { requestId: `bench-${++requests}`, timer: new PhaseTimer() })).record;
  try {
    for (const page of ['/article', '/images']) {
      const url = site.url(page);
      const cold: number[] = [];
      for (let i = 0; i < COLD_RUNS; i++) {
        await closeBrowser();
        cold.push(await timed(() => captureScreenshot(url, { fetch, config })));
      }
      await captureScreenshot(url, { fetch, config });
      const warm: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) warm.push(await timed(() => captureScreenshot(url, { fetch, config })));
      const job: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) {
        job.push(
          await timed(async () => {
            const r = await runScreenshotJob({ url }, { fetch, blobs, config });
            if (!r.screenshot) throw new Error(`no screenshot: ${r.reason}`);
          }),
        );
      }
      process.stdout.write(
        `${page}: capture cold (browser launch) median ${median(cold).toFixed(0)} ms over ${COLD_RUNS}, warm median ${median(warm).toFixed(0)} ms over ${WARM_RUNS}; job (warm capture + four sizes hosted) median ${median(job).toFixed(0)} ms over ${WARM_RUNS}\n`,
      );

      // Whole records: a URL previewed for the first time, then again.
      const first: number[] = [];
      const again: number[] = [];
      let withShot = 0;
      let againWithShot = 0;
      for (let i = 0; i < WARM_RUNS; i++) {
        const link = `${url}?v=${i}`;
        first.push(
          await timed(async () => {
            if ((await preview(link)).page?.screenshot) withShot++;
          }),
        );
        again.push(
          await timed(async () => {
            if ((await preview(link)).page?.screenshot) againWithShot++;
          }),
        );
      }
      process.stdout.write(
        `${page}: record with screenshots on, first preview of a URL median ${median(first).toFixed(0)} ms (${withShot}/${WARM_RUNS} with the screenshot), the same URL again median ${median(again).toFixed(0)} ms (${againWithShot}/${WARM_RUNS})\n`,
      );
    }
  } finally {
    await closeBrowser();
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
