/**
 * Sign-in walls and robot checks shaped like the real ones, on the real host names (the tests map
 * them to loopback): each identity provider's redirect from a private document, same-site sign-in
 * redirects on made-up hosts, a 401 asking for credentials, captcha pages; and the pages that must
 * not count.
 */
import { html } from '../helpers/fixture-server';

/**
 * A link that redirects to a sign-in page: the link's host and path, the hops it goes through on
 * the way (`via`, each a redirect), and the sign-in page it ends on (host and path with its query).
 */
export interface SignInFixture {
  name: string;
  host: string;
  path: string;
  via?: { host: string; path: string }[];
  to: { host: string; path: string };
}

/**
 * Each identity provider's redirect shape (the link's own host, then the provider's sign-in URL),
 * as public traces show it (docs/proxy.md cites them): the Google Docs ServiceLogin URL, SharePoint
 * Online's Authenticate.aspx and _forms hops before Entra ID, a Jira Cloud site's own /login hop
 * before id.atlassian.com, an Okta SAML app before its classic sign-in page, Auth0's /authorize
 * before Universal Login, a Slack workspace's root with `redir`, Dropbox's `cont`, GitHub's `return_to`.
 */
export const IDENTITY_PROVIDER_REDIRECTS: SignInFixture[] = [
  {
    name: 'Google Docs',
    host: 'docs.google.com',
    path: '/document/d/1AbCdEf/edit',
    to: {
      host: 'accounts.google.com',
      path: '/ServiceLogin?service=wise&passive=1209600&osid=1&continue=https://docs.google.com/document/d/1AbCdEf/edit&followup=https://docs.google.com/document/d/1AbCdEf/edit&ltmpl=docs',
    },
  },
  {
    name: 'Google Drive (v3 sign-in)',
    host: 'drive.google.com',
    path: '/file/d/1XyZ/view',
    to: {
      host: 'accounts.google.com',
      path: '/v3/signin/identifier?continue=https%3A%2F%2Fdrive.google.com%2Ffile%2Fd%2F1XyZ%2Fview&followup=https%3A%2F%2Fdrive.google.com%2Ffile%2Fd%2F1XyZ%2Fview&passive=1209600&service=wise&flowName=GlifWebSignIn&flowEntry=ServiceLogin',
    },
  },
  {
    name: 'SharePoint Online',
    host: 'contoso.sharepoint.com',
    path: '/sites/team/Shared%20Documents/plan.docx',
    via: [
      { host: 'contoso.sharepoint.com', path: '/_layouts/15/Authenticate.aspx?Source=%2Fsites%2Fteam%2FShared%2520Documents%2Fplan%2Edocx' },
      {
        host: 'contoso.sharepoint.com',
        path: '/_forms/default.aspx?ReturnUrl=%2f_layouts%2f15%2fAuthenticate.aspx%3fSource%3d%252Fsites%252Fteam%252FShared%252520Documents%252Fplan%252Edocx&Source=cookie',
      },
    ],
    to: {
      host: 'login.microsoftonline.com',
      path: '/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/authorize?client_id=00000003-0000-0ff1-ce00-000000000000&response_mode=form_post&response_type=code%20id_token&resource=00000003-0000-0ff1-ce00-000000000000&scope=openid&nonce=638000000000000000.N2Y&redirect_uri=https%3A%2F%2Fcontoso.sharepoint.com%2F_forms%2Fdefault.aspx&state=OD0w',
    },
  },
  {
    name: 'an Entra ID app (v2.0)',
    host: 'reports.contoso-apps.example',
    path: '/dashboards/7',
    to: {
      host: 'login.microsoftonline.com',
      path: '/common/oauth2/v2.0/authorize?client_id=22c49a0d-d21c-4792-aed1-8f163c982546&response_type=code&redirect_uri=https%3A%2F%2Freports.contoso-apps.example%2Fsignin-oidc&response_mode=form_post&scope=openid%20profile&state=abc',
    },
  },
  {
    name: 'OneDrive (personal)',
    host: 'onedrive.live.com',
    path: '/edit.aspx?resid=ABC!123',
    to: { host: 'login.live.com', path: '/login.srf?wa=wsignin1.0&wreply=https%3A%2F%2Fonedrive.live.com%2Fedit.aspx%3Fresid%3DABC%21123' },
  },
  {
    name: 'Jira Cloud',
    host: 'acme.atlassian.net',
    path: '/browse/OPS-42',
    via: [{ host: 'acme.atlassian.net', path: '/login?redirectCount=1&dest-url=%2Fbrowse%2FOPS-42&application=jira' }],
    to: {
      host: 'id.atlassian.com',
      path: '/login?continue=https%3A%2F%2Facme.atlassian.net%2Flogin%3FredirectCount%3D1%26dest-url%3D%252Fbrowse%252FOPS-42%26application%3Djira&application=jira',
    },
  },
  {
    name: 'Okta (SAML app)',
    host: 'wiki.acme-corp.example',
    path: '/display/ENG/Runbook',
    via: [{ host: 'acme.okta.com', path: '/app/acme_wiki_1/exk1a2b3c/sso/saml?SAMLRequest=fVJdU4JAFP0rzL7LApXkjjhD' }],
    to: { host: 'acme.okta.com', path: '/login/login.htm?fromURI=%2Fapp%2Facme_wiki_1%2Fexk1a2b3c%2Fsso%2Fsaml%3FSAMLRequest%3DfVJdU4JAFP0rzL7LApXkjjhD' },
  },
  {
    name: 'Okta (OIDC)',
    host: 'tickets.acme-corp.example',
    path: '/queue/4',
    to: {
      host: 'acme.okta.com',
      path: '/oauth2/default/v1/authorize?client_id=0oa1b2c3d4&response_type=code&scope=openid%20profile&redirect_uri=https%3A%2F%2Ftickets.acme-corp.example%2Fcallback&state=xyz',
    },
  },
  {
    name: 'Auth0',
    host: 'app.tool.example',
    path: '/projects/7',
    via: [
      {
        host: 'tool.eu.auth0.com',
        path: '/authorize?response_type=code&client_id=abc&redirect_uri=https%3A%2F%2Fapp.tool.example%2Fcallback&scope=openid%20profile&state=xyz',
      },
    ],
    to: { host: 'tool.eu.auth0.com', path: '/u/login?state=hKFo2SBqT0x' },
  },
  {
    name: 'Sign in with Apple',
    host: 'notes.example-app.test',
    path: '/n/0aBcDeF',
    to: {
      host: 'appleid.apple.com',
      path: '/auth/authorize?client_id=com.example.notes.web&redirect_uri=https%3A%2F%2Fnotes.example-app.test%2Fauth%2Fapple&response_type=code%20id_token&scope=name%20email&response_mode=form_post&state=9f1',
    },
  },
  {
    name: 'Apple (idmsa)',
    host: 'developer.apple.com',
    path: '/account/',
    to: {
      host: 'idmsa.apple.com',
      path: '/IDMSWebAuth/signin?appIdKey=891bd3417a7776362562d2197f89480a8547b108fd934911bcbea0110d07f757&path=%2Faccount%2F&rv=1',
    },
  },
  {
    name: 'Slack (a workspace)',
    host: 'acme.slack.com',
    path: '/archives/C01ABCDEF/p1700000000000100',
    to: { host: 'acme.slack.com', path: '/?redir=%2Farchives%2FC01ABCDEF%2Fp1700000000000100' },
  },
  {
    name: 'Slack (slack.com)',
    host: 'app.slack.com',
    path: '/client/T01ABC/C01ABC',
    to: { host: 'slack.com', path: '/signin?redir=%2Fclient%2FT01ABC%2FC01ABC' },
  },
  {
    name: 'Notion',
    host: 'www.notion.so',
    path: '/acme/Roadmap-0123456789abcdef',
    to: { host: 'www.notion.so', path: '/login?redirectTo=%2Facme%2FRoadmap-0123456789abcdef' },
  },
  {
    name: 'Dropbox',
    host: 'www.dropbox.com',
    path: '/home/Plans?preview=q3.pdf',
    to: { host: 'www.dropbox.com', path: '/login?cont=https%3A%2F%2Fwww.dropbox.com%2Fhome%2FPlans%3Fpreview%3Dq3.pdf' },
  },
  {
    name: 'Figma',
    host: 'www.figma.com',
    path: '/design/AbC123/Private-file',
    to: { host: 'www.figma.com', path: '/login?cont=%2Fdesign%2FAbC123%2FPrivate-file' },
  },
  { name: 'Zoom', host: 'us02web.zoom.us', path: '/rec/share/AbCdEf.123', to: { host: 'us02web.zoom.us', path: '/signin' } },
  {
    name: 'GitHub',
    host: 'github.com',
    path: '/settings/profile',
    to: { host: 'github.com', path: '/login?return_to=https%3A%2F%2Fgithub.com%2Fsettings%2Fprofile' },
  },
  { name: 'GitLab', host: 'gitlab.com', path: '/acme/private-repo/-/issues/12', to: { host: 'gitlab.com', path: '/users/sign_in' } },
];

