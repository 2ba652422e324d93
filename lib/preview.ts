/**
 * The pipeline of one preview, as one function of its ports. It reads top to bottom:
 * fetch (SSRF-guarded) -> classify -> extract -> jobs (fan-out with a deadline) -> assemble.
 * Every phase draws from the request's one time budget (lib/budget.ts); when it ends, the record
 * built so far is the outcome.
 */
import { budgetedFetcher, TimeBudget } from './budget.js';
import type { Config } from './config.js';
import type { LinkRecord, LinkType } from './contract/link.js';
import type { PreviewRequest } from './contract/request.js';
import { FetchFailure, type Fetcher, type FetchResult } from './fetch/safe-fetch.js';
import { classify } from './extract/classify.js';
import { extractPage, type PageExtraction } from './extract/extract-page.js';
import { withRules } from './extract/rules.js';
import { finalize, type DefaultHints } from './extract/defaults.js';
import { fileNameFromDisposition, header } from './fetch/headers.js';
import { hostProfileFor, hostProfileHeaders } from './fetch/host-profiles.js';
import { hostImages, type ImageSources } from './media/host-images.js';
import { describeMedia, MEDIA_LINK_TYPES } from './media/describe-media.js';
import { describePage, type DescribedPage } from './page/describe-page.js';
import { canonicalUrl, domainOf, stableId } from './ids.js';
import { hostImage } from './media/host-images.js';
import { PLATFORM_REGISTRY } from './platforms/index.js';
import { extractPlatform, type PlatformRegistry, type PlatformRun } from './platforms/registry.js';
import { acceptedLanguage, detectLanguage } from './language/detect.js';
import { normalizeLanguage } from './extract/language.js';
import type { PlatformPreview } from './platforms/types.js';
import type { BlobStore, JobRunner } from './ports.js';
import type { PhaseTimer } from './timing.js';

export interface PreviewPorts {
  config: Config;
  fetch: Fetcher;
  blobs: BlobStore;
  jobs: JobRunner;
  /** The platforms (and the host profiles they declare). Default: lib/platforms/index.ts's; a test passes its own. */
  platforms?: PlatformRegistry;
}

export interface PreviewContext {
  requestId: string;
  timer: PhaseTimer;
  /** Passed on to the outbound fetch. */
  acceptLanguage?: string;
  /** The request's time budget. Default: LINKPREVIEW_JOB_DEADLINE_MS from now. */
  budget?: TimeBudget;
}

export interface PreviewOutcome {
  record: LinkRecord;
  /** Why the link could not be fetched, when it could not (for logs and a response header). */
  upstreamError?: string;
  /** The budget ended before every phase was done: the record is what was built by then. */
  outOfTime?: boolean;
}

/** A platform's sources get at most this share of the time left, so the generic preview after them has the rest. */
const PLATFORM_SHARE = 0.5;

/**
 * After the budget's end, the pipeline has this long to wind down (everything in flight is
 * aborted then); past it, the record built so far goes out without waiting for it.
 */
const BUDGET_GRACE_MS = 250;

type Base = Pick<LinkRecord, 'id' | 'requestId' | 'updatedAt' | 'url' | 'domain'>;

/** The outcome to return if the budget ends now; each phase that completes replaces it with what it built. */
interface SoFar {
  outcome(): PreviewOutcome;
}

export async function previewLink(request: PreviewRequest, ports: PreviewPorts, ctx: PreviewContext): Promise<PreviewOutcome> {
  const link = request.link;
  const own = ctx.budget ? undefined : TimeBudget.start({ budgetMs: ports.config.jobDeadlineMs });
  const budget = ctx.budget ?? own!;
  const base: Base = {
    id: stableId(canonicalUrl(link)),
    requestId: ctx.requestId,
    updatedAt: new Date().toISOString(),
    url: link,
    domain: domainOf(link),
  };
  // Nothing fetched yet: the link did not answer in time.
  const sofar: SoFar = {
    outcome: () => ({ record: { ...base, ok: false, type: 'UNKNOWN', status: 0, ...redirection([link]) }, upstreamError: 'TIMEOUT' }),
  };
  // Every network phase is aborted at the budget's end, so the pipeline returns right after it;
  // this cut-off is the guarantee for a step that would not (a stuck store write, a slow CPU phase).
  let cutoffTimer: NodeJS.Timeout | undefined;
  const cutoff = new Promise<PreviewOutcome>((resolve) => {
    cutoffTimer = setTimeout(() => resolve(sofar.outcome()), budget.remaining() + BUDGET_GRACE_MS);
  });
  try {
    const outcome = await Promise.race([pipeline(link, base, ports, ctx, budget, sofar), cutoff]);
    return budget.expired ? { ...outcome, outOfTime: true } : outcome;
  } finally {
    clearTimeout(cutoffTimer);
    own?.end();
  }
}

