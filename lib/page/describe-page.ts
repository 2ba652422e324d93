/**
 * The `page` object of a PAGE record, from two jobs run together under the record's deadline:
 * `page-content` (readability -> hosted HTML, Markdown and text, reading time) and, when
 * screenshots are enabled, `screenshot` (headless Chromium). Either may fail or come late; the
 * object then has what did arrive, or is left out.
 *
 * This side only builds the job inputs and reads the results, so the preview bundle carries
 * neither the DOM nor the browser code.
 */
import type { Config } from '../config.js';
import type { PageInfo } from '../contract/link.js';
import type { FetchResult } from '../fetch/safe-fetch.js';
import { screenshotsEnabled } from '../browser/availability.js';
import type { Job, JobRunner, RunOptions } from '../ports.js';

export interface DescribedPage {
  page?: PageInfo;
  /** Readability's excerpt, for a record that has no description of its own. */
  excerpt?: string;
}

export async function describePage(res: FetchResult, contentType: string | undefined, ports: { config: Config; jobs: JobRunner }, options: RunOptions): Promise<DescribedPage> {
  const jobs: Job<'page-content' | 'screenshot'>[] = [];
  if (res.body.length > 0) {
    // The deadline lets the job stop hosting the content's images in time to store its versions.
    jobs.push({ id: 'page-content', kind: 'page-content', input: { url: res.finalUrl, bytesBase64: res.body.toString('base64'), contentType, deadline: options.deadline } });
  }
  if (screenshotsEnabled(ports.config)) jobs.push({ id: 'screenshot', kind: 'screenshot', input: { url: res.finalUrl } });
  if (jobs.length === 0) return {};

  const outcomes = await ports.jobs.run(jobs, options);
  const page: PageInfo = {};
  let excerpt: string | undefined;
  const content = outcomes.get('page-content');
  if (content?.ok && content.kind === 'page-content') {
    const r = content.result;
    if (r.estimatedReadingTimeInMinutes !== undefined) page.estimatedReadingTimeInMinutes = r.estimatedReadingTimeInMinutes;
    if (r.htmlUrl) page.htmlUrl = r.htmlUrl;
    if (r.markdownUrl) page.markdownUrl = r.markdownUrl;
    if (r.rawTextUrl) page.rawTextUrl = r.rawTextUrl;
    excerpt = r.excerpt;
  }
  const shot = outcomes.get('screenshot');
  if (shot?.ok && shot.kind === 'screenshot' && shot.result.screenshot) page.screenshot = shot.result.screenshot;
  return Object.keys(page).length ? { page, excerpt } : { excerpt };
}
