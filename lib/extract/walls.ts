/**
 * Walls: bot challenges, consent interstitials and login redirects that stand in for the page.
 * A wall makes the record ok:false (with the status seen) instead of a preview of the wall.
 *
 * With a forward proxy in `fallback` mode (lib/fetch/proxy-route.ts), the fetcher asks
 * `proxyWorthyWall` of every direct answer: a wall that datacenter addresses meet (every kind but
 * the consent redirect, which follows the country, not the address, and the sign-in walls that no
 * address gets past: an identity provider's sign-in, a 401 asking for credentials) sends the
 * request again through the proxy.
 *
 * Sign-in walls and robot checks are known by their shape on any host: a redirect to a known
 * identity provider's sign-in, a same-site redirect to a sign-in path, a 401 with
 * `WWW-Authenticate`; a small captcha page asking to prove one is human. The full table, with what
 * each gives with and without a proxy, is in docs/proxy.md.
 */
import { hostOf, siteOf, withoutWww } from '../host.js';
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
  | 'identity-provider'
  | 'login-required'
  | 'robot-check'
  | 'access-denied';

export interface WallInput {
  status: number;
  /** The URL asked for and the final URL after redirects. */
  url: string;
  finalUrl: string;
  /** Every URL of the fetch, the asked one first and the final one last (default: those two). */
  trail?: readonly string[];
  headers: Record<string, string | undefined>;
  page?: PageData;
  /** The page's title when it was not parsed (`page` absent): the fetcher's quick look (`titleOf`). */
  title?: string;
  /** The first bytes of the body as latin1, for script markers. */
  head?: string;
  /** The body's length in bytes, when known (a robot check is a small page). */
  size?: number;
}

