/**
 * The entry of a preview (`previewLink`): the pipeline of one preview, as one function of its ports
 * (lib/preview/types.ts). It reads top to bottom: fetch (SSRF-guarded) -> classify and extract (CPU
 * only: lib/preview/extract.ts; a JavaScript shell rendered first: lib/preview/render.ts) -> jobs
 * (fan-out with a deadline) -> assemble; the record's parts come from lib/preview/record.ts, and
 * what every step draws on is the preview's Run (lib/preview/run.ts).
 * The jobs step puts the critical path first: the image and icon jobs are submitted as soon as their
 * sources are known, before the CPU-heavy page jobs; a sub-fetch holds only the fields it feeds (the
 * manifest the icons, oEmbed the fields it could still change), and the language is detected beside
 * the jobs. The record's player (lib/embed/) is found in the extract step without a fetch, and
 * settled with the jobs without waiting for anything of its own. Every phase draws from the
 * request's one time budget (lib/budget.ts); when it ends, the record built so far is the outcome.
 */
import { TimeBudget } from '../budget.js';
import type { ImageSet, LinkRecord } from '../contract/link.js';
import type { PreviewRequest } from '../contract/request.js';
import { pagePlayer, settledEmbed } from '../embed/pipeline.js';
import { fileEmbed } from '../embed/record.js';
import { finalize } from '../extract/defaults.js';
import { fetchManifest, oembedToFetch, type PageFields, pageFields, pageIcons, pageLanguage } from '../extract/extract-page.js';
import { fetchOEmbed } from '../extract/oembed-source.js';
import { manifestSite } from '../extract/site-name.js';
import { FetchFailure } from '../fetch/fetch-failure.js';
import { header } from '../fetch/headers.js';
import { hostProfileFor, hostProfileHeaders } from '../fetch/host-profiles.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import { RouteState } from '../fetch/proxy-route.js';
import { assertNotDenied } from '../fetch/safe-fetch.js';
import type { FetchResult } from '../fetch/types.js';
import { canonicalUrl, domainOf, stableId } from '../ids.js';
import { describeMedia, MEDIA_LINK_TYPES } from '../media/describe-media.js';
import { type HostedImages, hostImages, type ImageSources } from '../media/host-images.js';
import { type DescribedPage, describePage, withoutVersions } from '../page/describe-page.js';
import { type PageMemoParts, pageDigest, recallPage, rememberPage } from '../page/page-memo.js';
import { versionAddresses } from '../page/page-versions.js';
import { runPlatform } from '../platforms/run.js';
import type { RunOptions } from '../ports.js';
import { memoKeyFromDigest } from '../storage-keys.js';
import { type Extraction, extract } from './extract.js';
import {
  answeredRecord,
  assemble,
  type Base,
  type Done,
  linkRoute,
  pageHints,
  pageRecord,
  platformFields,
  recordOEmbedFields,
  redirection,
  unanswered,
  wallUpstream,
} from './record.js';
import { renderedPage } from './render.js';
import { Run } from './run.js';
import { ownSite } from './sign-in-site.js';
import type { PipelineOutcome, PreviewContext, PreviewOutcome, PreviewPorts, SoFar } from './types.js';

/** After the budget's end the pipeline has this long to wind down; then the record built so far goes out. */
const BUDGET_GRACE_MS = 250;

