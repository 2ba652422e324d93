/**
 * Walls, each shaped like the real answer: the status, the vendor's headers, the challenge's form or
 * script, the redirect trail to a sign-in. Bot walls (Cloudflare, DataDome, PerimeterX, Akamai,
 * Amazon, captcha pages), sign-in walls (identity providers by host and by protocol path, SAML, a
 * login form as the only content, meta refresh and script redirects to a sign-in path, a 401 asking
 * for credentials, LinkedIn's authwall) and the consent redirect.
 */

import { BASIC_AUTH_401, ROBOT_CHECKS, signInPage } from '../../fetch/signin-fixtures';
import { AKAMAI_BODY, AMAZON_BODY, CF_BODY, DATADOME_BODY, PX_BODY, REDDIT_BODY } from '../../fetch/wall-fixtures';
import { html } from '../../helpers/fixture-server';
import type { CorpusCase } from './shape';

const CF_ATTENTION = `<!DOCTYPE html><!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]--><!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]--><head><title>Attention Required! | Cloudflare</title><meta charset="UTF-8" /><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><meta http-equiv="X-UA-Compatible" content="IE=Edge" /><meta name="robots" content="noindex, nofollow" /><meta name="viewport" content="width=device-width,initial-scale=1" /><link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/cf.errors.css" /></head><body><div id="cf-wrapper"><div class="cf-alert cf-alert-error cf-cookie-error" id="cookie-alert" data-translate="enable_cookies">Please enable cookies.</div><div id="cf-error-details" class="cf-error-details-wrapper"><div class="cf-wrapper cf-header cf-error-overview"><h1 data-translate="block_headline">Sorry, you have been blocked</h1><h2 class="cf-subheadline"><span data-translate="unable_to_access">You are unable to access</span> example-forum.com</h2></div><div class="cf-section cf-wrapper"><div class="cf-columns two"><div class="cf-column"><h2 data-translate="blocked_why_headline">Why have I been blocked?</h2><p data-translate="blocked_why_detail">This website is using a security service to protect itself from online attacks. The action you just performed triggered the security solution. There are several actions that could trigger this block including submitting a certain word or phrase, a SQL command or malformed data.</p></div><div class="cf-column"><h2 data-translate="blocked_resolve_headline">What can I do to resolve this?</h2><p data-translate="blocked_resolve_detail">You can email the site owner to let them know you were blocked. Please include what you were doing when this page came up and the Cloudflare Ray ID found at the bottom of this page.</p></div></div></div><div class="cf-error-footer cf-wrapper w-240 lg:w-full py-10 sm:py-4 sm:px-8 mx-auto text-center sm:text-left border-solid border-0 border-t border-gray-300"><p class="text-13"><span class="cf-footer-item sm:block sm:mb-1">Cloudflare Ray ID: <strong class="font-semibold">8e2a1b3c4d5e6f71</strong></span></p></div></div></div></body></html>`;

const CF_JS_CHALLENGE = `<!DOCTYPE HTML><html lang="en-US"><head><meta charset="UTF-8" /><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><meta http-equiv="X-UA-Compatible" content="IE=Edge,chrome=1" /><meta name="robots" content="noindex, nofollow" /><meta name="viewport" content="width=device-width,initial-scale=1" /><title>Just a moment...</title></head><body><table width="100%" height="100%" cellpadding="20"><tr><td align="center" valign="middle"><div class="cf-browser-verification cf-im-under-attack"><noscript><h1 data-translate="turn_on_js" style="color:#bd2426;">Please turn JavaScript on and reload the page.</h1></noscript><div id="cf-content" style="display:none"><h1><span data-translate="checking_browser">Checking your browser before accessing</span> example-news.com.</h1><p data-translate="process_is_automatic">This process is automatic. Your browser will redirect to your requested content shortly.</p></div><form class="challenge-form" id="challenge-form" action="/story/1?__cf_chl_jschl_tk__=pmd_abc" method="POST" enctype="application/x-www-form-urlencoded"><input type="hidden" name="md" value="abc"/><input type="hidden" name="r" value="def"/></form></div></td></tr></table><script type="text/javascript">(function(){window._cf_chl_opt={cvId: '2',cType: 'non-interactive',cNounce: '12345',cRay: '8e2a1b3c4d5e6f72'};var cpo = document.createElement('script');cpo.src = '/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1?ray=8e2a1b3c4d5e6f72';document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`;

