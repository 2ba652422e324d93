/**
 * Pages that are NOT walls but talk about them or carry a form: articles about bot challenges and
 * captchas, login-help docs, contact and newsletter forms with a captcha, songs and films titled
 * "Access Denied", pages served by a CDN that injects its scripts, in-page redirects that lead to
 * content. Each must give a preview (no wall), whatever words its title uses.
 */
import { html } from '../../helpers/fixture-server';
import { type CorpusCase, paragraphs } from './shape';

const og = (title: string, more = '') =>
  `<meta property="og:title" content="${title}"><meta property="og:type" content="article"><meta name="description" content="${title}: the article.">${more}`;

/** Cloudflare's bot-management script, injected into ordinary pages it serves (`/cdn-cgi/challenge-platform/scripts/jsd/main.js`). */
const CF_JSD = `<script>(function(){function c(){var b=a.contentDocument||a.contentWindow.document;if(b){var d=b.createElement('script');d.innerHTML="window.__CF$cv$params={r:'8e2a1b3c4d5e6f70',t:'MTczMjUwMDAwMC4wMDAwMDA='};var a=document.createElement('script');a.nonce='';a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';document.getElementsByTagName('head')[0].appendChild(a);";b.getElementsByTagName('head')[0].appendChild(d)}}var a=document.createElement('iframe');a.height=1;a.width=1;a.style.position='absolute';a.style.top=0;a.style.left=0;a.style.border='none';a.style.visibility='hidden';document.body.appendChild(a);c()})();</script>`;
const CF_HEADERS = { 'content-type': 'text/html; charset=utf-8', server: 'cloudflare', 'cf-ray': '8e2a1b3c4d5e6f70-AMS', 'cf-cache-status': 'DYNAMIC' };

