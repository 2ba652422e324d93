/**
 * The pipeline of one preview, as one function of its ports. It reads top to bottom:
 * fetch (SSRF-guarded) -> classify -> extract -> jobs (fan-out with a deadline) -> assemble.
 */
import type { Config } from './config.js';
import type { LinkRecord, LinkType } from './contract/link.js';
import type { PreviewRequest } from './contract/request.js';
import { FetchFailure, type Fetcher, type FetchResult } from './fetch/safe-fetch.js';
import { classify } from './extract/classify.js';
import { extractPage, type PageExtraction } from './extract/extract-page.js';
import { withRules } from './extract/rules.js';
import { fileNameFromDisposition, finalize, type DefaultHints } from './extract/defaults.js';
import { hostProfileHeaders } from './fetch/host-profiles.js';
import { hostImages, type ImageSources } from './media/host-images.js';
import { describeMedia, MEDIA_LINK_TYPES } from './media/describe-media.js';
import { describePage, type DescribedPage } from './page/describe-page.js';
import { canonicalUrl, domainOf, stableId } from './ids.js';
import { hostImage } from './media/host-images.js';
import { matchPlatform } from './platforms/index.js';
import { detectLanguage } from './language/detect.js';
import { normalizeLanguage } from './extract/language.js';
import type { PlatformContext, PlatformPreview } from './platforms/types.js';
import type { BlobStore, JobRunner } from './ports.js';
import type { PhaseTimer } from './timing.js';

export interface PreviewPorts {
  config: Config;
  fetch: Fetcher;
  blobs: BlobStore;
  jobs: JobRunner;
}

export interface PreviewContext {
  requestId: string;
  timer: PhaseTimer;
  /** Passed on to the outbound fetch. */
  acceptLanguage?: string;
}

export interface PreviewOutcome {
  record: LinkRecord;
  /** Why the link could not be fetched, when it could not (for logs and a response header). */
  upstreamError?: string;
}

export async function previewLink(request: PreviewRequest, ports: PreviewPorts, ctx: PreviewContext): Promise<PreviewOutcome> {
  const { config } = ports;
  const link = request.link;
  const base = {
    id: stableId(canonicalUrl(link)),
    requestId: ctx.requestId,
    updatedAt: new Date().toISOString(),
    url: link,
    domain: domainOf(link),
  };

  // 0. A platform link (videohost, codehost, forum, ...) gets the platform's own data; when its
  //    source fails, the generic preview below is used.
  const direct = await ctx.timer.time('platform', () => platformRecord(new URL(link), base, ports, ctx));
  if (direct) return { record: direct };

  // 1. Fetch. A forbidden address (LinkNotAllowedError) propagates as a 400; any other upstream
  //    failure is an ok:false record with the status seen and the trail so far.
  let res: FetchResult;
  try {
    res = await ctx.timer.time('fetch', () =>
      ports.fetch(link, {
        maxBytes: config.maxPageBytes,
        onTooLarge: 'truncate',
        timeoutMs: config.fetchTimeoutMs,
        // Per-host User-Agent and consent cookie (lib/fetch/host-profiles.ts), then the caller's language.
        headers: { ...hostProfileHeaders(link, config.userAgent), ...(ctx.acceptLanguage ? { 'accept-language': ctx.acceptLanguage } : {}) },
      }),
    );
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err;
    return {
      record: { ...base, ok: false, type: 'UNKNOWN', status: err.status, ...redirection(err.trail) },
      upstreamError: err.code,
    };
  }

  // A short link (redd.it, t.co, amzn.to, ...) that redirected to a platform URL.
  if (res.trail.length > 1) {
    const resolved = await ctx.timer.time('platform', () => platformRecord(new URL(res.finalUrl), base, ports, ctx, res));
    if (resolved) return { record: resolved };
  }

  const deadline = Date.now() + config.recordDeadlineMs;
  let sources: ImageSources = {};
  const hints: DefaultHints = {};
  let pageJobs: Promise<DescribedPage> | undefined;

  // 2. Classify and extract.
  const record: LinkRecord = await ctx.timer.time('extract', async () => {
    const contentType = header(res, 'content-type');
    const { type } = await classify(contentType, res.body);
    const r: LinkRecord = {
      ...base,
      ok: res.status >= 200 && res.status < 300,
      type: type as LinkType,
      status: res.status,
      size: res.declaredSize ?? res.body.length,
      ...redirection(res.trail),
    };
    if (type === 'PAGE') {
      // A platform page read generically (its own source failed) gets the platform's page rules in front.
      const pageRules = matchPlatformUrl(res.finalUrl)?.platform.pageRules;
      const page: PageExtraction = await extractPage(res, contentType, { fetch: ports.fetch, config, ...(pageRules ? { rules: withRules(pageRules) } : {}) });
      if (page.title) r.title = page.title;
      if (page.description) r.description = page.description;
      if (page.language) r.language = page.language;
      if (page.siteName) hints.siteName = page.siteName;
      // A wall (bot challenge, consent or login redirect): ok:false with the status seen, real metadata kept.
      if (page.wall) r.ok = false;
      // The `page` object (content versions, reading time, screenshot): jobs that run beside the image jobs.
      else if (r.ok) pageJobs = describePage(res, contentType, ports, { requestId: ctx.requestId, deadline }).catch((): DescribedPage => ({}));
      sources = { image: page.image, icons: page.icons, backgroundColor: page.backgroundColor };
    } else {
      hints.fileName = fileNameFromDisposition(header(res, 'content-disposition'));
    }
    if (type === 'IMAGE') {
      // An IMAGE link is hosted as the top-level `image`: from the bytes already read, or, when they
      // were cut at the page cap, downloaded again by the job under the (larger) image cap.
      sources = res.truncated ? { image: { url: res.finalUrl } } : { imageBytes: res.body };
    }
    // VIDEO, AUDIO, DOCUMENT, TEXT: the type's object (probe, frames, waveform, PDF, text) from a job under the deadline.
    if (MEDIA_LINK_TYPES.has(type)) Object.assign(r, await describeMedia(type, res, ports, { requestId: ctx.requestId, deadline }));
    return r;
  });

  // 3. Jobs: host the images (and, with the media issues, probe media) concurrently, up to the deadline.
  const [hosted, described] = await ctx.timer.time('jobs', () => Promise.all([hostImages(sources, ports.jobs, { requestId: ctx.requestId, deadline }), pageJobs]));
  if (hosted.image) record.image = hosted.image;
  if (hosted.icon) record.icon = hosted.icon;
  if (described?.page) record.page = described.page;
  if (!record.description && described?.excerpt) record.description = described.excerpt;

  return { record: finalize(record, hints) };
}

