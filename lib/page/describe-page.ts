/**
 * The `page` object of a PAGE record, from two jobs started together: `page-content`
 * (Readability -> the reading time, and the hosted HTML, Markdown and text versions' addresses)
 * and, when screenshots are enabled, `screenshot` (headless Chromium). Either may fail or come
 * late; the object then has what did arrive, or is left out. The page-content job's result comes
 * once the content is read: the versions it names are built after it, at addresses fixed by the
 * page's digest, and the record does not wait for them (lib/page/page-versions.ts). Nor does it
 * wait for the read beyond the rest of the card (LINKPREVIEW_CONTENT_WAIT_MS past it; a page with
 * no description of its own waits for its excerpt): given the addresses (the preview knows the
 * digest), it names them without the reading time, which the job remembers for the next preview.
 *
 * The screenshot does not hold the record: once the rest is ready (the page content, and what the
 * caller passes as `othersReady`), the record waits for it at most LINKPREVIEW_SCREENSHOT_WAIT_MS.
 * Where the jobs share this machine's cores (`JobRunner.sharesCpu`: the local server), the capture
 * is only started then, so Chromium does not slow the rest of the record down; where they run
 * elsewhere (a worker Lambda on AWS), it starts at once, beside the rest.
 * A later screenshot job still runs to its end (under its own time cap and the jobs' deadline):
 * it stores the screenshot and remembers it for the URL (lib/browser/screenshot-memo.ts), and a
 * preview of that URL within LINKPREVIEW_SCREENSHOT_MEMO_TTL_MS takes it from there without
 * running the job.
 *
 * This side only builds the job inputs and reads the results, so the preview bundle carries
 * neither the DOM nor the browser code.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { screenshotsEnabled } from '../browser/availability.js';
import { recallScreenshot } from '../browser/screenshot-memo.js';
import type { Config } from '../config.js';
import type { ImageSet, PageInfo } from '../contract/link.js';
import type { FetchResult } from '../fetch/types.js';
import type { PageContentInput, PageContentResult } from '../jobs/kinds.js';
import { type BlobStore, type JobRunner, PARKED, type RunOptions } from '../ports.js';

export interface DescribedPage {
  page?: PageInfo;
  /**
   * The page's versions are named (the addresses the preview gave: DescribePageOptions.versions)
   * before their content was read: the rest of the card was ready first. No reading time then.
   */
  named?: true;
  /** Readability's excerpt, for a record that has no description of its own. */
  excerpt?: string;
  /** The page-content result the fields come from (the preview remembers complete ones with the page: lib/page/page-memo.ts). */
  content?: PageContentResult;
}

export interface DescribePageOptions extends RunOptions {
  /** The rest of the record (its image jobs): the wait for a late screenshot starts once this has settled too. */
  othersReady?: Promise<unknown>;
  /** The screenshot a render of the page already took (lib/browser/render.ts): no screenshot job then. */
  screenshot?: ImageSet;
  /** The page-content result remembered for these page bytes (lib/page/page-memo.ts): no page-content job then. */
  content?: PageContentResult;
  /**
   * The versions' addresses (from the page's digest: lib/page/page-versions.ts): with them, the
   * content is waited for only until `othersReady` (the rest of the card), and the record names
   * these when it is not in by then. Without them, the content is waited for.
   */
  versions?: Required<Pick<PageInfo, 'htmlUrl' | 'markdownUrl' | 'rawTextUrl'>>;
  /** Whether the record needs the excerpt (it has no description of its own): the content is waited for then. */
  needsExcerpt?: Promise<boolean>;
  /**
   * With `versions`: the record goes without the content for now (it needs neither the excerpt nor,
   * LINKPREVIEW_CONTENT_WAIT_MS 0, the reading time), so a runner that parks such work may keep
   * the page-content job until its process is idle or these versions are asked for
   * (RunOptions.idleKey: the page's digest); the record then names the versions.
   */
  idleKey?: string;
}

type Ports = { config: Config; jobs: JobRunner; blobs: BlobStore };

export async function describePage(res: FetchResult, contentType: string | undefined, ports: Ports, options: DescribePageOptions): Promise<DescribedPage> {
  const run: RunOptions = { requestId: options.requestId, deadline: options.deadline };
  const parkable = options.versions && options.idleKey !== undefined ? { idleKey: options.idleKey, versions: options.versions } : undefined;
  const read = res.body.length > 0 ? pageContent({ res, contentType, remembered: options.content, parkable }, ports, run) : undefined;
  const othersReady = options.othersReady?.catch(() => undefined);
  const content = read && othersReady ? contentByCard(read, othersReady, ports, options) : read;
  const restReady = Promise.all([content?.catch(() => undefined), othersReady]);
  // Jobs on this machine's cores: the capture starts once the rest is ready, not beside it.
  const shotStart = ports.jobs.sharesCpu ? restReady : undefined;
  const shot = options.screenshot
    ? Promise.resolve(options.screenshot)
    : screenshotsEnabled(ports.config)
      ? screenshotOf(res.finalUrl, ports, run, shotStart).catch(() => undefined)
      : undefined;
  if (!content && !shot) return {};

  const [described] = await Promise.all([content ?? ({} as DescribedPage), othersReady]);
  const screenshot = shot && (await atMost(shot, ports.config.screenshotWaitMs));
  const page: PageInfo = { ...described.page, ...(screenshot ? { screenshot } : {}) };
  const rest = {
    excerpt: described.excerpt,
    ...(described.content ? { content: described.content } : {}),
    ...(described.named ? { named: described.named } : {}),
  };
  return Object.keys(page).length ? { page, ...rest } : rest;
}