/** Same-site redirects to a sign-in path on made-up hosts (the site's own sign-in page). */
export const SAME_SITE_REDIRECTS: SignInFixture[] = [
  { name: '/login?next=', host: 'wiki.example-corp.test', path: '/pages/42', to: { host: 'wiki.example-corp.test', path: '/login?next=%2Fpages%2F42' } },
  {
    name: '/users/sign_in',
    host: 'code.example-forge.test',
    path: '/team/app/-/merge_requests/9',
    to: { host: 'code.example-forge.test', path: '/users/sign_in' },
  },
  {
    name: '/accounts/login/?next=',
    host: 'www.example-photos.test',
    path: '/album/77',
    to: { host: 'www.example-photos.test', path: '/accounts/login/?next=/album/77' },
  },
  {
    name: '/session/new',
    host: 'tracker.example-app.test',
    path: '/issues/5',
    to: { host: 'tracker.example-app.test', path: '/session/new?return_to=%2Fissues%2F5' },
  },
  {
    name: 'sso subdomain /auth/login',
    host: 'docs.example-team.test',
    path: '/d/abc',
    to: { host: 'sso.example-team.test', path: '/auth/login?redirect=https%3A%2F%2Fdocs.example-team.test%2Fd%2Fabc' },
  },
  {
    name: '/en/sign-in',
    host: 'shop.example-store.test',
    path: '/orders/1001',
    to: { host: 'shop.example-store.test', path: '/en/sign-in?returnUrl=%2Forders%2F1001' },
  },
  {
    name: '/Account/Login.aspx?ReturnUrl=',
    host: 'portal.example-bank.test',
    path: '/statements/2026-10',
    to: { host: 'portal.example-bank.test', path: '/Account/Login.aspx?ReturnUrl=%2fstatements%2f2026-10' },
  },
  {
    name: 'SharePoint (on premises) /_forms/default.aspx?ReturnUrl=',
    host: 'portal.example-corp.test',
    path: '/sites/hr/Pages/Policy.aspx',
    via: [{ host: 'portal.example-corp.test', path: '/_layouts/15/Authenticate.aspx?Source=%2Fsites%2Fhr%2FPages%2FPolicy%2Easpx' }],
    to: {
      host: 'portal.example-corp.test',
      path: '/_forms/default.aspx?ReturnUrl=%2f_layouts%2f15%2fAuthenticate.aspx%3fSource%3d%252Fsites%252Fhr%252FPages%252FPolicy%252Easpx&Source=%2Fsites%2Fhr%2FPages%2FPolicy%2Easpx',
    },
  },
  {
    name: '/wp-login.php?redirect_to=',
    host: 'blog.example-private.test',
    path: '/2026/11/members-only/',
    to: { host: 'blog.example-private.test', path: '/wp-login.php?redirect_to=%2F2026%2F11%2Fmembers-only%2F' },
  },
];

