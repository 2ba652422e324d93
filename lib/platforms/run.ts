/**
 * Running a matched platform for the pipeline (lib/preview/preview-link.ts): its sources get a share of the
 * request's time left, its own settings and host profile, the image job for its images, and the
 * failure convention (./types.ts): an upstream failure it throws (FetchFailure) is the generic
 * preview, as `undefined` is. Its preview's language is filled in when the platform gives none.
 */
import { budgetedFetcher, type TimeBudget } from '../budget.js';
import type { CoreConfig } from '../core-settings.js';
import { gatedEmbed } from '../embed/record.js';
import { normalizeLanguage } from '../extract/language.js';
import { FetchFailure } from '../fetch/fetch-failure.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { Fetcher, FetchResult } from '../fetch/types.js';
import { acceptedLanguage, detectLanguage } from '../language/detect.js';
import { hostImage } from '../media/host-images.js';
import type { JobRunner, RunOptions } from '../ports.js';
import { withCardFields } from './card.js';
import type { MatchedPlatform } from './registry.js';
import type { PlatformContext, PlatformPreview, PlatformSettingsValues } from './types.js';

/** The jobs of a platform whose site stores nothing (`metadata-only`): each refused, as one that failed. */
const NO_JOBS: JobRunner = {
  run: async (list) => new Map(list.map((job) => [job.id, { id: job.id, ok: false as const, error: 'metadata-only: nothing of the site is stored', ms: 0 }])),
};

/** A platform's sources get at most this share of the time left, so the generic preview after them has the rest. */
const PLATFORM_SHARE = 0.5;

/** What the pipeline gives a platform run: the context but for the platform's own parts, and the configuration with every platform's settings. */
export type PlatformRun = Omit<PlatformContext, 'config' | 'settings' | 'hostProfile'> & {
  config: CoreConfig & { platforms: PlatformSettingsValues };
};

/**
 * Runs a matched platform with its own settings and host profile. An upstream failure it throws
 * (FetchFailure) is the generic preview, as `undefined` is; anything else is a bug and propagates.
 */
export async function extractPlatform(url: URL, { platform, match }: MatchedPlatform, run: PlatformRun): Promise<PlatformPreview | undefined> {
  const settings = run.config.platforms[platform.name];
  if (platform.settings && !settings) throw new Error(`no settings for platform ${platform.name}: load the config with the same platforms as the registry`);
  try {
    const out = await platform.extract(url, match, {
      ...run,
      settings: settings ?? {},
      ...(platform.hostProfile ? { hostProfile: platform.hostProfile } : {}),
    });
    return out && withCardFields(platform, out);
  } catch (err) {
    if (err instanceof FetchFailure) return undefined;
    throw err;
  }
}

/** What runPlatform is given: the matched platform and the link, the preview's ports, budget and request. */
export interface RunPlatformOptions {
  url: URL;
  found: MatchedPlatform;
  /** The preview's ports (its route on them); `fetch` is cut to the platform's share of the budget. */
  ports: { fetch: Fetcher; config: PlatformRun['config']; jobs: JobRunner };
  /** The request's time budget. */
  budget: TimeBudget;
  requestId: string;
  /** The caller's language list, already clean (lib/contract/accept-language.ts). */
  acceptLanguage?: string;
  /** The options of the image and media jobs: their own deadline within the budget. */
  jobOptions: RunOptions;
  /** The generic fetch of the link when it already happened (a short link resolved by redirects). */
  page?: FetchResult;
}

/**
 * The platform's preview, its language filled in; undefined when its source failed. Its sources
 * get a share of the time left, so a stalled platform API leaves time for the generic preview.
 */
export async function runPlatform(options: RunPlatformOptions): Promise<PlatformPreview | undefined> {
  const { url, found, ports, jobOptions, page } = options;
  const sources = options.budget.slice(PLATFORM_SHARE);
  let declared: string | undefined;
  let pageTheme: string | undefined;
  // A `metadata-only` host rule: the platform's fields, but none of its media hosted or probed.
  const storing = !hostRulesOf(ports.config).has(url.href, 'metadata-only');
  const jobs = storing ? ports.jobs : NO_JOBS;
  const platformRun: PlatformRun = {
    fetch: budgetedFetcher(ports.fetch, sources),
    config: ports.config,
    jobs,
    requestId: options.requestId,
    deadline: jobOptions.deadline,
    acceptLanguage: options.acceptLanguage,
    page,
    hostImage: async (src) => (src && storing ? hostImage({ url: src }, jobs, jobOptions) : undefined),
    noteLanguage: (tag) => {
      declared ??= normalizeLanguage(tag);
    },
    noteThemeColor: (hex) => {
      pageTheme ??= hex;
    },
  };
  let out: PlatformPreview | undefined;
  try {
    // Undefined, or a source that failed: the generic preview (lib/platforms/types.ts).
    out = await extractPlatform(url, found, platformRun);
  } finally {
    sources.end();
  }
  if (!out) return out;
  const played = withPlayer(options, pageTheme && out.ok ? { ...out, themeColor: pageTheme } : out);
  if (played.language) return played;
  // Platform sources rarely give a language: the page's own declaration, else a reliable
  // detection on the post's words (short captions are not detected reliably: none then).
  const words = [played.title, played.description].filter(Boolean).join('. ');
  return { ...played, language: declared ?? acceptedLanguage(await detectLanguage(words), { strict: true }) };
}

/**
 * The preview with the platform's player as its `embed` (lib/embed/record.ts: embeds on, no
 * `no-embed` on the link or where it led), for an object the platform found (ok).
 */
function withPlayer({ url, found, ports, page }: RunPlatformOptions, out: PlatformPreview): PlatformPreview {
  const player = out.ok ? found.platform.player?.(url, found.match, out) : undefined;
  const urls = [url.href, ...(page?.trail ?? out.trail ?? [])];
  const embed = gatedEmbed(player, out.title, urls, ports.config);
  return embed ? { ...out, embed } : out;
}