/**
 * The `page-content` job's fields and excerpt (none when it failed or came late); those
 * `remembered` for these page bytes (lib/page/page-memo.ts) without the job.
 */
async function pageContent(
  fetched: { res: FetchResult; contentType: string | undefined; remembered?: PageContentResult; parkable?: Parkable },
  ports: Ports,
  run: RunOptions,
): Promise<DescribedPage> {
  const { res, contentType, remembered, parkable } = fetched;
  // The deadline lets the job stop hosting the content's images in time to store its versions.
  const input = (): PageContentInput => ({ url: res.finalUrl, bytesBase64: res.body.toString('base64'), contentType, deadline: run.deadline });
  const r = remembered ?? (await runPageContent(input(), ports.jobs, parkable ? { ...run, idleKey: parkable.idleKey } : run));
  // Parked until the process is idle or the versions are asked for: they are named now.
  if (r === PARKED) return parkable ? { page: { ...parkable.versions }, named: true } : {};
  if (!r) return {};
  const page: PageInfo = {};
  if (r.estimatedReadingTimeInMinutes !== undefined) page.estimatedReadingTimeInMinutes = r.estimatedReadingTimeInMinutes;
  if (r.htmlUrl) page.htmlUrl = r.htmlUrl;
  if (r.markdownUrl) page.markdownUrl = r.markdownUrl;
  if (r.rawTextUrl) page.rawTextUrl = r.rawTextUrl;
  return { ...(Object.keys(page).length ? { page } : {}), excerpt: r.excerpt, content: r };
}

/**
 * The content as far as it came by the time the rest of the card was ready: its read, or (not in
 * yet, and the record needs no excerpt) the versions' addresses without it. The read goes on, and
 * the job remembers it for the next preview.
 */
async function contentByCard(
  read: Promise<DescribedPage>,
  cardReady: Promise<unknown>,
  ports: Pick<Ports, 'config'>,
  options: DescribePageOptions,
): Promise<DescribedPage> {
  const { versions, needsExcerpt } = options;
  if (!versions) return read;
  const grace = ports.config.contentWaitMs;
  // Unref'd: a read that came first leaves no timer holding the process.
  const ready = grace > 0 ? cardReady.then(() => sleep(grace, undefined, { ref: false })) : cardReady;
  const first = await Promise.race([read.then((d) => ({ d })), ready.then(() => undefined)]);
  if (first) return first.d;
  if (await needsExcerpt) return read;
  // In meanwhile (the excerpt's check took a turn): the read, else the addresses.
  return Promise.race([read, Promise.resolve<DescribedPage>({ page: { ...versions }, named: true })]);
}

/** The content may be parked under `idleKey`; the record then names `versions`. */
interface Parkable {
  idleKey: string;
  versions: NonNullable<DescribePageOptions['versions']>;
}

async function runPageContent(input: PageContentInput, jobs: JobRunner, run: RunOptions): Promise<PageContentResult | typeof PARKED | undefined> {
  const outcome = (await jobs.run([{ id: 'page-content', kind: 'page-content', input }], run)).get('page-content');
  if (outcome && !outcome.ok && outcome.error === PARKED) return PARKED;
  return outcome?.ok ? outcome.result : undefined;
}

/**
 * The screenshot remembered for `url`, else the `screenshot` job's (it runs on to the jobs'
 * deadline whoever still waits), submitted once `start` (when given) has settled.
 */
async function screenshotOf(url: string, ports: Ports, run: RunOptions, start?: Promise<unknown>): Promise<ImageSet | undefined> {
  const remembered = await recallScreenshot(ports.blobs, url, ports.config.screenshotMemoTtlMs);
  if (remembered) return remembered;
  await start;
  const outcomes = await ports.jobs.run([{ id: 'screenshot', kind: 'screenshot', input: { url } }], run).catch(() => undefined);
  const outcome = outcomes?.get('screenshot');
  return outcome?.ok ? outcome.result.screenshot : undefined;
}

/**
 * The page without the versions' addresses: for a record whose page memo, which tells whoever
 * serves those addresses that the versions are on their way, could not be written.
 */
export function withoutVersions(described: DescribedPage): DescribedPage {
  if (!described.page) return described;
  const { htmlUrl: _h, markdownUrl: _m, rawTextUrl: _t, ...page } = described.page;
  const { content: _c, named: _n, ...rest } = described;
  return { ...rest, ...(Object.keys(page).length ? { page } : {}) };
}

/** What `p` gives within `ms`, else undefined (`p` goes on). */
async function atMost<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