async function pipeline(link: string, base: Base, ports: PreviewPorts, ctx: PreviewContext, budget: TimeBudget, sofar: SoFar): Promise<PreviewOutcome> {
  const { config } = ports;
  const fetch = budgetedFetcher(ports.fetch, budget);
  const platforms = platformsOf(ports);

  // 0. A platform link (videohost, codehost, forum, ...) gets the platform's own data; when its
  //    source fails, the generic preview below is used.
  const direct = await ctx.timer.time('platform', () => platformRecord(new URL(link), base, ports, ctx, budget, sofar));
  if (direct) return { record: direct };

  // 1. Fetch. A forbidden address (LinkNotAllowedError) propagates as a 400; any other upstream
  //    failure (the budget's end included: TIMEOUT) is an ok:false record with the status seen
  //    and the trail so far.
  let res: FetchResult;
  try {
    res = await ctx.timer.time('fetch', () =>
      fetch(link, {
        maxBytes: config.maxPageBytes,
        onTooLarge: 'truncate',
        timeoutMs: config.fetchTimeoutMs,
        // Per-host User-Agent and consent cookie (lib/fetch/host-profiles.ts), then the caller's language.
        headers: { ...hostProfileHeaders(link, config.userAgent, platforms.hostProfiles), ...(ctx.acceptLanguage ? { 'accept-language': ctx.acceptLanguage } : {}) },
        // The consent cookie follows the chain through the profile's own hosts (youtu.be -> www.youtube.com), no further.
        cookieHosts: hostProfileFor(link, platforms.hostProfiles)?.hosts,
      }),
    );
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err;
    return {
      record: { ...base, ok: false, type: 'UNKNOWN', status: err.status, ...redirection(err.trail) },
      upstreamError: err.code,
    };
  }

  // The link answered: from here on, a cut-off record is ok as far as its status goes.
  const fetched: LinkRecord = { ...base, ok: res.status >= 200 && res.status < 300, type: 'UNKNOWN', status: res.status, size: res.declaredSize ?? res.body.length, ...redirection(res.trail) };
  sofar.outcome = () => ({ record: finalize(structuredClone(fetched)) });

  // A short link (redd.it, t.co, amzn.to, ...) that redirected to a platform URL.
  if (res.trail.length > 1) {
    const resolved = await ctx.timer.time('platform', () => platformRecord(new URL(res.finalUrl), base, ports, ctx, budget, sofar, res));
    if (resolved) return { record: resolved };
  }

  // The jobs' own deadline, within the budget.
  const deadline = budget.until(Date.now() + config.recordDeadlineMs);
  let sources: ImageSources = {};
  const hints: DefaultHints = {};
  let pageJobs: Promise<DescribedPage> | undefined;

  // 2. Classify and extract.
  const record: LinkRecord = await ctx.timer.time('extract', async () => {
    const contentType = header(res.headers, 'content-type');
    const { type } = await classify(contentType, res.body);
    const r: LinkRecord = { ...fetched, type: type as LinkType };
    // Cut off from here on: this record as it stands (jobs add to it in place).
    sofar.outcome = () => ({ record: finalize(structuredClone(r), { ...hints }) });
    if (type === 'PAGE') {
      // A platform page read generically (its own source failed) gets the platform's page rules in front.
      const pageRules = platforms.match(res.finalUrl)?.platform.pageRules;
      const page: PageExtraction = await extractPage(res, contentType, { fetch, config, ...(pageRules ? { rules: withRules(pageRules) } : {}) });
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
      hints.fileName = fileNameFromDisposition(header(res.headers, 'content-disposition'));
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
async function platformRecord(url: URL, base: Base, ports: PreviewPorts, ctx: PreviewContext, budget: TimeBudget, sofar: SoFar, page?: FetchResult): Promise<LinkRecord | undefined> {
  const found = platformsOf(ports).match(url);
  if (!found) return undefined;
  // Image and media jobs: the record deadline within the budget. The platform's sources: a share
  // of what is left, so a stalled platform API leaves time for the generic preview.
  const deadline = budget.until(Date.now() + ports.config.recordDeadlineMs);
  const sources = budget.slice(PLATFORM_SHARE);
  let declared: string | undefined;
  const run: PlatformRun = {
    fetch: budgetedFetcher(ports.fetch, sources),
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
    // Undefined, or a source that failed: the generic preview (lib/platforms/types.ts).
    out = await extractPlatform(url, found, run);
  } finally {
    sources.end();
  }
  if (!out) return undefined;
  if (!out.language) {
    // Platform sources rarely give a language: the page's own declaration, else a reliable
    // detection on the post's words (short captions are not detected reliably: none then).
    const words = [out.title, out.description].filter(Boolean).join('. ');
    out.language = declared ?? acceptedLanguage(await detectLanguage(words), { strict: true });
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
  // Cut off from here on: the platform's record without its images.
  sofar.outcome = () => ({ record: finalize(structuredClone(record), {}) });
  const hosted = await ctx.timer.time('jobs', () =>
    hostImages({ image: out.image || !out.imageSource ? undefined : { url: out.imageSource }, icons: out.icons }, ports.jobs, { requestId: ctx.requestId, deadline }),
  );
  if (out.image) record.image = out.image;
  else if (hosted.image) record.image = hosted.image;
  if (hosted.icon) record.icon = hosted.icon;
  return finalize(record, {});
}

/** The ports' platforms, else the service's (lib/platforms/index.ts). */
function platformsOf(ports: PreviewPorts): PlatformRegistry {
  return ports.platforms ?? PLATFORM_REGISTRY;
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
