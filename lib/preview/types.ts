/**
 * The preview's contract (lib/preview/preview-link.ts's `previewLink`): the ports it runs on, the request's
 * context, and the outcome it gives (the record, with how the fetch went and what was rendered).
 */
import type { TimeBudget } from '../budget.js';
import type { Config } from '../config.js';
import type { LinkRecord } from '../contract/link.js';
import type { RouteSummary, RouteTaken } from '../fetch/proxy-route.js';
import type { Fetcher } from '../fetch/types.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { BlobStore, JobRunner } from '../ports.js';
import type { PhaseTimer } from '../timing.js';

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
  /** The caller's language list, already clean (lib/contract/accept-language.ts): passed on to the outbound fetch. */
  acceptLanguage?: string;
  /** The request's time budget. Default: LINKPREVIEW_REQUEST_BUDGET_MS from now. */
  budget?: TimeBudget;
  /** Handed the pipeline's record so far before its first await (a flight's followers read it: lib/preview/flights.ts). */
  watch?: (sofar: SoFar) => void;
}

export interface PreviewOutcome {
  record: LinkRecord;
  /** Why the link could not be fetched, when it could not (for logs and a response header). */
  upstreamError?: string;
  /** The budget ended before every phase was done: the record is what was built by then. */
  outOfTime?: boolean;
  /** How the link's fetch went (direct, proxy, proxy after a wall), and what the preview's route saw. */
  route: { taken: RouteTaken } & RouteSummary;
  /** The page was rendered in the browser (or a render was tried): why, and whether it gave a DOM. */
  rendered?: RenderNote;
}

export interface RenderNote {
  reason: string;
  ok: boolean;
  error?: string;
}

/** What the pipeline gives: the outcome, the route of the link's own fetch when it ran. */
export type PipelineOutcome = Omit<PreviewOutcome, 'route'> & { route?: { taken: RouteTaken } };

/** The outcome to return if the budget ends now; each phase that completes replaces it with what it built. */
export interface SoFar {
  outcome(): PipelineOutcome;
}