const DATADOME_INTERSTITIAL = `<html lang="en"><head><title>example-tickets.com</title><style>#cmsg{animation: A 1.5s;}@keyframes A{0%{opacity:0;}99%{opacity:0;}100%{opacity:1;}}</style></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script data-cfasync="false">var dd={'rt':'i','cid':'AHrlqAAAAAMA9z8','hsh':'2211F522B61E269B869FA6EAFFB5E1','b':1234567,'s':17434,'e':'7c1e','host':'geo.captcha-delivery.com','cookie':'abc~def'}</script><script data-cfasync="false" src="https://ct.captcha-delivery.com/i.js"></script></body></html>`;

const PX_BLOCK = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="description" content="px-captcha"><title>Access to this page has been denied.</title></head><body><div class="px-captcha-error-container"><div class="px-captcha-error-header">Before we continue...</div><div class="px-captcha-error-message">Press &amp; Hold to confirm you are a human (and not a bot).</div><div id="px-captcha"></div></div><script>window._pxVid = '';window._pxUuid = '3f2b0c5e-aaaa-11ef-bbbb-0242ac120002';window._pxAppId = 'PXaOtQIWNf';window._pxHostUrl = '/aOtQIWNf/xhr';window._pxJsClientSrc = '/aOtQIWNf/init.js';window._pxFirstPartyEnabled = true;var pxCaptchaSrc = 'https://captcha.px-cdn.net/PXaOtQIWNf/captcha.js?a=c&m=0&u=3f2b0c5e';var script = document.createElement('script');script.src = '/aOtQIWNf/captcha/captcha.js?a=c&u=3f2b0c5e&v=&m=0';document.head.appendChild(script);</script></body></html>`;

const AMAZON_UK = AMAZON_BODY.replace('Amazon.com', 'Amazon.co.uk').replace('B0C1H26C46', 'B08N5WRWNW');

const GOOGLE_SORRY = `<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1"><title>https://www.google.com/search?q=linklens</title></head><body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px;"><div style="max-width:400px;"><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br><form id="captcha-form" action="index" method="post"><script src="https://www.google.com/recaptcha/api.js" async defer></script><script>var submitCallback = function(response) {document.getElementById('captcha-form').submit();};</script><div id="recaptcha" class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b" data-callback="submitCallback" data-s="abc"></div><input type='hidden' name='q' value='EgQ'><input type="hidden" name="continue" value="https://www.google.com/search?q=linklens"></form><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><div style="font-size:13px;"><b>About this page</b><br><br>Our systems have detected unusual traffic from your computer network.  This page checks to see if it&#39;s really you sending the requests, and not a robot.</div></div></body></html>`;

const KEYCLOAK_LOGIN = `<!DOCTYPE html><html class="login-pf"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"/><title>Sign in to acme</title><link rel="icon" href="/resources/x1y2z/login/keycloak/img/favicon.ico" /><link href="/resources/x1y2z/common/keycloak/node_modules/patternfly/dist/css/patternfly.min.css" rel="stylesheet" /></head><body class=""><div class="login-pf-page"><div id="kc-header" class="login-pf-page-header"><div id="kc-header-wrapper" class="">ACME</div></div><div class="card-pf"><header class="login-pf-header"><h1 id="kc-page-title">Sign in to your account</h1></header><div id="kc-content"><div id="kc-content-wrapper"><div id="kc-form"><div id="kc-form-wrapper"><form id="kc-form-login" onsubmit="login.disabled = true; return true;" action="https://sso.example/realms/acme/login-actions/authenticate?session_code=Qx1&amp;execution=8f1c&amp;client_id=wiki&amp;tab_id=Hk2" method="post"><div class="form-group"><label for="username" class="pf-c-form__label pf-c-form__label-text">Username or email</label><input tabindex="1" id="username" class="pf-c-form-control" name="username" value="" type="text" autofocus autocomplete="off" /></div><div class="form-group"><label for="password" class="pf-c-form__label pf-c-form__label-text">Password</label><input tabindex="2" id="password" class="pf-c-form-control" name="password" type="password" autocomplete="off" /></div><div id="kc-form-buttons" class="form-group"><input tabindex="4" class="pf-c-button pf-m-primary pf-m-block btn-lg" name="login" id="kc-login" type="submit" value="Sign In"/></div></form></div></div></div></div></div></div></body></html>`;

