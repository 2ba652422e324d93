/**
 * The parts a preview's record is built from (lib/preview/preview-link.ts runs the steps that give them): the
 * base every record starts with, the record of a link that did not answer or that answered, a
 * PAGE's fields, a platform's preview, the redirect trail, and the assembly of what the jobs
 * gave. Also how the link's fetch went (`linkRoute`), from the record and the preview's route.
 */
import type { LinkRecord } from '../contract/link.js';
import { type DefaultHints, finalize } from '../extract/defaults.js';
import type { OEmbedField, PageFields, PageRead } from '../extract/extract-page.js';
import { type SiteFacts, themeColor } from '../extract/site-name.js';
import { detectWall, wallUpstreamError } from '../extract/walls.js';
import type { FetchFailure } from '../fetch/fetch-failure.js';
import { flatHeaders } from '../fetch/headers.js';
import { type RouteSummary, type RouteTaken, routeOf } from '../fetch/proxy-route.js';
import { retryAfterMs } from '../fetch/slow-down.js';
import type { FetchResult } from '../fetch/types.js';
import { hostOf } from '../host.js';
import type { HostedImages } from '../media/host-images.js';
import type { DescribedPage } from '../page/describe-page.js';
import type { PlatformPreview } from '../platforms/types.js';
import type { PreviewOutcome } from './types.js';

/** The fields every record of the link starts with. */
export type Base = Pick<LinkRecord, 'id' | 'requestId' | 'updatedAt' | 'url' | 'domain'>;

/** The record of a link that did not answer: ok:false with the status seen and the trail so far. */
export function unanswered(base: Base, err: FetchFailure): Pick<PreviewOutcome, 'record' | 'upstreamError'> {
  return {
    record: { ...base, ok: false, type: 'UNKNOWN', status: err.status, ...redirection(err.trail), ...(err.retryAfter ? { retryAfter: err.retryAfter } : {}) },
    upstreamError: err.code,
  };
}

/**
 * The record of a link that answered, before anything is read from its body; a 429 or 503 that
 * asks to slow down carries the seconds before its host is asked again (`retryAfterMaxMs`: the
 * operator's cap, lib/fetch/slow-down.ts).
 */
export function answeredRecord(base: Base, res: FetchResult, retryAfterMaxMs = 0): LinkRecord {
  const asked = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers['retry-after'], Date.now()) : undefined;
  const retryAfter = asked && retryAfterMaxMs > 0 ? Math.max(1, Math.ceil(Math.min(asked, retryAfterMaxMs) / 1000)) : undefined;
  return {
    ...base,
    ok: res.status >= 200 && res.status < 300,
    type: 'UNKNOWN',
    status: res.status,
    size: res.declaredSize ?? res.body.length,
    ...redirection(res.trail),
    ...(retryAfter ? { retryAfter } : {}),
  };
}

/**
 * The upstream code of a link that answered with a sign-in wall (LOGIN_REQUIRED): its page's wall,
 * or, a body that is no page, a 401 asking for credentials.
 */
export function wallUpstream(res: FetchResult, read: PageRead | undefined): string | undefined {
  const wall = read ? read.wall : detectWall({ status: res.status, url: res.url, finalUrl: res.finalUrl, headers: flatHeaders(res.headers) });
  return wallUpstreamError(wall);
}

/**
 * A PAGE's record: its fields (the card's: site name, author, publication date, theme colour, with
 * the manifest's `site` facts where the page states none), and ok:false on a wall (bot challenge,
 * consent or login redirect), whose page gives no field (`pageFields`: no title, description or
 * image of the wall, whatever its status).
 */
export function pageRecord(typed: LinkRecord, read: PageRead, fields: PageFields, more: { language?: string; site?: SiteFacts } = {}): LinkRecord {
  const siteName = fields.siteName ?? more.site?.name;
  const theme = themeColor(read.page, more.site);
  return {
    ...typed,
    ...(fields.title ? { title: fields.title } : {}),
    ...(fields.description ? { description: fields.description } : {}),
    ...(more.language ? { language: more.language } : {}),
    ...(siteName ? { siteName } : {}),
    ...(fields.author ? { author: fields.author } : {}),
    ...(fields.publishedAt ? { publishedAt: fields.publishedAt } : {}),
    ...(theme ? { themeColor: theme } : {}),
    ...(read.wall ? { ok: false } : {}),
  };
}

export function pageHints(fields: PageFields): DefaultHints {
  return fields.siteName ? { siteName: fields.siteName } : {};
}

/**
 * The fields oEmbed can fill that the record uses: the title and the image, and the site name when
 * the page has no description (it is the description of last resort). The author is taken from oEmbed
 * when it was fetched for these, never fetched for itself.
 */
export function recordOEmbedFields(found: PageFields): OEmbedField[] {
  return found.description ? ['title', 'image'] : ['title', 'image', 'siteName'];
}

/** What the jobs step gives: the record with its final fields, the defaults' hints, the hosted images and the `page` object. */
export interface Done {
  record: LinkRecord;
  hints: DefaultHints;
  hosted: HostedImages;
  described?: DescribedPage;
}

/** 4. The record with what the jobs gave, its defaults filled in. */
export function assemble(done: Done): LinkRecord {
  const record: LinkRecord = { ...done.record };
  const { hosted, described } = done;
  if (hosted.image) record.image = hosted.image;
  if (hosted.icon) record.icon = hosted.icon;
  if (described?.page) record.page = described.page;
  if (!record.description && described?.excerpt) record.description = described.excerpt;
  return finalize(record, done.hints);
}

/** The record of a platform's preview, before its images. */
export function platformFields(out: PlatformPreview, base: Base, page?: FetchResult): LinkRecord {
  const trail = page?.trail ?? out.trail ?? [base.url];
  return {
    ...base,
    ok: out.ok,
    type: out.type,
    status: out.status,
    ...redirection(trail),
    ...(out.title !== undefined ? { title: out.title } : {}),
    ...(out.description !== undefined ? { description: out.description } : {}),
    ...(out.language ? { language: out.language } : {}),
    ...(out.siteName ? { siteName: out.siteName } : {}),
    ...(out.author ? { author: out.author } : {}),
    ...(out.publishedAt ? { publishedAt: out.publishedAt } : {}),
    ...(out.themeColor && out.ok ? { themeColor: out.themeColor } : {}),
    ...(out.embed ? { embed: out.embed } : {}),
    ...out.fields,
  };
}

export function redirection(trail: string[]): Pick<LinkRecord, 'redirected' | 'redirectionUrl' | 'redirectionCount' | 'redirectionTrail'> {
  const redirected = trail.length > 1;
  return {
    redirected,
    ...(redirected ? { redirectionUrl: trail[trail.length - 1] } : {}),
    redirectionCount: trail.length - 1,
    redirectionTrail: trail,
  };
}

/**
 * How the link's fetch went. A link fetched through the proxy because an earlier fetch of the
 * preview met a wall on its host (a platform's source) went there after a wall too.
 */
export function linkRoute(taken: RouteTaken | undefined, summary: RouteSummary, record: LinkRecord): RouteTaken {
  if (!taken) return routeOf(summary);
  if (taken !== 'proxy') return taken;
  const hosts = [record.url, record.redirectionUrl].flatMap((u) => (u ? [hostOf(u)] : []));
  return summary.walls.some((w) => hosts.includes(w.host)) ? 'proxy-after-wall' : taken;
}
