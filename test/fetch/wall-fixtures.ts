/**
 * The bot walls that datacenter addresses meet, each shaped like the real answer (its status, the
 * headers that tell, the telling parts of its page), on the real host names (the tests map them to
 * loopback), and the real page the same URL gives through the proxy.
 */
import type http from 'node:http';
import { html } from '../helpers/fixture-server';

export interface WallFixture {
  /** The kind lib/extract/walls.ts reports. */
  kind: string;
  /** The host the wall is met on, and the path of the link. */
  host: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const CF_BODY = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"><style>*{box-sizing:border-box;margin:0;padding:0}</style></head><body><div class="main-wrapper" role="main"><div class="main-content"><noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',cZone: "example.com",cType: 'managed'};var cpo = document.createElement('script');cpo.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8a1b2c3d4e5f6a7b';document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`;

export const AKAMAI_BODY = `<HTML><HEAD>
<TITLE>Access Denied</TITLE>
</HEAD><BODY>
<H1>Access Denied</H1>
 
You don't have permission to access "http&#58;&#47;&#47;www&#46;homedepot&#46;com&#47;p&#47;123" on this server.<P>
Reference&#32;&#35;18&#46;5e2d3b17&#46;1732500000&#46;2a4f6c1
<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;5e2d3b17&#46;1732500000&#46;2a4f6c1</P>
</BODY>
</HTML>
`;

export const DATADOME_BODY = `<html lang="en"><head><title>leboncoin.fr</title><style>#cmsg{animation: A 1.5s;}@keyframes A{0%{opacity:0;}99%{opacity:0;}100%{opacity:1;}}</style></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script data-cfasync="false">var dd={'rt':'c','cid':'AHrlqAAAAAMA1x2','hsh':'05B30BD9055986BD2EE8F5A199D973','t':'bv','s':47891,'e':'b8d2','host':'geo.captcha-delivery.com'}</script><script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script></body></html>`;

export const PX_BODY = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Access to this page has been denied</title><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><section class="container"><div class="page-title-wrapper"><h1 class="page-title">Access to this page has been denied</h1></div><div class="content-wrapper"><p id="px-captcha-message">Press &amp; Hold to confirm you are<br>a human (and not a bot).</p><div id="px-captcha"></div></div></section><script>window._pxAppId = 'PXu6b0qd2S';window._pxJsClientSrc = '/u6b0qd2S/init.js';window._pxHostUrl = '/u6b0qd2S/xhr';</script><script src="/u6b0qd2S/captcha/captcha.js?a=c&u=3e7f&v=&m=0"></script></body></html>`;

export const AMAZON_BODY = `<!doctype html><html lang="en-us" class="a-no-js" data-19ax5a9jf="dingo"><head><meta charset="utf-8"><title dir="ltr">Amazon.com</title><meta name="viewport" content="width=device-width"></head><body><div class="a-container a-padding-double-large"><div class="a-row a-spacing-double-large"><div class="a-box a-alert a-alert-info a-spacing-base"><div class="a-box-inner"><h4>Enter the characters you see below</h4><p class="a-last">Sorry, we just need to make sure you're not a robot. For best results, please make sure your browser is accepting cookies.</p></div></div><form method="get" action="/errors/validateCaptcha" name=""><input type=hidden name="amzn" value="Jv1wYd2C7Q=="/><input type=hidden name="amzn-r" value="&#047;dp&#047;B0C1H26C46"/><img src="https://images-na.ssl-images-amazon.com/captcha/usvmgloq/Captcha_kqrvmbkjsa.jpg"></form></div></div></body></html>`;

export const REDDIT_BODY = `<!doctype html><html><head><title>Blocked</title><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><div class="content"><h1>whoa there, pardner!</h1><p>You've been blocked by network security.</p><p>To continue, log in to your Reddit account or use your developer token</p><p>If you think you've been blocked by mistake, file a ticket below and we'll look into it.</p></div></body></html>`;

const LINKEDIN_BODY = `<html><head>
<script type="text/javascript">
window.onload = function() {
  var domain = location.host.indexOf("linkedin.com") !== -1 ? "linkedin.com" : location.host;
  document.cookie = "trkCode=gf; domain=" + domain;
  location.href = "https://www.linkedin.com/authwall?trk=gf&sessionRedirect=" + encodeURIComponent(window.location.href);
}
</script>
</head></html>`;

export const WALLS: WallFixture[] = [
  {
    kind: 'cloudflare-challenge',
    host: 'www.example-shop.com',
    path: '/product/42',
    status: 403,
    headers: { 'content-type': 'text/html; charset=UTF-8', 'cf-mitigated': 'challenge', server: 'cloudflare', 'cf-ray': '8a1b2c3d4e5f6a7b-FRA' },
    body: CF_BODY,
  },
  {
    kind: 'akamai-denied',
    host: 'www.homedepot.com',
    path: '/p/123',
    status: 403,
    headers: { 'content-type': 'text/html', server: 'AkamaiGHost', 'mime-version': '1.0' },
    body: AKAMAI_BODY,
  },
  {
    kind: 'datadome',
    host: 'www.leboncoin.fr',
    path: '/ad/voitures/2800000000',
    status: 403,
    headers: { 'content-type': 'text/html;charset=utf-8', 'x-datadome': 'protected', 'x-dd-b': '1', server: 'DataDome' },
    body: DATADOME_BODY,
  },
  {
    kind: 'perimeterx',
    host: 'www.zillow.com',
    path: '/homedetails/1-Main-St/2077.html',
    status: 403,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: PX_BODY,
  },
  {
    kind: 'amazon-robot-check',
    host: 'www.amazon.com',
    path: '/dp/B0C1H26C46',
    status: 503,
    headers: { 'content-type': 'text/html;charset=UTF-8', server: 'Server' },
    body: AMAZON_BODY,
  },
  {
    kind: 'network-block',
    host: 'www.reddit.com',
    path: '/r/typescript/comments/1abc2de/a_post/',
    status: 403,
    headers: { 'content-type': 'text/html; charset=utf-8', 'retry-after': '0' },
    body: REDDIT_BODY,
  },
  {
    kind: 'status-999',
    host: 'www.linkedin.com',
    path: '/posts/someone_activity-7200000000000000000-abcd',
    status: 999,
    headers: { 'content-type': 'text/html' },
    body: LINKEDIN_BODY,
  },
  {
    kind: 'login-redirect',
    host: 'www.instagram.com',
    path: '/p/C1a2b3c4d5e/',
    status: 302,
    headers: { location: '/accounts/login/?next=%2Fp%2FC1a2b3c4d5e%2F', 'content-type': 'text/html; charset=utf-8' },
    body: '',
  },
  {
    kind: 'rate-limited',
    host: 'api.example-news.com',
    path: '/story/1',
    status: 429,
    headers: { 'content-type': 'text/plain', 'retry-after': '60' },
    body: 'Too Many Requests',
  },
];

/** The real page each host gives through the proxy: its own title, description and image. */
export function realPage(host: string): string {
  return html(
    `<title>The real page of ${host}</title><meta name="description" content="What ${host} shows a reader."><meta property="og:image" content="/og.png"><link rel="icon" href="/favicon.png">`,
    `<article><h1>The real page of ${host}</h1><p>${'A paragraph of the article. '.repeat(20)}</p></article>`,
  );
}

/** Answers a wall to a direct request and `real(req, res)` to a proxied one (told by `isProxied`). */
export function walled(
  wall: WallFixture,
  isProxied: (req: http.IncomingMessage) => boolean,
  real: (req: http.IncomingMessage, res: http.ServerResponse) => void,
) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (isProxied(req)) return real(req, res);
    res.writeHead(wall.status, wall.headers);
    res.end(wall.body);
  };
}