export async function previewLink(request: PreviewRequest, ports: PreviewPorts, ctx: PreviewContext): Promise<PreviewOutcome> {
  const link = request.link;
  const budget = ctx.budget ?? TimeBudget.start({ budgetMs: ports.config.requestBudgetMs });
  const own = ctx.budget ? undefined : budget;
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
  ctx.watch?.(sofar);
  // Every network phase is aborted at the budget's end, so the pipeline returns right after it;
  // this cut-off is the guarantee for a step that would not (a stuck store write, a slow CPU phase).
  let cutoffTimer: NodeJS.Timeout | undefined;
  const cutoff = new Promise<PipelineOutcome>((resolve) => {
    cutoffTimer = setTimeout(() => resolve(sofar.outcome()), budget.remaining() + BUDGET_GRACE_MS);
  });
  // One route for the whole preview: a host walled for one of its fetches goes through the proxy
  // for all the others (sub-fetches, platform sources, jobs and the browser).
  const route = new RouteState();
  try {
    const run = new Run({ link, base, ports, ctx, budget, sofar, route });
    const raced = await Promise.race([pipeline(run), cutoff]);
    const outcome = run.upstreamError && !raced.upstreamError ? { ...raced, upstreamError: run.upstreamError } : raced;
    const summary = route.summary();
    const routed = { ...outcome, route: { taken: linkRoute(outcome.route?.taken, summary, outcome.record), ...summary } };
    return budget.expired ? { ...routed, outOfTime: true } : routed;
  } finally {
    clearTimeout(cutoffTimer);
    own?.end();
  }
}

async function pipeline(run: Run): Promise<PipelineOutcome> {
  const { link, base, timer } = run;

  // A link a host rule denies is refused before anything is asked (400 LINK_NOT_ALLOWED), platform sources included.
  assertNotDenied(hostRulesOf(run.config), link);

  // 0. A platform link (YouTube, GitHub, Reddit, ...: lib/platforms/) gets the platform's own data; when its
  //    source fails, the generic preview below is used.
  const direct = await timer.time('platform', () => platformRecord(run, new URL(link)));
  if (direct) return { record: direct };

  // 1. Fetch. A forbidden address (LinkNotAllowedError) propagates as a 400; any other upstream
  //    failure (the budget's end included: TIMEOUT) is an ok:false record with the status seen
  //    and the trail so far.
  const res = await timer.time('fetch', () => fetchLink(run));
  if (res instanceof FetchFailure) return { ...unanswered(base, res), ...(res.route ? { route: { taken: res.route } } : {}) };
  const route = res.route ? { route: { taken: res.route } } : {};

  // The link answered: from here on, a cut-off record is ok as far as its status goes.
  const answered = answeredRecord(base, res, run.config.retryAfterMaxMs);
  run.cutOff(answered);

  // A short link (redd.it, t.co, amzn.to, ...) that redirected to a platform URL.
  if (res.trail.length > 1) {
    const resolved = await timer.time('platform', () => platformRecord(run, new URL(res.finalUrl), res));
    if (resolved) return { record: resolved, ...route };
  }

  // 2. Classify and extract: the fields the body itself gives (CPU only: no sub-fetch, no job).
  const fetched = await timer.time('extract', () => extract(res, answered, run.platforms, run.config));
  run.upstreamError = wallUpstream(res, fetched.page?.read);
  run.cutOff(fetched.record, fetched.hints);

  // 2b. A page that only JavaScript fills in (LINKPREVIEW_RENDER): rendered in the browser and
  //     extracted again from its DOM, which the page versions are made from too; the status and
  //     the redirect trail stay the fetch's. A render that fails or runs out of time changes nothing.
  const rendered = await renderedPage(run, res, answered, fetched);
  const page = rendered ?? { res, extraction: fetched };
  const { extraction } = page;
  if (rendered) run.cutOff(extraction.record, extraction.hints);

  // 3. Jobs, up to their deadline: host the images, read the page's versions or the file's media,
  //    and (a PAGE) the sub-fetches and the language beside them.
  const jobOptions = run.jobOptions();
  const done = await timer.time('jobs', () =>
    extraction.page
      ? pageJobs(run, { res: page.res, extraction, page: extraction.page, jobOptions: { ...jobOptions, screenshot: rendered?.screenshot } })
      : fileJobs(run, res, extraction, jobOptions),
  );

  // 4. Assemble.
  return { record: assemble(done), ...route, ...(run.rendered ? { rendered: run.rendered } : {}) };
}

