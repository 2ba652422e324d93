/**
 * The pipeline's render step (lib/preview/preview-link.ts): whether a page is rendered in the browser before
 * the extraction (LINKPREVIEW_RENDER, a `render` host rule, the app-shell rule), and the page
 * extracted again from the DOM the render gave, with the screenshot of the same load.
 */
import { browserJobsAvailable, screenshotsEnabled } from '../browser/availability.js';
import type { ImageSet, LinkRecord } from '../contract/link.js';
import { appShellReason } from '../extract/app-shell.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { FetchResult } from '../fetch/types.js';
import { type Extraction, extract } from './extract.js';
import type { Run } from './run.js';

/** The browser's cap on a render, plus this for the job to come back (the queue and the result on AWS). */
const RENDER_RETURN_MS = 1_000;

/** Why the page is rendered in the browser (LINKPREVIEW_RENDER, a `render` host rule, the app-shell rule), or undefined. */
function renderReason(run: Run, res: FetchResult, fetched: Extraction): string | undefined {
  const { config } = run;
  const page = fetched.page;
  if (!page || page.read.wall || !fetched.record.ok || config.render === 'off' || !browserJobsAvailable(config)) return undefined;
  // The rule's variable: LINKPREVIEW_HOST_RULES, or the former LINKPREVIEW_RENDER_HOSTS.
  const rule = hostRulesOf(config).verdict(res.finalUrl).by.get('render');
  if (rule) return rule.source;
  if (config.render === 'on') return 'LINKPREVIEW_RENDER=on';
  return appShellReason(page.read.page, page.found);
}

/** The page rendered and extracted from its DOM, when it is to be rendered and the render gave a DOM. */
export async function renderedPage(
  run: Run,
  res: FetchResult,
  answered: LinkRecord,
  fetched: Extraction,
): Promise<{ res: FetchResult; extraction: Extraction; screenshot?: ImageSet } | undefined> {
  const reason = renderReason(run, res, fetched);
  if (!reason) return undefined;
  const deadline = run.budget.until(Date.now() + run.config.renderTimeoutMs + RENDER_RETURN_MS);
  // The record's screenshot, when it gets one, comes from the same page load.
  const screenshot = screenshotsEnabled(run.config) && !run.metadataOnly(res.finalUrl);
  const input = { url: res.finalUrl, maxChars: run.config.maxPageBytes, screenshot };
  const outcomes = await run.ports.jobs.run([{ id: 'render', kind: 'render', input }], {
    requestId: run.ctx.requestId,
    deadline,
  });
  const outcome = outcomes.get('render');
  const html = outcome?.ok ? outcome.result.html : undefined;
  run.rendered = { reason, ok: !!html, ...(outcome?.ok ? {} : { error: outcome?.error }) };
  if (!html) return undefined;
  const renderedRes: FetchResult = {
    ...res,
    body: Buffer.from(html, 'utf8'),
    headers: { ...res.headers, 'content-type': 'text/html; charset=utf-8', 'content-length': undefined, 'content-encoding': undefined },
    truncated: false,
  };
  const extraction = await run.timer.time('extract', () => extract(renderedRes, answered, run.platforms, run.config));
  const shot = outcome?.ok ? outcome.result.screenshot : undefined;
  return { res: renderedRes, extraction, ...(shot ? { screenshot: shot } : {}) };
}
