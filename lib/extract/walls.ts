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
 * A wall is told by evidence, never by a word: the status, the vendor's headers, the challenge's
 * script or form, the page's shape (its size, its text, a missing Open Graph title, a password
 * field) and the redirect it made. A title alone never makes a wall, and a page with an Open Graph
 * title and real content is none (only a vendor's header or the status can still tell one).
 * Sign-in walls and robot checks are known by their shape on any host: a redirect to a known
 * identity provider's sign-in or to a SAML or OpenID Connect request, a same-site redirect to a
 * sign-in path whose page looks like one, an empty page's meta refresh or script redirect to a
 * sign-in, a login form as the only content, a 401 with `WWW-Authenticate`; a small captcha page
 * whose form is only the captcha, asking to prove one is human. The full table, with what each
 * gives with and without a proxy, is in docs/proxy.md; the corpus that measures it is
 * test/extract/wall-corpus/.
 */
import { hostOf, withoutWww } from '../host.js';
import { siteOf } from '../site.js';
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
  | 'login-form'
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

/**
 * Titles that walls give themselves. A title alone never makes a wall: such a title counts only
 * with the rest of a wall's shape (a refusing status, a small page with no Open Graph title).
 */
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

/** A page's shape, what a wall is told by besides its headers and status. */
interface Shape {
  head: string;
  title: string;
  /** The page has an Open Graph title. */
  ogTitle: boolean;
  /** The length of its visible text (the parsed page's, else the first 32 KB's and the bytes not seen). */
  text: number;
  /** Its length in bytes. */
  size: number;
  /** It has a password field. */
  password: boolean;
  /** Visible text was read (a page or the first bytes of one); false for a redirect seen without a body. */
  seen: boolean;
}

/** No more visible text than this: the page has no content of its own (a redirect page, a challenge, an app shell). */
const NO_CONTENT = 200;
/** An Open Graph title and more visible text than this: an article, never a page-shaped wall. */
const REAL_CONTENT = 500;

/** The visible text of an HTML head read as latin1: tags, scripts, styles and `<noscript>` dropped. */
function visibleText(head: string): string {
  return head
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;|&#160;/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function shapeOf(input: WallInput): Shape {
  const { page } = input;
  const head = input.head ?? '';
  // The parsed page's whole text when there is one (the first 32 KB may be all scripts and styles);
  // with only the first bytes (the fetcher's look), the bytes not seen may all be text.
  const unseen = Math.max(0, (input.size ?? head.length) - head.length);
  const text = page ? page.text.replace(/\s+/g, ' ').trim().length : visibleText(head).length + unseen;
  return {
    head,
    title: (page?.title ?? input.title)?.trim() ?? '',
    ogTitle: page ? page.metas.some((m) => m.property === 'og:title' && m.content.trim() !== '') : /property=["']?og:title/i.test(head),
    text,
    size: input.size ?? head.length,
    password: /<input\b[^>]*\btype\s*=\s*["']?password\b/i.test(head),
    seen: head !== '' || page !== undefined,
  };
}

/** An article: an Open Graph title and real content. Never a wall by its page (a vendor's header or the status may still tell one). */
const isArticle = (s: Shape) => s.ogTitle && s.text > REAL_CONTENT;

/** A refusing status: the ones bot walls answer with. */
const REFUSING = new Set([403, 405, 429, 503]);

/** Google's and YouTube's EU consent host (`consent.youtube.com`, `consent.google.de`). */
const CONSENT_HOST = /^consent\.(youtube|google)\.[a-z.]+$/;

/** Google's or YouTube's consent interstitial: on its own host, or a `/ml` or `/consent` path of theirs carrying the way back (`continue`). */
export function isConsentPage(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const host = bareHost(url);
  if (CONSENT_HOST.test(host)) return true;
  return /^\/(ml|consent)/.test(u.pathname) && u.searchParams.has('continue') && /(^|\.)(youtube|google)\.[a-z.]+$/.test(host);
}

export function detectWall(input: WallInput): WallKind | undefined {
  const finalHost = bareHost(input.finalUrl);
  // Consent redirects (YouTube / Google EU consent).
  if (isConsentPage(input.finalUrl) && finalHost !== bareHost(input.url)) return 'consent-redirect';
  const shape = shapeOf(input);
  // Sign-in walls: the link pointed at content and ended on a sign-in page.
  return loginWall(input, shape) ?? vendorWall(input, shape) ?? pageWall(input, shape) ?? statusWall(input, shape);
}

/** Cloudflare's challenge and block pages: its header, or a refusing status with its challenge script or error page. */
const CF_CHALLENGE =
  /window\._cf_chl_opt|\/cdn-cgi\/challenge-platform\/h\/[a-z]\/(orchestrate|jsch|managed)\/|\bcf-browser-verification\b|challenges\.cloudflare\.com\/cdn-cgi\//i;
const CF_BLOCK = /\bid=["']?cf-error-details\b|\/cdn-cgi\/styles\/cf\.errors\.css/i;
/** DataDome's challenge: its script or captcha frame (a script tag's source, its `dd` object, an iframe). */
const DATADOME_CHALLENGE =
  /<(script|iframe)\b[^>]*\bsrc=["']?https?:\/\/(ct|geo|interstitial)\.captcha-delivery\.com\/|'host'\s*:\s*'geo\.captcha-delivery\.com'/i;
/**
 * PerimeterX (HUMAN): its captcha element and script, its page globals, its first-party paths. Its
 * sensor (`window._pxAppId`, `client.perimeterx.net`) is on every page of the sites it protects, so
 * those count only with a refusing status; on another status, only its captcha element on a small page.
 */
const PX_CHALLENGE =
  /\bid=["']?px-captcha\b|window\._px(AppId|Uuid|Vid|HostUrl|JsClientSrc|Captcha)\b|_pxCaptcha|captcha\.px-(cdn|cloud)\.net\/|px-cdn\.perimeterx\.net\/|["'(]\/_px\w*\//i;
const PX_CAPTCHA = /\bid=["']?px-captcha\b/i;
/** Amazon's robot check: its captcha form (or its newer captcha script). */
const AMAZON_CHALLENGE = /<form\b[^>]*\baction=["']?[^"'>\s]*\/errors\/validatecaptcha|opfcaptcha(-prod)?\.s3\.amazonaws\.com|opfcaptcha\.amazon\./i;
/** Akamai's edge refusal: the Reference number and errors.edgesuite.net of its "Access Denied" page. */
const AKAMAI_REFUSAL = /reference&#32;&#35;[\d&#;.a-f]+|errors(&#46;|\.)edgesuite(&#46;|\.)net/i;

/** The bot walls of the vendors, by their headers, their status and their challenge's script or form, never by a title. */
function vendorWall(input: WallInput, shape: Shape): WallKind | undefined {
  const { headers, status } = input;
  const { head } = shape;
  const refusing = REFUSING.has(status);
  const cloudflare = /cloudflare/i.test(headers.server ?? '') || headers['cf-ray'] !== undefined;
  if (headers['cf-mitigated'] === 'challenge') return 'cloudflare-challenge';
  if (refusing && !isArticle(shape) && CF_CHALLENGE.test(head)) return 'cloudflare-challenge';
  if (status === 403 && cloudflare && !isArticle(shape) && CF_BLOCK.test(head)) return 'cloudflare-challenge';
  if (refusing && cloudflare && !shape.ogTitle && shape.text <= REAL_CONTENT && isWallTitle(shape.title)) return 'cloudflare-challenge';

  // Amazon's robot check, on Amazon's own sites only.
  if (/^amazon\.[a-z.]+$/.test(siteOf(bareHost(input.finalUrl))) && !isArticle(shape) && AMAZON_CHALLENGE.test(head)) return 'amazon-robot-check';

  const datadome = headers['x-datadome'] !== undefined || headers['x-dd-b'] !== undefined;
  if (datadome && (status === 401 || refusing || DATADOME_CHALLENGE.test(head))) return 'datadome';
  if (refusing && !isArticle(shape) && DATADOME_CHALLENGE.test(head)) return 'datadome';
  if (refusing && !isArticle(shape) && PX_CHALLENGE.test(head)) return 'perimeterx';
  if (!shape.ogTitle && shape.text <= ROBOT_CHECK_TEXT && PX_CAPTCHA.test(head)) return 'perimeterx';

  if (status === 403 && (/akamaighost/i.test(headers.server ?? '') || (!isArticle(shape) && AKAMAI_REFUSAL.test(head)))) return 'akamai-denied';
  return undefined;
}

/**
 * The walls a page is by its own shape, on any host: a robot check (a small captcha form asking to
 * prove one is human), a meta refresh or script redirect from an empty page to a sign-in, a login
 * form as the only content.
 */
function pageWall(input: WallInput, shape: Shape): WallKind | undefined {
  if (!shape.ogTitle && isRobotCheck(shape, input.status)) return 'robot-check';
  if (!shape.seen || isArticle(shape) || isSignInUrl(input.url)) return undefined;
  // An empty 2xx page that sends its reader on to a sign-in (a refusing status tells its own wall).
  if (input.status >= 200 && input.status < 300 && shape.text <= NO_CONTENT) {
    const moved = inPageRedirects(shape.head, input.finalUrl).map((to) => signInTarget(input, to));
    const wall = moved.find((w) => w !== undefined);
    if (wall) return wall;
  }
  // A login form as the only content: a password field, little text, no Open Graph title, on a URL that is no sign-in page.
  if (shape.password && !shape.ogTitle && shape.text <= LOGIN_FORM_TEXT && !isSignInUrl(input.finalUrl)) return 'login-form';
  return undefined;
}

/** A login form page has at most this much visible text. */
const LOGIN_FORM_TEXT = 1_000;

/** The walls told by the status (and a header or a few words with it). */
function statusWall(input: WallInput, shape: Shape): WallKind | undefined {
  const { headers, status } = input;
  // A refusal titled like a wall, small and with no Open Graph title ("Access Denied" 403 from a CDN or a server).
  if (status === 403 && /^access denied$/i.test(shape.title) && !shape.ogTitle && shape.text <= REAL_CONTENT) return 'access-denied';
  // Reddit and others: "You've been blocked by network security."
  if ((status === 403 || status === 429) && /blocked by network security/i.test(shape.head)) return 'network-block';
  // LinkedIn's answer to clients it does not serve.
  if (status === 999) return 'status-999';
  // A 401 that asks for credentials (HTTP authentication): a sign-in wall no address gets past.
  if (status === 401 && headers['www-authenticate'] !== undefined) return 'login-required';
  if (status === 429) return 'rate-limited';
  // Another refusal with a wall's title and a wall's shape.
  if (REFUSING.has(status) && isWallTitle(shape.title) && !shape.ogTitle && shape.text <= REAL_CONTENT) return 'robot-check';
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
const SIGN_IN_WALLS: ReadonlySet<string> = new Set<WallKind>(['login-redirect', 'identity-provider', 'login-required', 'login-form']);

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

/** An identity provider's sign-in URL: the provider's name (a known provider's, else its protocol's), or undefined. */
export function identityProvider(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const query = u.search.replace(/^\?/, '');
  return IDENTITY_PROVIDERS.find((p) => p.host.test(host) && p.path.test(u.pathname) && (!p.query || p.query.test(query)))?.name ?? protocolSignIn(u);
}

/**
 * A sign-in by its protocol, on any host: a SAML request (`SAMLRequest`, to `/saml2`, Shibboleth's
 * `/idp/profile/SAML2/Redirect/SSO`, AD FS's `/adfs/ls/`, …), or an OpenID Connect or OAuth
 * authorization request (`redirect_uri` to Keycloak's `/realms/<realm>/protocol/openid-connect/auth`,
 * `/oauth2/authorize`, `/oauth2/v2.0/authorize`, `/oauth/authorize`, `/connect/authorize`, `/authorize`).
 */
const AUTHORIZE_PATH = /\/(protocol\/openid-connect\/auth|saml2|authorize)\/?$/i;
function protocolSignIn(u: URL): string | undefined {
  const keys = [...u.searchParams.keys()];
  if (keys.includes('SAMLRequest')) return 'SAML';
  if (!keys.some((k) => k.toLowerCase() === 'redirect_uri') || !AUTHORIZE_PATH.test(u.pathname)) return undefined;
  return /openid-connect/i.test(u.pathname) ? 'OpenID Connect' : 'OAuth';
}

/** An identity provider's sign-in URL or a site's own sign-in path. */
function isSignInUrl(url: string): boolean {
  return identityProvider(url) !== undefined || isSignInPath(url);
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
 * provider's sign-in (`identity-provider`: a known provider, or a SAML or OpenID Connect request on
 * any host, the last hop or the one the sign-in page is served after), to the five platforms' own
 * login paths, or to a sign-in path of the site it led to whose page looks like one (a password
 * form, or no content: `login-redirect`); a sign-in path serving an article is no wall.
 */
function loginWall(input: WallInput, shape: Shape): WallKind | undefined {
  const { url, finalUrl } = input;
  const finalHost = bareHost(finalUrl);
  const finalPath = pathOf(finalUrl);
  if (finalHost === bareHost(url) && finalPath === pathOf(url)) return undefined;
  if (platformLoginPath(finalHost, finalPath)) return 'login-redirect';
  // The link asked for a sign-in page: it is the page, not a wall.
  if (isSignInUrl(url)) return undefined;
  const trail = input.trail ?? [url, finalUrl];
  if (identityProvider(finalUrl)) return 'identity-provider';
  if (trail.slice(1).some((u) => identityProvider(u) && bareHost(u) === finalHost)) return 'identity-provider';
  const from = signInFrom(trail);
  if (siteOf(finalHost) === siteOf(bareHost(from)) && isSignInPath(finalUrl) && signInShaped(shape)) return 'login-redirect';
  return undefined;
}

/** A page that looks like a sign-in page: a password form or no content, never an article; a redirect seen without its page counts. */
function signInShaped(shape: Shape): boolean {
  if (!shape.seen) return true;
  return !isArticle(shape) && (shape.password || shape.text <= NO_CONTENT);
}

/** Where a page sends its reader by itself: a meta refresh's URL, a script's `location.href =`, `location.replace(…)`, `location.assign(…)`. */
function inPageRedirects(head: string, base: string): string[] {
  const found: string[] = [];
  for (const m of head.matchAll(/<meta\b[^>]*>/gi)) {
    if (!/http-equiv\s*=\s*["']?refresh/i.test(m[0])) continue;
    const content = /\bcontent\s*=\s*(["'])([\s\S]*?)\1/i.exec(m[0])?.[2] ?? '';
    const to = /^\s*\d*\s*[;,]?\s*url\s*=\s*['"]?([^'"]+)/i.exec(content)?.[1];
    if (to) found.push(to.trim());
  }
  const script = /\blocation(?:\.href)?\s*=\s*(["'`])([^"'`]+)\1|\blocation\.(?:replace|assign)\(\s*(["'`])([^"'`]+)\3/g;
  for (const m of head.matchAll(script)) found.push((m[2] ?? m[4]).trim());
  return found.flatMap((to) => {
    try {
      return [new URL(to.replace(/&amp;/g, '&'), base).href];
    } catch {
      return [];
    }
  });
}

/** The sign-in wall an empty page's own redirect to `to` makes: an identity provider's, a platform's login, a sign-in path of its own site. */
function signInTarget(input: WallInput, to: string): WallKind | undefined {
  const host = bareHost(to);
  if (platformLoginPath(host, pathOf(to))) return 'login-redirect';
  if (identityProvider(to)) return 'identity-provider';
  return isSignInPath(to) && siteOf(host) === siteOf(bareHost(input.finalUrl)) ? 'login-redirect' : undefined;
}

/** The captcha widgets: reCAPTCHA, hCaptcha, Turnstile (their scripts and their elements). */
const CAPTCHA_WIDGET =
  /\b(g-recaptcha|h-captcha|cf-turnstile)\b|google\.com\/recaptcha\/|recaptcha\.net\/recaptcha|gstatic\.com\/recaptcha|hcaptcha\.com\/1\/api|challenges\.cloudflare\.com\/turnstile/i;
/** An image captcha: an image named captcha beside a text field. */
const IMAGE_CAPTCHA = /<img[^>]+captcha[^>]*>/i;
/** The fields a reader fills in (not hidden, not a button, not a box to tick). */
const USER_FIELD = /<(input(?![^>]*\btype\s*=\s*["']?(hidden|submit|button|checkbox|radio|image)\b)[^>]*|textarea\b[^>]*|select\b[^>]*)>/gi;
/** The words that ask to prove one is human. */
const YOU_ARE = "you(?: are|(?:&#39;|'|’)re)";
const HUMAN_CHECK = new RegExp(
  `not a (ro)?bot|(verify|prove|confirm) (that )?${YOU_ARE} (a )?human|are you (a )?(human|robot)|human verification|verifying ${YOU_ARE} human|complete the (security check|captcha)|enter the characters you see|unusual (traffic|activity)`,
  'i',
);
/** A robot check is a small page: this much visible text at most (a 2xx answer), this much with a refusing status, this many bytes. */
const ROBOT_CHECK_TEXT = 600;
const ROBOT_CHECK_TEXT_REFUSED = 2_000;
const ROBOT_CHECK_BYTES = 256 * 1024;

/**
 * A robot check by its shape: a small page whose form is a captcha and nothing to fill in but its
 * answer (a contact, comment or order form with a captcha is none), and words asking to prove one
 * is human.
 */
function isRobotCheck(shape: Shape, status: number): boolean {
  const { head } = shape;
  const limit = status >= 200 && status < 300 ? ROBOT_CHECK_TEXT : ROBOT_CHECK_TEXT_REFUSED;
  if (shape.size > ROBOT_CHECK_BYTES || shape.text > limit || !/<form\b/i.test(head)) return false;
  const fields = head.match(USER_FIELD)?.length ?? 0;
  const widget = CAPTCHA_WIDGET.test(head) && fields === 0;
  const image = IMAGE_CAPTCHA.test(head) && fields === 1;
  return (widget || image) && HUMAN_CHECK.test(visibleText(head));
}