const SHIBBOLETH_LOGIN = html(
  '<title>Web Login Service</title><link rel="stylesheet" type="text/css" href="/idp/css/main.css">',
  '<div class="wrapper"><header><img src="/idp/images/logo.png" alt="Example University"></header><form action="/idp/profile/SAML2/Redirect/SSO?execution=e1s1" method="post"><legend>Login to Library e-books</legend><label for="username">Username</label><input id="username" name="j_username" type="text" value=""><label for="password">Password</label><input id="password" name="j_password" type="password" value=""><button type="submit" name="_eventId_proceed">Login</button></form></div>',
);

const ADFS_LOGIN = html(
  '<title>Sign In</title><meta name="viewport" content="width=device-width, initial-scale=1.0">',
  '<div id="fullPage"><div id="contentWrapper"><div id="content"><div id="header"><img class="logoImage" src="/adfs/portal/logo/logo.png" alt="Contoso"></div><div id="workArea"><div id="authArea" class="groupMargin"><div id="loginArea"><div id="loginMessage" class="groupMargin">Sign in with your organizational account</div><form method="post" id="loginForm" autocomplete="off" action="/adfs/ls/?SAMLRequest=nZJLT8MwEIT%2FiuV7XnUaiNVEKq2QKhVUUeDAzXVcsBTbwWuH9N%2Fj9IHKpQeue5idb8a7mcFmxXcb7zZZ2Wz5Wb7Gc7uQqWWe5kqW&amp;client-request-id=1c2f"><div id="userNameArea"><input id="userNameInput" name="UserName" type="email" value="" placeholder="someone@example.com" autocomplete="off"></div><div id="passwordArea"><input id="passwordInput" name="Password" type="password" placeholder="Password" autocomplete="off"></div><div id="submissionArea" class="submitMargin"><span id="submitButton" class="submit" tabindex="4" role="button">Sign in</span></div></form></div></div></div></div></div></div>',
);

const LINKEDIN_AUTHWALL = html(
  '<title>Sign Up | LinkedIn</title><meta name="description" content="500 million+ members | Manage your professional identity.">',
  '<main><h1>Join LinkedIn</h1><form action="/signup/cold-join" method="post"><input type="email" name="email-address"><input type="password" name="password"><button>Agree &amp; Join</button></form><p>Already on LinkedIn? <a href="/login">Sign in</a></p></main>',
);

const W = 'text/html; charset=utf-8';