export const NOT_WALLS: CorpusCase[] = [
  {
    name: 'article "Checking your browser for WebGPU support" with og:title',
    wall: false,
    url: 'https://gpu.example-dev.test/blog/checking-your-browser-for-webgpu-support',
    status: 200,
    body: html(
      `<title>Checking your browser for WebGPU support</title>${og('Checking your browser for WebGPU support')}`,
      `<article><h1>Checking your browser for WebGPU support</h1>${paragraphs('Call navigator.gpu.requestAdapter() and check the result before you create a device; Safari and Firefox ship it behind flags.')}</article>`,
    ),
  },
  {
    name: 'article "Access to this page has been denied: what a 403 means"',
    wall: false,
    url: 'https://http.example-guides.test/errors/403',
    status: 200,
    body: html(
      '<title>Access to this page has been denied: what a 403 means</title>',
      `<article><h1>Access to this page has been denied: what a 403 means</h1>${paragraphs('A 403 Forbidden says the server understood the request and refuses it; unlike a 401, new credentials will not help.')}</article>`,
    ),
  },
  {
    name: 'article "How to get past Amazon\'s Robot Check page" on a site that is not Amazon',
    wall: false,
    url: 'https://scraping.example-blog.test/posts/amazon-robot-check',
    status: 200,
    body: html(
      `<title>How to get past Amazon's Robot Check page</title>${og("How to get past Amazon's Robot Check page")}`,
      `<article><h1>How to get past Amazon's Robot Check page</h1>${paragraphs('Amazon answers suspicious clients with a page titled Robot Check whose form posts to /errors/validateCaptcha; slow down and keep cookies.')}<pre>&lt;form method="get" action="/errors/validateCaptcha"&gt;</pre></article>`,
    ),
  },
  {
    name: 'article titled "Just a moment..." with og:title',
    wall: false,
    url: 'https://poems.example-mag.test/2026/just-a-moment',
    status: 200,
    body: html(
      `<title>Just a moment...</title>${og('Just a moment...')}`,
      `<article><h1>Just a moment...</h1>${paragraphs('A short story about waiting at a railway station for a train that has been cancelled twice already.')}</article>`,
    ),
  },
  {
    name: 'short contact page with a reCAPTCHA form and "Please confirm you are human"',
    wall: false,
    url: 'https://www.example-plumbing.test/contact',
    status: 200,
    body: html(
      '<title>Contact - Example Plumbing</title><script src="https://www.google.com/recaptcha/api.js" async defer></script>',
      `<h1>Contact us</h1><form action="/contact" method="post"><label>Name <input type="text" name="name"></label><label>Email <input type="email" name="email"></label><label>Message <textarea name="message"></textarea></label><p>Please confirm you are human.</p><div class="g-recaptcha" data-sitekey="6LdContactKey"></div><button type="submit">Send</button></form>`,
    ),
  },
  {
    name: 'reCAPTCHA explainer with a demo form',
    wall: false,
    url: 'https://web.example-howto.test/recaptcha-explained',
    status: 200,
    body: html(
      '<title>What is reCAPTCHA?</title><script src="https://www.google.com/recaptcha/api.js" async defer></script>',
      `<article><h1>What is reCAPTCHA?</h1>${paragraphs('reCAPTCHA asks visitors to verify you are human by ticking a box; behind it a risk score decides whether to show image puzzles.', 5)}<h2>Try it</h2><form action="/demo" method="post"><div class="g-recaptcha" data-sitekey="6LeDemoKey"></div><p>Confirm you are not a robot, then submit.</p><button>Submit</button></form></article>`,
    ),
  },
  {
    name: 'article reached through a 301 to /docs/sso/login?from=/moved-docs',
    wall: false,
    url: 'https://docs.example-saas.test/moved-docs',
    finalUrl: 'https://docs.example-saas.test/docs/sso/login?from=/moved-docs',
    status: 200,
    body: html(
      `<title>Signing in with SSO</title>${og('Signing in with SSO')}`,
      `<main><h1>Signing in with SSO</h1>${paragraphs('Your administrator connects the workspace to an identity provider; members then sign in with their company account from the login page.')}</main>`,
    ),
  },
  {
    name: 'article about Cloudflare challenges quoting the challenge page',
    wall: false,
    url: 'https://blog.example-infra.test/how-cloudflare-challenges-work',
    status: 200,
    body: html(
      `<title>How Cloudflare's managed challenge works</title>${og("How Cloudflare's managed challenge works")}`,
      `<article><h1>How the managed challenge works</h1>${paragraphs('The answer carries cf-mitigated: challenge and a page titled Just a moment... that loads /cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1 and sets window._cf_chl_opt.')}<pre>&lt;script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"&gt;&lt;/script&gt;</pre></article>`,
    ),
  },
  {
    name: 'ordinary page served by Cloudflare with its injected challenge-platform script',
    wall: false,
    url: 'https://www.example-recipes.test/soup/leek',
    status: 200,
    headers: CF_HEADERS,
    body: html(
      `<title>Leek and potato soup</title>${og('Leek and potato soup')}`,
      `<article><h1>Leek and potato soup</h1>${paragraphs('Sweat the leeks in butter, add the potatoes and stock, simmer twenty minutes and blend.')}</article>${CF_JSD}`,
    ),
  },
  {
    name: 'a 404 page served by Cloudflare with its injected script',
    wall: false,
    url: 'https://www.example-recipes.test/soup/old',
    status: 404,
    headers: CF_HEADERS,
    body: html('<title>Page not found | Example Recipes</title>', `<h1>Page not found</h1><p>The recipe moved. <a href="/">Back home</a></p>${CF_JSD}`),
  },
  {
    name: 'song lyrics page titled "Access Denied"',
    wall: false,
    url: 'https://lyrics.example-songs.test/artist/the-firewalls/access-denied',
    status: 200,
    body: html(
      '<title>Access Denied</title>',
      `<h1>Access Denied</h1><h2>The Firewalls</h2><div class="lyrics">${paragraphs('You changed the locks and kept the key, access denied, no room for me, I knock all night on a door of glass', 6)}</div>`,
    ),
  },
  {
    name: 'film page "Access Denied (2024)" with og:title',
    wall: false,
    url: 'https://films.example-db.test/title/access-denied-2024',
    status: 200,
    body: html(
      `<title>Access Denied (2024)</title>${og('Access Denied (2024)', '<meta property="og:image" content="https://films.example-db.test/poster.jpg">')}`,
      `<main><h1>Access Denied (2024)</h1>${paragraphs('A thriller: a systems administrator locked out of her own company discovers the breach was an inside job.')}</main>`,
    ),
  },
  {
    name: 'captcha explainer with og:title and an image captcha sample',
    wall: false,
    url: 'https://security.example-edu.test/what-is-a-captcha',
    status: 200,
    body: html(
      `<title>CAPTCHA - what it is</title>${og('CAPTCHA - what it is')}`,
      `<article><h1>CAPTCHA</h1>${paragraphs('A CAPTCHA is a challenge that tells humans and computers apart: enter the characters you see, or pick the traffic lights.')}<form action="/sample" method="get"><img src="/img/captcha-sample.png" alt="captcha sample"><input type="text" name="answer"><button>Check</button></form></article>`,
    ),
  },
  {
    name: 'login help docs page',
    wall: false,
    url: 'https://help.example-mail.test/en/articles/sign-in-problems',
    status: 200,
    body: html(
      `<title>Can't sign in? - Example Mail Help</title>${og("Can't sign in?")}`,
      `<article><h1>Can't sign in?</h1>${paragraphs('If the login page says your password is wrong, reset it from the Forgot password link; check Caps Lock and your keyboard layout.')}</article>`,
    ),
  },
  {
    name: 'help article "Please log in to continue" explained',
    wall: false,
    url: 'https://help.example-shop.test/faq/please-log-in-to-continue',
    status: 200,
    body: html(
      '<title>Why do I see "Please log in to continue"?</title>',
      `<article><h1>Why do I see "Please log in to continue"?</h1>${paragraphs('Your session expired after thirty minutes without activity; log in again and your basket is kept for seven days.')}</article>`,
    ),
  },
  {
    name: "the site's own /login asked for",
    wall: false,
    url: 'https://wiki.example-corp.test/login',
    status: 200,
    body: html(
      '<title>Log in - Example Wiki</title><meta property="og:site_name" content="Example Wiki">',
      '<h1>Log in</h1><form method="post" action="/session"><input type="text" name="user"><input type="password" name="password"><button>Log in</button></form>',
    ),
  },
  {
    name: 'GitHub sign-in page asked for',
    wall: false,
    url: 'https://github.com/login',
    status: 200,
    body: html(
      '<title>Sign in to GitHub · GitHub</title><meta property="og:title" content="Sign in to GitHub">',
      '<h1>Sign in to GitHub</h1><form action="/session" method="post"><input type="text" name="login"><input type="password" name="password"><input type="submit" value="Sign in"></form>',
    ),
  },
  {
    name: 'newsletter signup with reCAPTCHA and og:title',
    wall: false,
    url: 'https://news.example-weekly.test/subscribe',
    status: 200,
    body: html(
      `<title>Subscribe</title>${og('Subscribe to Example Weekly')}<script src="https://www.google.com/recaptcha/api.js"></script>`,
      '<h1>Get Example Weekly</h1><p>One email each Friday. Prove you are not a robot and subscribe.</p><form action="/subscribe" method="post"><input type="email" name="email"><div class="g-recaptcha" data-sitekey="6LeNews"></div><button>Subscribe</button></form>',
    ),
  },
  {
    name: 'blog post with an hCaptcha comment form',
    wall: false,
    url: 'https://blog.example-garden.test/2026/11/pruning-roses',
    status: 200,
    body: html(
      `<title>Pruning roses in November</title><script src="https://js.hcaptcha.com/1/api.js" async></script>`,
      `<article><h1>Pruning roses in November</h1>${paragraphs('Cut back by a third, remove crossing stems and burn any leaves with black spot.')}</article><form action="/comment" method="post"><textarea name="c"></textarea><div class="h-captcha" data-sitekey="10000000-ffff"></div><p>Verify you are human to comment.</p><button>Post</button></form>`,
    ),
  },
  {
    name: 'DataDome write-up quoting captcha-delivery.com, no og:title',
    wall: false,
    url: 'https://re.example-notes.test/datadome',
    status: 200,
    body: html(
      '<title>Notes on DataDome</title>',
      `<article><h1>Notes on DataDome</h1>${paragraphs('Blocked clients get a 403 with x-datadome: protected and a page loading https://ct.captcha-delivery.com/c.js, the captcha frame coming from geo.captcha-delivery.com.')}</article>`,
    ),
  },
  {
    name: 'PerimeterX "Press & Hold" write-up quoting px-captcha',
    wall: false,
    url: 'https://re.example-notes.test/perimeterx-press-and-hold',
    status: 200,
    body: html(
      '<title>Press &amp; Hold: how PerimeterX decides</title>',
      `<article><h1>Press &amp; Hold</h1>${paragraphs('The block page has a div with id px-captcha and sets window._pxAppId; visitors press &amp; hold the button until it fills.')}</article>`,
    ),
  },
  {
    name: 'a short store-hours page on a PerimeterX-protected site (its sensor on every page), no og:title',
    wall: false,
    url: 'https://www.example-outdoor.com/stores/leeds',
    status: 200,
    body: html(
      "<title>Leeds store</title><script>(function(){window._pxAppId = 'PXk3m9q2z';var p = document.getElementsByTagName('script')[0], s = document.createElement('script');s.async = 1;s.src = '//client.perimeterx.net/PXk3m9q2z/main.min.js';p.parentNode.insertBefore(s,p);}());</script>",
      '<h1>Leeds store</h1><p>Open Monday to Saturday, 9 to 6. 12 Briggate, Leeds LS1 6HD.</p>',
    ),
  },
  {
    name: 'Akamai "Reference #" explainer',
    wall: false,
    url: 'https://cdn.example-faq.test/akamai-reference-number',
    status: 200,
    body: html(
      `<title>Access Denied with a Reference # from Akamai</title>${og('What the Akamai Reference # means')}`,
      `<article>${paragraphs('An edge refusal reads Access Denied, You do not have permission to access this server, Reference #18.5e2d3b17, with errors.edgesuite.net below it.')}</article>`,
    ),
  },
  {
    name: 'Amazon product page of a book called "Robot Check"',
    wall: false,
    url: 'https://www.amazon.com/Robot-Check-Novel/dp/B0D000ROBO',
    status: 200,
    body: html(
      `<title>Amazon.com: Robot Check: A Novel: 9781234567890: Books</title>${og('Robot Check: A Novel', '<meta property="og:image" content="https://m.media-amazon.com/images/I/robot.jpg">')}`,
      `<div id="dp"><h1 id="title">Robot Check: A Novel</h1>${paragraphs('A factory inspector must decide which of the androids on the line is lying. Paperback, 320 pages.')}</div>`,
    ),
  },
  {
    name: 'forum thread titled "Attention Required! | Cloudflare"',
    wall: false,
    url: 'https://forum.example-dev.test/t/attention-required-cloudflare/4411',
    status: 200,
    body: html(
      `<title>Attention Required! | Cloudflare</title>${og('Attention Required! | Cloudflare')}`,
      `<div class="topic">${paragraphs('My scraper gets Attention Required! | Cloudflare since Monday. Reply: the site turned on a WAF rule for your ASN.')}</div>`,
    ),
  },
  {
    name: 'meta refresh to a moved article',
    wall: false,
    url: 'https://www.example-times.test/old/bridge',
    status: 200,
    body: html(
      `<title>Bridge reopens</title>${og('Bridge reopens')}<meta http-equiv="refresh" content="5; url=/2026/11/bridge-reopens">`,
      `<article><h1>Bridge reopens</h1>${paragraphs('The old bridge reopened on Monday after two years of repairs; cyclists get their own lane.')}</article>`,
    ),
  },
  {
    name: 'language redirect by script to /en/',
    wall: false,
    url: 'https://www.example-museum.test/',
    status: 200,
    body: html(
      '<title>Example Museum</title><script>if (navigator.language.startsWith("en")) location.replace("/en/");</script>',
      `<main><h1>Example Museum</h1>${paragraphs('Open every day but Monday, ten to six. The winter exhibition shows Dutch landscapes.')}</main>`,
    ),
  },
  {
    name: 'article with a login button that sets location.href to /login',
    wall: false,
    url: 'https://www.example-forum.test/t/gardening-tools/12',
    status: 200,
    body: html(
      `<title>Best gardening tools</title>${og('Best gardening tools')}`,
      `<header><button onclick="location.href='/login?next=/t/gardening-tools/12'">Log in</button></header><article>${paragraphs('A good spade, a hori-hori knife and a pair of bypass pruners cover most of the work.')}</article><script>document.querySelector('#reply').onclick=function(){location.href='/login?next='+encodeURIComponent(location.pathname)}</script>`,
    ),
  },
  {
    name: 'OAuth reference page for the /authorize endpoint',
    wall: false,
    url: 'https://developer.example-api.test/reference/oauth2/authorize',
    status: 200,
    body: html(
      `<title>GET /oauth2/authorize</title>${og('The authorize endpoint')}`,
      `<main><h1>GET /oauth2/authorize</h1>${paragraphs('Send the user to /oauth2/authorize?client_id=...&amp;redirect_uri=...&amp;response_type=code; we redirect back with a code.')}</main>`,
    ),
  },
  {
    name: 'Keycloak docs page about /protocol/openid-connect/auth',
    wall: false,
    url: 'https://docs.example-iam.test/securing-apps/oidc-layers',
    status: 200,
    body: html(
      `<title>OpenID Connect endpoints</title>${og('OpenID Connect endpoints')}`,
      `<main>${paragraphs('The authorization endpoint is /realms/{realm}/protocol/openid-connect/auth; SAML clients use /realms/{realm}/protocol/saml with a SAMLRequest parameter.')}</main>`,
    ),
  },
  {
    name: 'short contact page with hCaptcha and "Prove you are human", no og:title',
    wall: false,
    url: 'https://www.example-bakery.test/order',
    status: 200,
    body: html(
      '<title>Order a cake</title><script src="https://js.hcaptcha.com/1/api.js" async></script>',
      '<h1>Order a cake</h1><form method="post" action="/order"><input type="text" name="name" placeholder="Your name"><input type="tel" name="phone"><select name="size"><option>Small</option><option>Large</option></select><p>Prove you are human:</p><div class="h-captcha" data-sitekey="10000000-ffff"></div><button>Order</button></form>',
    ),
  },
  {
    name: 'a 401 JSON-ish page without WWW-Authenticate',
    wall: false,
    url: 'https://api.example-data.test/v1/report',
    status: 401,
    body: html('<title>401 Unauthorized</title>', '<p>Missing API key.</p>'),
  },
  {
    name: 'security tips article titled "Security check"',
    wall: false,
    url: 'https://www.example-bank.test/blog/security-check',
    status: 200,
    body: html(
      `<title>Security check</title>${og('Security check: five habits')}`,
      `<article>${paragraphs('Use a password manager, turn on two-factor sign-in, and never share a code someone calls you about.')}</article>`,
    ),
  },
  {
    name: 'robotics club page "Are you a robot?"',
    wall: false,
    url: 'https://club.example-robots.test/events/are-you-a-robot',
    status: 200,
    body: html(
      '<title>Are you a robot?</title>',
      `<main><h1>Are you a robot?</h1>${paragraphs('Our yearly quiz night: humans against the club robots, questions on maths and music.')}<form action="/rsvp" method="post"><input type="text" name="name"><input type="email" name="email"><button>RSVP</button></form></main>`,
    ),
  },
  {
    name: 'a docs page whose URL ends in /signin with real content, reached by a redirect',
    wall: false,
    url: 'https://docs.example-cloud.test/guide/auth',
    finalUrl: 'https://docs.example-cloud.test/guide/signin?from=auth',
    status: 200,
    body: html(
      `<title>Sign-in options</title>${og('Sign-in options')}`,
      `<main><h1>Sign-in options</h1>${paragraphs('Choose password, passkey or single sign-on for your organisation; each can be required for admins only.')}</main>`,
    ),
  },
  {
    name: 'an article whose first 32 KB are inline scripts, one of them sending readers to /login',
    wall: false,
    // Sized so that the redirect is inside the first 32 KB (what the fetcher looks at) and nearly all the text after them.
    url: 'https://www.example-daily.test/2026/11/harbour-festival',
    status: 200,
    body: html(
      `<title>Harbour festival draws record crowds</title><script>${'window.__STATE__=window.__STATE__||{};'.repeat(855)}function needLogin(){location.href='/login?next=/2026/11/harbour-festival'}</script>`,
      `<article><h1>Harbour festival draws record crowds</h1>${paragraphs('Forty thousand visitors came for the tall ships, the fish market and the fireworks over the old harbour wall.')}</article>`,
    ),
  },
  {
    name: 'a short status page titled "Please wait..."',
    wall: false,
    url: 'https://status.example-host.test/',
    status: 200,
    body: html(
      `<title>Please wait...</title>${og('Example Host status')}`,
      `<main><h1>All systems operational</h1>${paragraphs('API, dashboard and DNS answer normally. Last incident: 3 days ago, 12 minutes.', 4)}</main>`,
    ),
  },
];