/** Fetches the link with its host's profile (User-Agent, consent cookie) and the caller's language; a FetchFailure is returned, not thrown. */
async function fetchLink(run: Run): Promise<FetchResult | FetchFailure> {
  const { link, config, platforms } = run;
  const acceptLanguage = run.ctx.acceptLanguage;
  try {
    return await run.fetch(link, {
      maxBytes: config.maxPageBytes,
      onTooLarge: 'truncate',
      timeoutMs: config.fetchTimeoutMs,
      // Per-host User-Agent and consent cookie (lib/fetch/host-profiles.ts), then the caller's language.
      headers: { ...hostProfileHeaders(link, config.userAgent, platforms.hostProfiles), ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}) },
      // The consent cookie follows the chain through the profile's own hosts (youtu.be -> www.youtube.com), no further.
      cookieHosts: hostProfileFor(link, platforms.hostProfiles)?.hosts,
    });
  } catch (err) {
    if (err instanceof FetchFailure) return err;
    throw err;
  }
}

/** What a PAGE's jobs start from: the (rendered) response, what the extract step found, and the jobs' options. */
interface PageJobsInput {
  res: FetchResult;
  extraction: Extraction;
  page: NonNullable<Extraction['page']>;
  /** The jobs' deadline, and the screenshot the render already took. */
  jobOptions: RunOptions & { screenshot?: ImageSet };
}

/**
 * 3. A PAGE's jobs, the critical path first: the image job (held only when oEmbed could still give
 * the image), the icon job (after the manifest when the page names one), then the CPU-heavy page
 * jobs (content versions, screenshot). oEmbed is fetched only when it could change a field of the
 * record; the language is detected once the title is final, beside the jobs.
 *
 * A page that can be described (it answered, no wall) is looked up first in the page memo
 * (lib/page/page-memo.ts, one read): the parts a preview of the same bytes got from its jobs
 * (image, icon, the page-content result) are taken from there, and only the others' jobs run (the
 * manifest is not fetched for a remembered icon). What the jobs add is remembered at the end,
 * before the record goes out: the memo is what tells whoever serves the versions' addresses the
 * record names that they are on their way (lib/page/page-versions.ts).
 * A sign-in page on another site (an identity provider's) gives the record the name and icon of
 * the site the link led to instead (lib/preview/sign-in-site.ts).
 */
async function pageJobs(run: Run, { res, extraction, page, jobOptions }: PageJobsInput): Promise<Done> {
  const { read, found } = page;
  const { fetch, timer } = run;
  const { blobs } = run.ports;
  const describable = !read.wall && extraction.record.ok;
  // metadata-only (a host rule): the fields, nothing stored: no image, icon, versions, screenshot or memo.
  const storing = !run.metadataOnly(res.finalUrl);
  const contentType = header(res.headers, 'content-type');
  const digest = describable && storing ? pageDigest({ url: res.finalUrl, contentType, bytes: res.body }) : undefined;
  const recalled: Promise<PageMemoParts | undefined> = digest ? recallPage(blobs, digest) : Promise.resolve(undefined);
  const oUrl = oembedToFetch(read, found, recordOEmbedFields(found));
  const oembed = oUrl ? timer.time('subfetch', () => fetchOEmbed(fetch, oUrl)) : undefined;
  const fields: Promise<PageFields> = oembed ? oembed.then((o) => (o ? pageFields(read, o) : found)) : Promise.resolve(found);
  const card = cardJobs(run, { res, page, recalled, storing, fields, oembedAsked: Boolean(oUrl), jobOptions });
  const record = Promise.all([fields, card.site]).then(async ([f, s]) => {
    const { language } = await pageLanguage(read, f);
    const r = pageRecord(extraction.record, read, f, { language, site: s });
    // Cut off from here on: the final fields, without what the jobs add.
    run.cutOff(r, pageHints(f));
    return r;
  });
  // The screenshot's wait (LINKPREVIEW_SCREENSHOT_WAIT_MS) starts once the rest of the record is
  // ready; the page's content is waited for only until then, unless the record needs its excerpt.
  const othersReady = Promise.all([record, card.image, card.icon]);
  const versions = digest ? versionAddresses(blobs, digest) : undefined;
  const needsExcerpt = fields.then((f) => !f.description);
  // The record goes without the content (oEmbed gives no description, so `found`'s is final): a
  // runner that parks such work may keep it until idle (the local server: lib/jobs/idle-work.ts).
  const idleKey = digest && found.description && run.config.contentWaitMs === 0 ? digest : undefined;
  const described = digest
    ? recalled
        .then((m) => describePage(res, contentType, run.ports, { ...jobOptions, othersReady, content: m?.content, versions, needsExcerpt, idleKey }))
        .catch((): DescribedPage => ({}))
    : undefined;
  // The player (lib/embed/pipeline.ts): a fetch for it alone never outlasts the rest of the record.
  const fetchForPlayer = (url: string, signal: AbortSignal) => timer.time('subfetch', () => fetchOEmbed(fetch, url, signal));
  const remembered = recalled.then((m) => m?.player);
  const embedSources = { found: page.players, oembed, oembedUrl: read.oembedUrl, remembered, othersReady: Promise.all([othersReady, described]) };
  const played = pagePlayer({ ...embedSources, fetchOEmbed: fetchForPlayer }, run.config);
  const [r, f, hostedImage, hostedIcon, d, m, s, p] = await Promise.all([record, fields, card.image, card.icon, described, recalled, card.site, played]);
  const got = { image: hostedImage, icon: hostedIcon, site: s, player: p.fetched, described: d, recalled: m };
  const kept = digest ? await rememberJobs(blobs, memoKeyFromDigest('page', digest), got, jobOptions.deadline) : d;
  const alt = hostedImage.image && f.image?.alt ? { alt: f.image.alt } : {};
  const hosted = { image: hostedImage.image && { ...hostedImage.image, ...alt }, icon: hostedIcon.icon };
  return { record: settledEmbed(r, p.player), hints: pageHints(f), hosted, described: kept };
}

