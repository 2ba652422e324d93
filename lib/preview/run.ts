/**
 * One preview's run (lib/preview/preview-link.ts's pipeline): what every step draws on, so each takes what it
 * needs by name: the link and its record's base, the ports (with the preview's proxy route and
 * Server-Timing on them, the fetcher cut to the budget), the request, its budget, the cut-off
 * record and what the host rules say of the link (`metadata-only`).
 */
import { budgetedFetcher, type TimeBudget } from '../budget.js';
import type { Config } from '../config.js';
import type { LinkRecord } from '../contract/link.js';
import { type DefaultHints, finalize } from '../extract/defaults.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { RouteState } from '../fetch/proxy-route.js';
import { routedFetcher } from '../fetch/safe-fetch.js';
import type { Fetcher } from '../fetch/types.js';
import { type HostedImages, hostImages, type ImageSources } from '../media/host-images.js';
import { PLATFORM_REGISTRY } from '../platforms/index.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { JobRunner, RunOptions } from '../ports.js';
import { type PhaseTimer, timedJobRunner } from '../timing.js';
import type { Base } from './record.js';
import type { PreviewContext, PreviewPorts, RenderNote, SoFar } from './types.js';

/** What a Run is made of: the link and its record's base, the ports, the request, its budget, the cut-off record and the route. */
export interface RunInit {
  link: string;
  base: Base;
  ports: PreviewPorts;
  ctx: PreviewContext;
  budget: TimeBudget;
  sofar: SoFar;
  /** The preview's one proxy route, put on its ports. */
  route: RouteState;
}

/**
 * One preview's run: what every step of the pipeline draws on, so each takes what it needs by
 * name. Its ports carry the preview's route (the proxy route of its hosts) and time each job
 * under its phase of Server-Timing; `fetch` is also cut to the budget.
 */
export class Run {
  readonly ports: PreviewPorts;
  /** The ports' fetcher under the request's budget. */
  readonly fetch: Fetcher;
  readonly timer: PhaseTimer;
  readonly platforms: PlatformRegistry;
  /** Whether the page was rendered in the browser, and why (for the log line and the metric). */
  rendered?: RenderNote;
  /** The link answered with a sign-in wall: LOGIN_REQUIRED (lib/extract/walls.ts). */
  upstreamError?: string;

  readonly link: string;
  readonly base: Base;
  readonly ctx: PreviewContext;
  readonly budget: TimeBudget;
  readonly sofar: SoFar;

  constructor({ link, base, ports, ctx, budget, sofar, route }: RunInit) {
    this.link = link;
    this.base = base;
    this.ctx = ctx;
    this.budget = budget;
    this.sofar = sofar;
    this.ports = { ...ports, fetch: routedFetcher(ports.fetch, route), jobs: routedJobRunner(timedJobRunner(ports.jobs, ctx.timer), route) };
    this.fetch = budgetedFetcher(this.ports.fetch, budget);
    this.timer = ctx.timer;
    this.platforms = ports.platforms ?? PLATFORM_REGISTRY;
  }

  get config(): Config {
    return this.ports.config;
  }

  /**
   * The record a preview cut off from here on answers (its budget ending before the next step):
   * a copy of `record` as it is when the cut comes, with the defaults `hints` give (copied now).
   */
  cutOff(record: LinkRecord, hints?: DefaultHints): void {
    const given = hints && { ...hints };
    this.sofar.outcome = () => ({ record: finalize(structuredClone(record), given) });
  }

  /**
   * True when a host rule says `metadata-only` for the link or `url` (where it led): the record's
   * fields, but nothing of the site stored (no image, icon, page versions, screenshot or media files).
   */
  metadataOnly(url?: string): boolean {
    const rules = hostRulesOf(this.config);
    return rules.has(this.link, 'metadata-only') || (url !== undefined && rules.has(url, 'metadata-only'));
  }

  /**
   * Hosts the images, less those a `metadata-only` host rule keeps from being stored (another
   * page's image or icon on such a site is not copied either).
   */
  hostImages(sources: ImageSources, options: RunOptions): Promise<HostedImages> {
    const rules = hostRulesOf(this.config);
    const kept = (url: string) => !rules.has(url, 'metadata-only');
    const { image, icons, ...rest } = sources;
    return hostImages(
      { ...rest, ...(image && kept(image.url) ? { image } : {}), ...(icons ? { icons: icons.filter((i) => kept(i.url)) } : {}) },
      this.ports.jobs,
      options,
    );
  }

  /** The options of jobs asked for from now: their own deadline (LINKPREVIEW_JOB_WAIT_MS from now), within the budget. */
  jobOptions(): RunOptions {
    return { requestId: this.ctx.requestId, deadline: this.budget.until(Date.now() + this.config.jobWaitMs) };
  }
}

/** The runner with the preview's route on every run that has none of its own. */
function routedJobRunner(jobs: JobRunner, route: RouteState): JobRunner {
  return { sharesCpu: jobs.sharesCpu, run: (list, options) => jobs.run(list, options.route ? options : { ...options, route }) };
}