export const WALLS: CorpusCase[] = [
  {
    name: 'Cloudflare managed challenge (403, cf-mitigated)',
    wall: 'cloudflare-challenge',
    url: 'https://www.example-shop.com/product/42',
    status: 403,
    headers: { 'content-type': W, 'cf-mitigated': 'challenge', server: 'cloudflare', 'cf-ray': '8a1b2c3d4e5f6a7b-FRA' },
    body: CF_BODY,
  },
  {
    name: 'Cloudflare JS challenge "Just a moment..." (503, server: cloudflare)',
    wall: 'cloudflare-challenge',
    url: 'https://www.example-news.com/story/1',
    status: 503,
    headers: { 'content-type': W, server: 'cloudflare', 'cf-ray': '8e2a1b3c4d5e6f72-AMS' },
    body: CF_JS_CHALLENGE,
  },
  {
    name: 'Cloudflare "Attention Required!" block (403)',
    wall: 'cloudflare-challenge',
    url: 'https://www.example-forum.com/t/9',
    status: 403,
    headers: { 'content-type': W, server: 'cloudflare', 'cf-ray': '8e2a1b3c4d5e6f71-LHR' },
    body: CF_ATTENTION,
  },
  {
    name: 'DataDome captcha (403, x-datadome)',
    wall: 'datadome',
    url: 'https://www.leboncoin.fr/ad/voitures/2800000000',
    status: 403,
    headers: { 'content-type': W, 'x-datadome': 'protected', 'x-dd-b': '1', server: 'DataDome' },
    body: DATADOME_BODY,
  },
  {
    name: 'DataDome interstitial (403, x-dd-b only)',
    wall: 'datadome',
    url: 'https://www.example-tickets.com/event/77',
    status: 403,
    headers: { 'content-type': W, 'x-dd-b': '2', 'set-cookie': 'datadome=abc; Path=/' },
    body: DATADOME_INTERSTITIAL,
  },
  {
    name: 'PerimeterX captcha (403)',
    wall: 'perimeterx',
    url: 'https://www.zillow.com/homedetails/1-Main-St/2077.html',
    status: 403,
    headers: { 'content-type': W },
    body: PX_BODY,
  },
  {
    name: 'PerimeterX (HUMAN) press & hold block (403, px-cdn)',
    wall: 'perimeterx',
    url: 'https://www.example-sneakers.com/p/air-9',
    status: 403,
    headers: { 'content-type': W },
    body: PX_BLOCK,
  },
  {
    name: "PerimeterX custom block page at 200 (the enforcer's redirect to it)",
    wall: 'perimeterx',
    url: 'https://www.example-outdoor.com/p/tent-4',
    finalUrl: 'https://www.example-outdoor.com/block.html?url=%2Fp%2Ftent-4&uuid=3f2b0c5e-aaaa&vid=77aa',
    status: 200,
    headers: { 'content-type': W },
    body: html(
      "<title>Please verify you are a human</title><script>window._pxAppId = 'PXk3m9q2z';window._pxJsClientSrc = 'https://client.perimeterx.net/PXk3m9q2z/main.min.js';window._pxHostUrl = 'https://collector-PXk3m9q2z.perimeterx.net';</script><script src=\"https://captcha.px-cdn.net/PXk3m9q2z/captcha.js?a=c&m=0\"></script>",
      '<h1>Please verify you are a human</h1><div id="px-captcha"></div><p>Access to this page has been denied because we believe you are using automation tools to browse the website.</p><p>Reference ID: <span id="refid"></span></p>',
    ),
  },
  {
    name: 'Akamai "Access Denied" with Reference # (403, AkamaiGHost)',
    wall: 'akamai-denied',
    url: 'https://www.homedepot.com/p/123',
    status: 403,
    headers: { 'content-type': 'text/html', server: 'AkamaiGHost', 'mime-version': '1.0' },
    body: AKAMAI_BODY,
  },
  {
    name: 'Amazon robot check (503, amazon.com)',
    wall: 'amazon-robot-check',
    url: 'https://www.amazon.com/dp/B0C1H26C46',
    status: 503,
    headers: { 'content-type': 'text/html;charset=UTF-8', server: 'Server' },
    body: AMAZON_BODY,
  },
  {
    name: 'Amazon robot check (200, amazon.co.uk)',
    wall: 'amazon-robot-check',
    url: 'https://www.amazon.co.uk/dp/B08N5WRWNW',
    status: 200,
    headers: { 'content-type': 'text/html;charset=UTF-8', server: 'Server' },
    body: AMAZON_UK,
  },
  {
    name: "Google's unusual-traffic page (429, reCAPTCHA)",
    wall: 'robot-check',
    url: 'https://www.google.com/search?q=linklens',
    finalUrl: 'https://www.google.com/sorry/index?continue=https://www.google.com/search%3Fq%3Dlinklens&q=EgQ',
    status: 429,
    headers: { 'content-type': 'text/html' },
    body: GOOGLE_SORRY,
  },
  ...ROBOT_CHECKS.map(
    (c): CorpusCase => ({
      name: `captcha page: ${c.name}`,
      wall: 'robot-check',
      url: `https://${c.host}${c.path}`,
      status: c.status,
      headers: { 'content-type': W },
      body: c.body,
    }),
  ),
  {
    name: 'Keycloak OpenID Connect redirect',
    wall: 'identity-provider',
    url: 'https://wiki.example/display/ENG/Runbook',
    finalUrl:
      'https://sso.example/realms/acme/protocol/openid-connect/auth?client_id=wiki&redirect_uri=https%3A%2F%2Fwiki.example%2Fcallback&response_type=code&scope=openid&state=a1b2',
    status: 200,
    headers: { 'content-type': W },
    body: KEYCLOAK_LOGIN,
  },
  {
    name: 'Okta OIDC redirect',
    wall: 'identity-provider',
    url: 'https://tickets.acme-corp.example/queue/4',
    finalUrl:
      'https://acme.okta.com/oauth2/default/v1/authorize?client_id=0oa1b2c3d4&response_type=code&scope=openid%20profile&redirect_uri=https%3A%2F%2Ftickets.acme-corp.example%2Fcallback&state=xyz',
    status: 200,
    headers: { 'content-type': W },
    body: signInPage('Okta'),
  },
  {
    name: 'Azure AD (Entra ID) redirect',
    wall: 'identity-provider',
    url: 'https://reports.contoso-apps.example/dashboards/7',
    finalUrl:
      'https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=22c49a0d&response_type=code&redirect_uri=https%3A%2F%2Freports.contoso-apps.example%2Fsignin-oidc&scope=openid',
    status: 200,
    headers: { 'content-type': W },
    body: signInPage('Microsoft'),
  },
  {
    name: 'Auth0 Universal Login redirect',
    wall: 'identity-provider',
    url: 'https://app.tool.example/projects/7',
    finalUrl: 'https://tool.eu.auth0.com/u/login?state=hKFo2SBqT0x',
    trail: [
      'https://app.tool.example/projects/7',
      'https://tool.eu.auth0.com/authorize?response_type=code&client_id=abc&redirect_uri=https%3A%2F%2Fapp.tool.example%2Fcallback&scope=openid',
      'https://tool.eu.auth0.com/u/login?state=hKFo2SBqT0x',
    ],
    status: 200,
    headers: { 'content-type': W },
    body: signInPage('Tool'),
  },
  {
    name: 'Google sign-in redirect from a private Doc',
    wall: 'identity-provider',
    url: 'https://docs.google.com/document/d/1AbCdEf/edit',
    finalUrl:
      'https://accounts.google.com/v3/signin/identifier?continue=https%3A%2F%2Fdocs.google.com%2Fdocument%2Fd%2F1AbCdEf%2Fedit&followup=https%3A%2F%2Fdocs.google.com%2Fdocument%2Fd%2F1AbCdEf%2Fedit&ltmpl=docs&passive=1209600&service=wise&flowName=GlifWebSignIn',
    status: 200,
    headers: { 'content-type': W },
    body: signInPage('Google Accounts'),
  },
  {
    name: 'SAML redirect to a Shibboleth IdP (its login page after the SAMLRequest hop)',
    wall: 'identity-provider',
    url: 'https://library.example-university.test/ebooks/123',
    finalUrl: 'https://idp.example-university.test/idp/profile/SAML2/Redirect/SSO?execution=e1s1',
    trail: [
      'https://library.example-university.test/ebooks/123',
      'https://library.example-university.test/Shibboleth.sso/Login?target=%2Febooks%2F123',
      'https://idp.example-university.test/idp/profile/SAML2/Redirect/SSO?SAMLRequest=fZJdT8IwFIb%2FStN72rUgQsMwCUHYTqYRWDc&RelayState=ss%3Amem%3A4a1b',
      'https://idp.example-university.test/idp/profile/SAML2/Redirect/SSO?execution=e1s1',
    ],
    status: 200,
    headers: { 'content-type': W },
    body: SHIBBOLETH_LOGIN,
  },
  {
    name: 'SAML redirect to AD FS',
    wall: 'identity-provider',
    url: 'https://hr.contoso-corp.test/payslips/2026-10',
    finalUrl: 'https://adfs.contoso-corp.test/adfs/ls/?SAMLRequest=nZJLT8MwEIT%2FiuV7XnUaiNVEKq2QKhVUUeDAzXVcsBTbwWuH9N&RelayState=%2Fpayslips',
    status: 200,
    headers: { 'content-type': W },
    body: ADFS_LOGIN,
  },
  {
    name: "a company's own OAuth2 /oauth2/authorize with redirect_uri",
    wall: 'identity-provider',
    url: 'https://dash.example-metrics.test/d/abc',
    finalUrl:
      'https://auth.example-metrics.test/oauth2/authorize?client_id=dash&redirect_uri=https%3A%2F%2Fdash.example-metrics.test%2Fcallback&response_type=code&state=x',
    status: 200,
    headers: { 'content-type': W },
    body: signInPage('Example Metrics'),
  },
  {
    name: 'a 200 page whose only content is a login form',
    wall: 'login-form',
    url: 'https://intranet.example-co.test/reports/q3',
    status: 200,
    headers: { 'content-type': W },
    body: html(
      '<title>Example Co Intranet</title>',
      '<div class="box"><h2>Please log in to continue</h2><form method="post" action="/auth"><input type="text" name="username" placeholder="Username"><input type="password" name="password" placeholder="Password"><button type="submit">Log in</button></form></div>',
    ),
  },
  {
    name: 'meta refresh to /login?next=',
    wall: 'login-redirect',
    url: 'https://crm.example-co.test/deals/77',
    status: 200,
    headers: { 'content-type': W },
    body: html('<title>Redirecting…</title><meta http-equiv="refresh" content="0; url=/login?next=%2Fdeals%2F77">', '<p>Redirecting…</p>'),
  },
  {
    name: 'script redirect (location.replace) to /signin',
    wall: 'login-redirect',
    url: 'https://app.example-notes.test/n/abc',
    status: 200,
    headers: { 'content-type': W },
    body: html(
      `<title>Example Notes</title><script>window.location.replace('/signin?return_to=' + encodeURIComponent(location.pathname));</script>`,
      '<noscript>Please enable JavaScript to continue.</noscript>',
    ),
  },
  {
    name: '401 with WWW-Authenticate',
    wall: 'login-required',
    url: `https://${BASIC_AUTH_401.host}${BASIC_AUTH_401.path}`,
    status: 401,
    headers: BASIC_AUTH_401.headers,
    body: BASIC_AUTH_401.body,
  },
  {
    name: 'LinkedIn authwall redirect',
    wall: 'login-redirect',
    url: 'https://www.linkedin.com/in/someone',
    finalUrl: 'https://www.linkedin.com/authwall?trk=bf&trkInfo=AQF&original_referer=&sessionRedirect=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fsomeone',
    status: 200,
    headers: { 'content-type': W },
    body: LINKEDIN_AUTHWALL,
  },
  {
    name: 'LinkedIn status 999',
    wall: 'status-999',
    url: 'https://www.linkedin.com/posts/someone_activity-7200000000000000000-abcd',
    status: 999,
    headers: { 'content-type': 'text/html' },
    body: `<html><head><script type="text/javascript">window.onload = function() { location.href = "https://www.linkedin.com/authwall?trk=gf&sessionRedirect=" + encodeURIComponent(window.location.href); }</script></head></html>`,
  },
  {
    name: 'YouTube EU consent redirect',
    wall: 'consent-redirect',
    url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    finalUrl: 'https://consent.youtube.com/m?continue=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ&gl=DE&m=0&pc=yt&hl=de&src=1',
    status: 200,
    headers: { 'content-type': W },
    body: html(
      '<title>Bevor Sie zu YouTube weitergehen</title>',
      '<form action="https://consent.youtube.com/save" method="POST"><button>Alle akzeptieren</button></form>',
    ),
  },
  {
    name: 'Reddit network-security block (403)',
    wall: 'network-block',
    url: 'https://www.reddit.com/r/typescript/comments/1abc2de/a_post/',
    status: 403,
    headers: { 'content-type': W },
    body: REDDIT_BODY,
  },
];
