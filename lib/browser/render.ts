/**
 * The `render` job: a single-page app's shell (lib/extract/app-shell.ts), or any page when
 * LINKPREVIEW_RENDER=on, loaded in headless Chromium through the same guarded route as a
 * screenshot (lib/browser/route.ts: every request fetched by the SSRF-guarded fetcher, on the
 * preview's proxy route), read once the load event and a short network-quiet window have passed,
 * within LINKPREVIEW_RENDER_TIMEOUT_MS. The DOM comes back as HTML; the preview extracts the
 * record's fields and the page versions from it. When the record gets a screenshot, the same page
 * load gives it (no second load by the screenshot job). A page that ends on the browser's own
 * error or interstitial page fails the job (`withLoadedPage`): the record keeps the static fields.
 */
import type { JobContext } from '../jobs/context.js';
import type { RenderJobInput, RenderJobResult } from '../jobs/kinds.js';
import { browserAvailable } from './availability.js';
import { capturePng, hostScreenshot, withLoadedPage } from './screenshot.js';

/** After the load event, the page is read once none of its requests has run for this long (scripts filling in the page). */
const RENDER_QUIET_MS = 250;

export async function runRenderJob(input: RenderJobInput, ctx: JobContext): Promise<RenderJobResult> {
  if (!browserAvailable(ctx.config)) return { reason: 'no browser' };
  const capturedAt = Date.now();
  // One page load serves both: the DOM, then (when asked) the first screen.
  const loaded = await withLoadedPage(
    input.url,
    { fetch: ctx.fetch, config: ctx.config, signal: ctx.signal, capMs: ctx.config.renderTimeoutMs, quietMs: RENDER_QUIET_MS },
    async (tab) => ({ html: await tab.page.content(), png: input.screenshot ? await capturePng(tab).catch(() => undefined) : undefined }),
  );
  const screenshot = loaded.value.png ? await hostScreenshot(input.url, loaded.value.png, capturedAt, ctx).catch(() => undefined) : undefined;
  return { html: loaded.value.html.slice(0, input.maxChars), ...(screenshot ? { screenshot } : {}), requests: loaded.requests, refused: loaded.refused };
}