/** Runs the matching platform, if any; undefined means "use the generic preview". */
async function platformRecord(url: URL, base: Pick<LinkRecord, 'id' | 'requestId' | 'updatedAt' | 'url' | 'domain'>, ports: PreviewPorts, ctx: PreviewContext, page?: FetchResult): Promise<LinkRecord | undefined> {
  const found = matchPlatform(url);
  if (!found) return undefined;
  const deadline = Date.now() + ports.config.recordDeadlineMs;
  let declared: string | undefined;
  const pctx: PlatformContext = {
    fetch: ports.fetch,
    config: ports.config,
    jobs: ports.jobs,
    requestId: ctx.requestId,
    deadline,
    acceptLanguage: ctx.acceptLanguage,
    page,
    hostImage: async (src) => (src ? hostImage({ url: src }, ports.jobs, { requestId: ctx.requestId, deadline }) : undefined),
    noteLanguage: (tag) => { declared ??= normalizeLanguage(tag); },
  };
  let out: PlatformPreview | undefined;
  try {
    out = await found.platform.extract(url, found.match, pctx);
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err;
    out = undefined; // the platform source failed: fall back to the generic preview
  }
  if (!out) return undefined;
  if (!out.language) {
    // Platform sources rarely give a language: the page's own declaration, else a reliable
    // detection on the post's words (short captions are not detected reliably: none then).
    const words = [out.title, out.description].filter(Boolean).join('. ');
    const detected = declared ? undefined : await detectLanguage(words);
    out.language = declared ?? (detected?.reliable && detected.probability >= 0.9 ? detected.language : undefined);
  }
  const trail = page?.trail ?? out.trail ?? [base.url];
  const record: LinkRecord = {
    ...base,
    ok: out.ok,
    type: out.type,
    status: out.status,
    ...redirection(trail),
    ...(out.title !== undefined ? { title: out.title } : {}),
    ...(out.description !== undefined ? { description: out.description } : {}),
    ...(out.language ? { language: out.language } : {}),
    ...out.fields,
  };
  const hosted = await ctx.timer.time('jobs', () =>
    hostImages({ image: out.image || !out.imageSource ? undefined : { url: out.imageSource }, icons: out.icons }, ports.jobs, { requestId: ctx.requestId, deadline }),
  );
  if (out.image) record.image = out.image;
  else if (hosted.image) record.image = hosted.image;
  if (hosted.icon) record.icon = hosted.icon;
  return finalize(record, {});
}

function header(res: FetchResult, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function redirection(trail: string[]): Pick<LinkRecord, 'redirected' | 'redirectionUrl' | 'redirectionCount' | 'redirectionTrail'> {
  const redirected = trail.length > 1;
  return {
    redirected,
    ...(redirected ? { redirectionUrl: trail[trail.length - 1] } : {}),
    redirectionCount: trail.length - 1,
    redirectionTrail: trail,
  };
}

function matchPlatformUrl(url: string): ReturnType<typeof matchPlatform> {
  try {
    return matchPlatform(new URL(url));
  } catch {
    return undefined;
  }
}