/**
 * The card's jobs of a page: its image (held only when oEmbed could still give it), its icon
 * (after the manifest when the page names one), and its site's name; each from the page memo when
 * it has them, none stored when `storing` is off. Another site's sign-in page (an identity
 * provider's) gives the name and icon of the site the link led to.
 */
function cardJobs(
  run: Run,
  input: {
    res: FetchResult;
    page: PageJobsInput['page'];
    recalled: Promise<PageMemoParts | undefined>;
    storing: boolean;
    fields: Promise<PageFields>;
    oembedAsked: boolean;
    jobOptions: RunOptions;
  },
) {
  const { res, recalled, storing, fields, jobOptions } = input;
  const { read, found } = input.page;
  const { fetch, timer } = run;
  const image: Promise<HostedImages> = recalled.then((m) => {
    if (!storing) return {};
    if (m?.image) return { image: m.image };
    if (m?.failed?.image) return {};
    return input.oembedAsked && found.oembedCouldChange.includes('image')
      ? fields.then((f) => run.hostImages({ image: f.image }, jobOptions))
      : run.hostImages({ image: found.image }, jobOptions);
  });
  const own = read.signIn === 'elsewhere' ? timer.time('subfetch', () => ownSite(run, res)) : undefined;
  const manifestUrl = read.manifestUrl;
  // The manifest, for the icon and the site's facts: not read when the memo has the icon.
  const manifest = recalled.then((m) =>
    m?.icon || m?.failed?.icon || !manifestUrl ? undefined : timer.time('subfetch', () => fetchManifest(fetch, manifestUrl)),
  );
  const icon: Promise<HostedImages> = recalled.then((m) => {
    if (!storing) return {};
    if (m?.icon) return { icon: m.icon };
    if (m?.failed?.icon) return {};
    if (own) return own.then((o) => run.hostImages({ icons: o.icons, backgroundColor: o.backgroundColor }, jobOptions));
    return manifest.then((mf) => run.hostImages(pageIcons(read, mf), jobOptions));
  });
  const site = own ? own.then((o) => ({ name: o.name })) : Promise.all([recalled, manifest]).then(([m, mf]) => m?.site ?? manifestSite(mf));
  return { image, icon, site };
}

