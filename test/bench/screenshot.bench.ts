/**
 * The `screenshot` phase: the median time of a page screenshot (headless Chromium, 1280x800,
 * load + settle, a warm browser) and the first one with the browser launch.
 * `npm run bench -- screenshot` (skipped when no browser is installed).
 */
import { loadConfig } from '../../lib/config.js';
import { browserAvailable, closeBrowser } from '../../lib/browser/browser.js';
import { captureScreenshot } from '../../lib/browser/screenshot.js';
import { createFetcher } from '../../lib/fetch/safe-fetch.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { articlePage } from '../page/fixtures.js';
import { median, timeRuns } from './bench.js';

export async function run(): Promise<void> {
  const config = { ...loadConfig(process.env), allowPrivateNetworks: true };
  if (!browserAvailable(config)) {
    process.stdout.write(`screenshot: skipped, no browser at ${config.browserPath}\n`);
    return;
  }
  const site = await startFixtureServer({ '/article': { body: articlePage() } });
  const fetch = createFetcher({ allowPrivateNetworks: true, allowedPorts: [], userAgent: config.userAgent, maxRedirects: 5 });
  try {
    const cold0 = performance.now();
    await captureScreenshot(site.url('/article'), { fetch, config });
    const cold = performance.now() - cold0;
    const shots = await timeRuns(7, () => captureScreenshot(site.url('/article'), { fetch, config }), 0);
    process.stdout.write(`screenshot (1280x800, load + ${config.screenshotSettleMs} ms settle): median ${median(shots).toFixed(0)} ms over ${shots.length} runs with a warm browser; first one with the browser launch ${cold.toFixed(0)} ms\n`);
  } finally {
    await closeBrowser();
    await site.close();
  }
}