/** A URL's host without `www.` ('' for no URL). */
const bareHost = (u: string) => withoutWww(hostOf(u));
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
  const finalHost = bareHost(input.finalUrl);
  const startHost = bareHost(input.url);
  const title = (page?.title ?? input.title)?.trim() ?? '';
  const head = input.head ?? '';

  // Consent redirects (YouTube / Google EU consent).
  if (/^consent\.(youtube|google)\.[a-z.]+$/.test(finalHost) && finalHost !== startHost) return 'consent-redirect';

  // Sign-in walls: the link pointed at content and ended on a sign-in page.
  const login = loginWall(input);
  if (login) return login;

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

  // A robot check on any host: a small captcha page asking to prove one is human, no Open Graph title.
  if (!ogTitle && isRobotCheck(head, input.size)) return 'robot-check';

  // Akamai's edge refusal: "Access Denied", a Reference number, errors.edgesuite.net.
  if (status === 403 && (/reference&#32;&#35;|errors\.edgesuite\.net/i.test(head) || /akamaighost/i.test(headers.server ?? ''))) return 'akamai-denied';
  if (status === 403 && /^access denied$/i.test(title)) return 'access-denied';

  // Reddit and others: "You've been blocked by network security."
  if ((status === 403 || status === 429) && /blocked by network security/i.test(head)) return 'network-block';
  // LinkedIn's answer to clients it does not serve.
  if (status === 999) return 'status-999';
  // A 401 that asks for credentials (HTTP authentication): a sign-in wall no address gets past.
  if (status === 401 && headers['www-authenticate'] !== undefined) return 'login-required';
  if (status === 429) return 'rate-limited';
  return undefined;
}

/** The walls no address gets past: the consent redirect (asked of the country), an identity provider's sign-in, a 401's credentials. */
const NOT_PROXY_WORTHY: ReadonlySet<WallKind> = new Set<WallKind>(['consent-redirect', 'identity-provider', 'login-required']);

/** The walls a proxy can get past: all but those no address gets past. */
export function proxyWorthyWall(input: WallInput): WallKind | undefined {
  const wall = detectWall(input);
  return wall && !NOT_PROXY_WORTHY.has(wall) ? wall : undefined;
}

/** The sign-in walls: the record is ok:false with the upstream code LOGIN_REQUIRED. */
const SIGN_IN_WALLS: ReadonlySet<string> = new Set<WallKind>(['login-redirect', 'identity-provider', 'login-required']);

/** The upstream code a wall gives the preview (`x-linklens-upstream-error`), if any. */
export function wallUpstreamError(wall: string | undefined): 'LOGIN_REQUIRED' | undefined {
  return wall && SIGN_IN_WALLS.has(wall) ? 'LOGIN_REQUIRED' : undefined;
}

/**
 * What a sign-in wall's page may still give the record: `same-site` (the sign-in page is on the
 * site of the page the link led to: its name and icon are that site's), `elsewhere` (another site's
 * sign-in, an identity provider's: nothing of it), undefined when the page is no sign-in wall. Its
 * title, description and image are never kept.
 */
export function signInWallSite(wall: string | undefined, trail: readonly string[]): 'same-site' | 'elsewhere' | undefined {
  if (!wall || !SIGN_IN_WALLS.has(wall)) return undefined;
  const final = trail[trail.length - 1] ?? '';
  return siteOf(bareHost(signInFrom(trail))) === siteOf(bareHost(final)) ? 'same-site' : 'elsewhere';
}

/**
 * The page a fetch that ended on a sign-in page was sent away from: the URL before the first
 * sign-in URL of its trail (an identity provider's, or a site's own sign-in path), so a short link
 * (`bit.ly/x` → `github.com/settings` → `github.com/login`) names the page it led to, and a site's
 * own hops into its sign-in (SharePoint's `/_layouts/15/Authenticate.aspx`) are not that page.
 * The link itself when its trail has no sign-in URL or starts on one.
 */
export function signInFrom(trail: readonly string[]): string {
  const first = trail.findIndex((u) => identityProvider(u) !== undefined || isSignInPath(u));
  return first > 0 ? trail[first - 1] : (trail[0] ?? '');
}

/** The `<title>` of an HTML head read as latin1, without parsing the page (the fetcher's look at an answer). */
export function titleOf(head: string): string | undefined {
  const m = /<title[^>]*>([^<]{0,300})<\/title/i.exec(head);
  return m ? m[1].replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim() : undefined;
}

/**
 * The identity providers' sign-in pages: the real hosts and paths a private document redirects a
 * stranger to, as found in public traces (docs/proxy.md lists them with their sources). Hosts are
 * compared without `www.`; `query`, when given, must match the URL's query too.
 */
const IDENTITY_PROVIDERS: { name: string; host: RegExp; path: RegExp; query?: RegExp }[] = [
  // docs.google.com/… → accounts.google.com/ServiceLogin?service=wise&passive=1209600&continue=…&followup=…&ltmpl=docs,
  // then /v3/signin/identifier?…&flowName=GlifWebSignIn (older: /signin/v2/identifier); /accountchooser/signinchooser;
  // a third-party app's Google sign-in: /o/oauth2/auth, /o/oauth2/v2/auth, /signin/oauth.
  { name: 'Google', host: /^accounts\.google\.com$/, path: /^\/(ServiceLogin|AccountChooser|InteractiveLogin|signin|v\d\/signin|o\/oauth2)/i },
  // SharePoint (via its own /_layouts/15/Authenticate.aspx and /_forms/default.aspx), OneDrive, Teams and every Entra app
  // → login.microsoftonline.com/<tenant>/oauth2/authorize, /<tenant>/oauth2/v2.0/authorize, /<tenant>/wsfed, /<tenant>/saml2;
  // consumer accounts → login.live.com/login.srf, /oauth20_authorize.srf. These hosts only sign in: any path counts.
  { name: 'Microsoft', host: /^login\.(microsoftonline\.com|live\.com|microsoft\.com|windows\.net)$/, path: /^\// },
  // Jira, Confluence: <site>.atlassian.net/login?redirectCount=1&dest-url=… → id.atlassian.com/login?continue=…&application=jira
  { name: 'Atlassian', host: /^id\.atlassian\.com$/, path: /^\/(login|step-up|join)/ },
  // <org>.okta.com/app/<app>/<id>/sso/saml?SAMLRequest=… → /login/login.htm?fromURI=…; OIDC: /oauth2/v1/authorize,
  // /oauth2/default/v1/authorize, /oauth2/<server>/v1/authorize; the Identity Engine's /signin/…
  { name: 'Okta', host: /^[a-z0-9-]+\.(okta|okta-emea|oktapreview|okta-gov)\.com$/, path: /^\/(login\/|oauth2\/|app\/|sso\/|signin)/ },
  // <tenant>[.<region>].auth0.com/authorize?… → /u/login?state=… (Universal Login), /login?state=…&client=… (classic), /samlp/<client>
  { name: 'Auth0', host: /^[a-z0-9-]+(\.[a-z]{2})?\.auth0\.com$/, path: /^\/(authorize|login|u\/login|samlp\/)/ },
  // Sign in with Apple: appleid.apple.com/auth/authorize?client_id=…&response_type=code%20id_token&response_mode=form_post;
  // Apple's own sites: developer.apple.com/account/ → idmsa.apple.com/IDMSWebAuth/signin?appIdKey=…&path=…; account.apple.com/sign-in.
  { name: 'Apple', host: /^(appleid|account)\.apple\.com$/, path: /^\/(auth\/authorize|sign-?in)/i },
  { name: 'Apple', host: /^idmsa\.apple\.com$/, path: /^\// },
  // <workspace>.slack.com/archives/… → <workspace>.slack.com/?redir=%2Farchives%2F… (the workspace's sign-in);
  // slack.com/signin?redir=…, /workspace-signin, /ssb/signin.
  { name: 'Slack', host: /^([a-z0-9-]+\.)?slack\.com$/, path: /^\/$/, query: /(^|&)redir=/ },
  { name: 'Slack', host: /^([a-z0-9-]+\.)?slack\.com$/, path: /^\/(signin|workspace-signin|ssb\/signin)/ },
  // www.notion.so/login (its sign-in page; a private page is mostly refused by its app, in the page).
  { name: 'Notion', host: /^notion\.(so|com)$/, path: /^\/login/ },
  // www.dropbox.com/home/… → www.dropbox.com/login?cont=https%3A%2F%2Fwww.dropbox.com%2Fhome%2F…
  { name: 'Dropbox', host: /^dropbox\.com$/, path: /^\/login/ },
  // www.figma.com/login?cont=/…, ?redirect_to=…
  { name: 'Figma', host: /^figma\.com$/, path: /^\/login/ },
  // zoom.us/signin#/login, <account>.zoom.us/signin
  { name: 'Zoom', host: /^([a-z0-9-]+\.)?zoom\.us$/, path: /^\/signin/ },
  // github.com/settings/profile → github.com/login?return_to=https%3A%2F%2Fgithub.com%2Fsettings%2Fprofile (a private repository answers 404)
  { name: 'GitHub', host: /^github\.com$/, path: /^\/(login|session)(\/|$)/ },
  // a private project on gitlab.com → gitlab.com/users/sign_in
  { name: 'GitLab', host: /^gitlab\.com$/, path: /^\/users\/sign_in/ },
];

/** An identity provider's sign-in URL: the provider's name, or undefined. */
export function identityProvider(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const query = u.search.replace(/^\?/, '');
  return IDENTITY_PROVIDERS.find((p) => p.host.test(host) && p.path.test(u.pathname) && (!p.query || p.query.test(query)))?.name;
}

/** A site's own sign-in paths, after an optional language prefix (`/en/login`, `/de-DE/signin`). */
const SIGN_IN_PATH =
  /^(\/[a-z]{2}([-_][a-z]{2})?)?\/(log-?in|sign-?in|sign_in|signon|wp-login\.php|(users?|accounts?|auth|sso|idp|member|members|my|customer|portal)\/(log-?in|sign-?in|sign_in)|sessions?\/new)(\.(aspx?|php|html?|jsp|do))?\/?$/i;
/** A sign-in page named by its last segment (`/Account/Login.aspx`, `/cas/login`) counts only with a return parameter. */
const SIGN_IN_SEGMENT = /\/(log-?in|sign-?in|sign_in|logon|authenticate)(\.(aspx?|php|html?|jsp|do))?\/?$/i;
/** SharePoint's sign-in pages (`/_forms/default.aspx?ReturnUrl=…`, `/_windows/`, `/_login/`, `/_trust/`), also only with a return parameter. */
const SHAREPOINT_SIGN_IN = /^\/_(forms|windows|login|trust)\/(default\.aspx)?$/i;
/** The parameters that carry the asked path back to after the sign-in. */
const RETURN_PARAMS =
  /^(next|return_?to|returnto|continue|redirect|redirect_?to|redirectto|return_?url|returnurl|redirect_?uri|redirect_?url|return|from|fromuri|goto|destination|dest|came_from|service|source|target|redir|cont|dest-?url)$/i;

/** A site's own sign-in URL: a sign-in path, or a sign-in segment (or SharePoint's sign-in page) with a return parameter. */
function isSignInPath(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (SIGN_IN_PATH.test(u.pathname)) return true;
  const named = SIGN_IN_SEGMENT.test(u.pathname) || SHAREPOINT_SIGN_IN.test(u.pathname);
  return named && [...u.searchParams.keys()].some((k) => RETURN_PARAMS.test(k));
}

/** The five platforms' own login walls, older than the shapes (LinkedIn's authwall, Facebook's checkpoint, X's login flow). */
function platformLoginPath(host: string, path: string): boolean {
  if (/(^|\.)instagram\.com$/.test(host)) return /^\/accounts\/login/.test(path);
  if (/(^|\.)(x|twitter)\.com$/.test(host)) return /^\/i\/flow\/login/.test(path) || /^\/login\/?$/.test(path);
  if (/(^|\.)facebook\.com$/.test(host)) return /^\/(login|checkpoint)/.test(path);
  if (/(^|\.)linkedin\.com$/.test(host)) return /^\/(authwall|login|uas\/login)/.test(path);
  if (/(^|\.)tiktok\.com$/.test(host)) return /^\/login/.test(path);
  return false;
}

/**
 * A sign-in wall by its shape: the link, itself no sign-in page, was redirected to an identity
 * provider's sign-in (`identity-provider`) or to a sign-in path of the site it led to
 * (`login-redirect`, the five platforms' own login paths too); or it answered 401 asking for
 * credentials (below, after the bot walls that answer 401 too).
 */
function loginWall(input: WallInput): WallKind | undefined {
  const { url, finalUrl } = input;
  const finalHost = bareHost(finalUrl);
  const finalPath = pathOf(finalUrl);
  if (finalHost === bareHost(url) && finalPath === pathOf(url)) return undefined;
  if (platformLoginPath(finalHost, finalPath)) return 'login-redirect';
  // The link asked for a sign-in page: it is the page, not a wall.
  if (identityProvider(url) || isSignInPath(url)) return undefined;
  if (identityProvider(finalUrl)) return 'identity-provider';
  const from = signInFrom(input.trail ?? [url, finalUrl]);
  if (siteOf(finalHost) === siteOf(bareHost(from)) && isSignInPath(finalUrl)) return 'login-redirect';
  return undefined;
}

/** The captcha widgets: reCAPTCHA, hCaptcha, Turnstile (their scripts and their elements). */
const CAPTCHA_WIDGET =
  /\b(g-recaptcha|h-captcha|cf-turnstile)\b|google\.com\/recaptcha\/|recaptcha\.net\/recaptcha|gstatic\.com\/recaptcha|hcaptcha\.com\/1\/api|challenges\.cloudflare\.com\/turnstile/i;
/** An image captcha: an image named captcha beside a text field. */
const IMAGE_CAPTCHA = /<img[^>]+captcha[^>]*>/i;
const TEXT_FIELD = /<input(?![^>]*type=["']?(hidden|submit|button|checkbox|radio)\b)[^>]*>/i;
/** The words that ask to prove one is human. */
const YOU_ARE = "you(?: are|(?:&#39;|'|’)re)";
const HUMAN_CHECK = new RegExp(
  `not a (ro)?bot|(verify|prove|confirm) (that )?${YOU_ARE} (a )?human|are you (a )?(human|robot)|human verification|verifying ${YOU_ARE} human|complete the (security check|captcha)|enter the characters you see`,
  'i',
);
/** A robot check is a small page: this much visible text at most, this many bytes at most. */
const ROBOT_CHECK_TEXT = 2_000;
const ROBOT_CHECK_BYTES = 256 * 1024;

/** A robot check by its shape: a captcha form, words asking to prove one is human, little else. */
function isRobotCheck(head: string, size = head.length): boolean {
  if (size > ROBOT_CHECK_BYTES || !/<form\b/i.test(head)) return false;
  const captcha = CAPTCHA_WIDGET.test(head) || (IMAGE_CAPTCHA.test(head) && TEXT_FIELD.test(head));
  if (!captcha) return false;
  const text = head
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ');
  return text.length <= ROBOT_CHECK_TEXT && HUMAN_CHECK.test(text);
}