/** A sign-in page as a site serves it: a title of its own, its name and icon. */
export function signInPage(site: string): string {
  return html(
    `<title>Sign in – ${site}</title><meta property="og:title" content="Sign in to ${site}"><meta property="og:site_name" content="${site}"><meta name="description" content="Sign in to continue to ${site}."><meta property="og:image" content="/og-login.png"><link rel="icon" href="/favicon.png">`,
    `<main><h1>Sign in</h1><form method="post" action="/session"><input type="email" name="email"><input type="password" name="password"><button>Sign in</button></form></main>`,
  );
}

/** A 401 that asks for credentials (HTTP Basic), as an intranet server gives it. */
export const BASIC_AUTH_401 = {
  host: 'intranet.example-corp.test',
  path: '/reports/q3',
  status: 401,
  headers: { 'www-authenticate': 'Basic realm="Example Corp Intranet", charset="UTF-8"', 'content-type': 'text/html; charset=iso-8859-1' },
  body: '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN"><html><head><title>401 Unauthorized</title></head><body><h1>Unauthorized</h1><p>This server could not verify that you are authorized to access the document requested.</p></body></html>',
};

/** Robot checks on made-up shops, each with its captcha and its words. */
export const ROBOT_CHECKS: { name: string; host: string; path: string; status: number; body: string }[] = [
  {
    name: 'reCAPTCHA, 200',
    host: 'www.example-outlet.test',
    path: '/item/991',
    status: 200,
    body: html(
      '<title>example-outlet.test</title><script src="https://www.google.com/recaptcha/api.js" async defer></script>',
      `<div class="wrap"><h1>Please verify you are a human</h1><p>We have detected unusual activity from your network. Check the box below to continue.</p><form action="/verify" method="post"><div class="g-recaptcha" data-sitekey="6LcXyZAAAAAAAb"></div><input type="hidden" name="ref" value="/item/991"><button type="submit">Continue</button></form></div>`,
    ),
  },
  {
    name: 'hCaptcha, 503',
    host: 'tickets.example-events.test',
    path: '/e/2026-concert',
    status: 503,
    body: html(
      '<title>One moment…</title><script src="https://js.hcaptcha.com/1/api.js" async></script>',
      `<h2>Confirm you're not a robot</h2><form method="POST" action="/challenge"><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001"></div><input type="submit" value="Submit"></form>`,
    ),
  },
  {
    name: 'Turnstile, 200',
    host: 'forum.example-board.test',
    path: '/t/some-thread/88',
    status: 200,
    body: html(
      '<title>Verification</title><script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>',
      `<p>Verify you are human by completing the action below.</p><form method="post" action="/__verify"><div class="cf-turnstile" data-sitekey="0x4AAAAAAA"></div><button>Go on</button></form>`,
    ),
  },
  {
    name: 'image captcha, 200',
    host: 'www.example-market.test',
    path: '/listing/55',
    status: 200,
    body: html(
      '<title>Security</title>',
      `<h1>Are you a human?</h1><p>Type the characters you see in the picture to prove you're not a robot.</p><form action="/captcha/check" method="get"><img src="/captcha/image?id=abc123" alt="captcha"><input type="text" name="answer" autocomplete="off"><input type="submit" value="Send"></form>`,
    ),
  },
];