/**
 * What the jobs added, remembered in the page memo before the record goes out: the memo tells
 * whoever serves the versions' addresses that they are on their way, so when it could not be
 * written the record names no versions built now (the described page without them).
 */
async function rememberJobs(
  blobs: PreviewPorts['blobs'],
  memoKey: string,
  got: {
    image: HostedImages;
    icon: HostedImages;
    site: PageMemoParts['site'];
    player: PageMemoParts['player'];
    described: DescribedPage | undefined;
    recalled: PageMemoParts | undefined;
  },
  deadline: number,
): Promise<DescribedPage | undefined> {
  const { described: d, recalled: m } = got;
  const failed = { ...got.image.failed, ...got.icon.failed };
  // Versions a job run now builds (named by its result, or before it: `named`), by its deadline.
  const ran = d?.content && !m?.content ? { content: d.content } : {};
  const fresh = { ...ran, ...(d?.page?.htmlUrl && (d.named || ran.content) ? { versionsUntil: deadline } : {}) };
  const parts = { image: got.image.image, icon: got.icon.icon, site: got.site, player: got.player, failed, ...fresh };
  if ((await rememberPage(blobs, memoKey, parts, { recalled: m })) === 'failed' && d && fresh.versionsUntil) return withoutVersions(d);
  return d;
}

/**
 * 3. Any other type's jobs: VIDEO, AUDIO, DOCUMENT, TEXT get the type's object (probe, frames,
 * waveform, PDF, text); an IMAGE link is hosted as the top-level `image`, from the bytes already
 * read or, when they were cut at the page cap, downloaded again by the job under the (larger) image cap.
 */
async function fileJobs(run: Run, res: FetchResult, extraction: Extraction, jobOptions: RunOptions): Promise<Done> {
  const { type } = extraction.record;
  // metadata-only (a host rule): the type and size, no media files and no hosted image.
  if (run.metadataOnly(res.finalUrl)) return { record: extraction.record, hints: extraction.hints, hosted: {} };
  const ports: PreviewPorts = { ...run.ports, fetch: run.fetch };
  const image: ImageSources = type === 'IMAGE' ? (res.truncated ? { image: { url: res.finalUrl } } : { imageBytes: res.body }) : {};
  const [media, hosted] = await Promise.all([
    MEDIA_LINK_TYPES.has(type) ? describeMedia(type, res, ports, jobOptions) : {},
    hostImages(image, ports.jobs, jobOptions),
  ]);
  // A VIDEO or AUDIO file's native player, the hosted frame as the video's poster.
  const record = { ...extraction.record, ...media };
  const embed = fileEmbed(record, res.finalUrl, run.config);
  return { record: embed ? { ...record, embed } : record, hints: extraction.hints, hosted };
}

/** Runs the matching platform, if any; undefined means "use the generic preview". */
async function platformRecord(run: Run, url: URL, page?: FetchResult): Promise<LinkRecord | undefined> {
  const found = run.platforms.match(url);
  if (!found) return undefined;
  // Image and media jobs: their own deadline within the budget.
  const jobOptions = run.jobOptions();
  const { ports, ctx, budget } = run;
  const out = await runPlatform({ url, found, ports, budget, requestId: ctx.requestId, acceptLanguage: ctx.acceptLanguage, jobOptions, page });
  if (!out) return undefined;
  const record = platformFields(out, run.base, page);
  // Cut off from here on: the platform's record without its images.
  run.cutOff(record);
  // metadata-only (a host rule): the platform's fields, no image or icon stored.
  if (run.metadataOnly(url.href)) return finalize(record, {});
  const hosted = await run.timer.time('jobs', () =>
    run.hostImages({ image: out.image || !out.imageSource ? undefined : { url: out.imageSource }, icons: out.icons }, jobOptions),
  );
  const image = out.image ?? hosted.image;
  return finalize({ ...record, ...(image ? { image } : {}), ...(hosted.icon ? { icon: hosted.icon } : {}) }, {});
}
