/**
 * Walls: bot challenges, consent interstitials and login redirects that stand in for the page.
 * A wall makes the record ok:false (with the status seen) instead of a preview of the wall.
 *
 * With a forward proxy in `fallback` mode (lib/fetch/proxy-route.ts), the fetcher asks
 * `proxyWorthyWall` of every direct answer: a wall that datacenter addresses meet (every kind but
 * the consent redirect, which follows the country, not the address) sends the request again
 * through the proxy.
 */
import type { PageData } from './page-data.js';

export type WallKind =
  | 'cloudflare-challenge'
  | 'amazon-robot-check'
  | 'datadome'
  | 'perimeterx'
  | 'akamai-denied'
  | 'network-block'
  | 'status-999'
  | 'rate-limited'
  | 'consent-redirect'
  | 'login-redirect'
  | 'access-denied';

export interface WallInput {
  status: number;
  /** The URL asked for and the final URL after redirects. */
  url: string;
  finalUrl: string;
  headers: Record<string, string | undefined>;
  page?: PageData;
  /** The page's title when it was not parsed (`page` absent): the fetcher's quick look (`titleOf`). */
  title?: string;
  /** The first bytes of the body as latin1, for script markers. */
  head?: string;
}

const hostOf = (u: string) => {
  try {
    return new URL(u).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
};
const pathOf = (u: string) => {
  try {
    return new URL(u).pathname;
  } catch {
    return '';
  }
};

/** Titles that are only ever the wall itself; such a title is never kept as the preview's title. */
const WALL_TITLES = [
  /^just a moment\.*$/i,
  /^attention required!? \| cloudflare$/i,
  /^one more step$/i,
  /^please wait\.*$/i,
  /^robot check$/i,
  /^amazon\.[a-z.]+ ?(:|-)? ?robot check$/i,
  /^access denied$/i,
  /^access to this page has been denied\.?$/i,
  /^are you a robot\??$/i,
  /^security check$/i,
  /^ddos-guard$/i,
  /^checking your browser\.*$/i,
  /^verifying you are human\.*$/i,
  /^before you continue( to youtube)?$/i,
  /^bevor sie zu youtube weitergehen$/i,
  /^captcha$/i,
  /^pardon our interruption\.*$/i,
  /^blocked$/i,
  /^whoa there, pardner!?$/i,
];

export function isWallTitle(t: string | undefined): boolean {
  return !!t && WALL_TITLES.some((re) => re.test(t.trim()));
}

export function detectWall(input: WallInput): WallKind | undefined {
  const { page, headers, status } = input;
  const finalHost = hostOf(input.finalUrl);
  const startHost = hostOf(input.url);
  const title = (page?.title ?? input.title)?.trim() ?? '';
  const head = input.head ?? '';

  // Consent redirects (YouTube / Google EU consent).
  if (/^consent\.(youtube|google)\.[a-z.]+$/.test(finalHost) && finalHost !== startHost) return 'consent-redirect';

  // Login redirects: the link pointed at content and ended on a login page.
  const finalPath = pathOf(input.finalUrl);
  if (finalHost !== startHost || pathOf(input.url) !== finalPath) {
    if (/(^|\.)instagram\.com$/.test(finalHost) && /^\/accounts\/login/.test(finalPath)) return 'login-redirect';
    if (/(^|\.)(x|twitter)\.com$/.test(finalHost) && (/^\/i\/flow\/login/.test(finalPath) || /^\/login\/?$/.test(finalPath))) return 'login-redirect';
    if (/(^|\.)facebook\.com$/.test(finalHost) && /^\/(login|checkpoint)/.test(finalPath)) return 'login-redirect';
    if (/(^|\.)linkedin\.com$/.test(finalHost) && /^\/(authwall|login|uas\/login)/.test(finalPath)) return 'login-redirect';
    if (/(^|\.)tiktok\.com$/.test(finalHost) && /^\/login/.test(finalPath)) return 'login-redirect';
  }

  // Cloudflare challenge / block pages.
  if (headers['cf-mitigated'] === 'challenge') return 'cloudflare-challenge';
  if (/^just a moment\.*$/i.test(title) || /^attention required!? \| cloudflare$/i.test(title) || /^checking your browser/i.test(title))
    return 'cloudflare-challenge';
  if (
    (status === 403 || status === 503 || status === 429) &&
    /cdn-cgi\/challenge-platform|cf-browser-verification|cf_chl_opt|challenges\.cloudflare\.com/i.test(head)
  )
    return 'cloudflare-challenge';

  // Amazon's robot check.
  if (/robot check/i.test(title) && /amazon/i.test(`${finalHost} ${title}`)) return 'amazon-robot-check';
  if (/opfcaptcha|\/errors\/validatecaptcha/i.test(head) && /amazon/i.test(finalHost)) return 'amazon-robot-check';

  // DataDome / PerimeterX challenge pages (their own script hosts).
  if (headers['x-datadome'] !== undefined || headers['x-dd-b'] !== undefined) {
    if (status === 403 || status === 401 || /captcha-delivery\.com/i.test(head)) return 'datadome';
  }
  const ogTitle = page ? page.metas.some((m) => m.property === 'og:title') : /property=["']?og:title/i.test(head);
  if (/geo\.captcha-delivery\.com|ct\.captcha-delivery\.com/i.test(head) && !ogTitle) return 'datadome';
  if (/^access to this page has been denied/i.test(title) || (/px-captcha|_pxAppId|perimeterx/i.test(head) && status === 403)) return 'perimeterx';

  if (/press (&amp;|&) hold/i.test(head) && (status === 403 || /px-captcha|perimeterx|_pxAppId/i.test(head))) return 'perimeterx';

  // Akamai's edge refusal: "Access Denied", a Reference number, errors.edgesuite.net.
  if (status === 403 && (/reference&#32;&#35;|errors\.edgesuite\.net/i.test(head) || /akamaighost/i.test(headers.server ?? ''))) return 'akamai-denied';
  if (status === 403 && /^access denied$/i.test(title)) return 'access-denied';

  // Reddit and others: "You've been blocked by network security."
  if ((status === 403 || status === 429) && /blocked by network security/i.test(head)) return 'network-block';
  // LinkedIn's answer to clients it does not serve.
  if (status === 999) return 'status-999';
  if (status === 429) return 'rate-limited';
  return undefined;
}

/** The walls a proxy can get past: all but the consent redirect (asked of the country, not the address). */
export function proxyWorthyWall(input: WallInput): WallKind | undefined {
  const wall = detectWall(input);
  return wall === 'consent-redirect' ? undefined : wall;
}

/** The `<title>` of an HTML head read as latin1, without parsing the page (the fetcher's look at an answer). */
export function titleOf(head: string): string | undefined {
  const m = /<title[^>]*>([^<]{0,300})<\/title/i.exec(head);
  return m ? m[1].replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim() : undefined;
}