/** An article that mentions robots and has a reCAPTCHA in its comment form: never a wall. */
export const ROBOT_ARTICLE = {
  host: 'news.example-daily.test',
  path: '/2026/11/robots-in-the-warehouse',
  body: html(
    '<title>Robots in the warehouse</title><meta property="og:title" content="Robots in the warehouse"><meta property="og:description" content="How not a robot but a person still packs the odd parcels."><script src="https://www.google.com/recaptcha/api.js"></script>',
    `<article><h1>Robots in the warehouse</h1><p>${'The robot arms pick the parcels; people still pack the odd ones. '.repeat(30)}</p><p>Are you a robot? The warehouse asks its visitors that, as a joke.</p></article><section id="comments"><h2>Comments</h2><form action="/comments" method="post"><textarea name="comment"></textarea><input type="text" name="name"><div class="g-recaptcha" data-sitekey="6LcArticle"></div><p>Please confirm you are not a robot.</p><button>Post</button></form></section>`,
  ),
};

/** A small page with the robot words and a captcha but an Open Graph title: the page's own, not a wall. */
export const CAPTCHA_WITH_OG_TITLE = html(
  '<title>Contact us</title><meta property="og:title" content="Contact Example Co"><script src="https://www.google.com/recaptcha/api.js"></script>',
  `<h1>Contact us</h1><form action="/contact" method="post"><input type="text" name="name"><textarea name="message"></textarea><div class="g-recaptcha" data-sitekey="6Lc"></div><p>Tick the box to show you are not a robot.</p><button>Send</button></form>`,
);
