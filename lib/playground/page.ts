/**
 * The playground: `GET /` from a browser (an Accept that names text/html) answers a page that
 * previews a link and shows the record as cards, its player, its Server-Timing phases and its
 * JSON, and previews a list of links as a batch (`POST /previews`), showing each item as it
 * finishes (lib/playground/app.ts, bundled into ./script.gen.ts). The page, its script and
 * its stylesheet are static: they hold no key and need none. The key the user types stays in the
 * tab's session storage and goes only to this origin's `POST /`, so the same answers are safe from
 * the local server and from the deployed API (docs/clients.md, "The playground").
 *
 * The form cannot submit itself: `method="dialog"` outside a dialog sends nothing anywhere, its
 * button is disabled until the script has run, and its inputs have no name. Submitted before the
 * script ran (a slow or blocked script), it navigates nowhere, so the key never lands in the
 * address bar, the history or a proxy's log. The players' origins the operator added
 * (LINKPREVIEW_EMBED_ORIGINS) are the page's `player-origins`: the client builds those players
 * too, besides the list's.
 *
 * Every answer carries the assets' security headers and a strict CSP: scripts and styles from
 * this origin only (no inline script, no inline style), `connect-src 'self'`, images from this
 * origin or https (the hosted images and icons), players in https frames only, no framing of the page.
 */
import { escapeHtml } from '../client/escape.js';
import { PLAYGROUND_JS } from './script.gen.js';

export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https:",
  "media-src 'self' https:",
  'frame-src https:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': PLAYGROUND_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

const CSS = `
:root{color-scheme:light dark;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0;background:Canvas;color:CanvasText}
header,main{max-width:1200px;margin:0 auto;padding:16px}
header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;opacity:.75}
form{display:grid;grid-template-columns:1fr minmax(140px,260px) auto;gap:8px;align-items:end}
label{display:grid;gap:4px;font-size:13px}
input{font:inherit;padding:8px 10px;border:1px solid #8899a6;border-radius:8px;background:Field;color:FieldText;min-width:0}
button{font:inherit;padding:8px 14px;border:0;border-radius:8px;background:#1d72d3;color:#fff;cursor:pointer}
button:disabled{background:#8899a6;cursor:not-allowed}
@media (max-width:640px){form{grid-template-columns:1fr}}
#status{min-height:1.4em;margin:12px 0}
section{margin:20px 0}
h2{font-size:16px;margin:0 0 10px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:16px;align-items:start}
.cards figure{margin:0;display:grid;gap:6px;align-content:start;padding:10px;border-radius:10px;background:#f4f6f8;color:#333}
.cards figcaption{font-size:12px}
.cards .dark-bg{background:#000;color:#ccc}
#player-box iframe,#player-box video{width:100%;max-width:640px;aspect-ratio:16/9;border:0}
#player-box audio{width:100%;max-width:640px}
.bar-row{display:grid;grid-template-columns:140px 1fr 80px;gap:8px;align-items:center;font-size:13px}
.bar-track{background:#8881;border-radius:4px;height:12px}
.bar{display:block;height:12px;border-radius:4px;background:#1d72d3;min-width:2px}
.bar-value{text-align:end;font-variant-numeric:tabular-nums}
pre{overflow:auto;max-height:480px;padding:12px;border-radius:8px;background:#8881;font-size:12px}
#batch-form{grid-template-columns:1fr auto}
textarea{font:inherit;padding:8px 10px;border:1px solid #8899a6;border-radius:8px;background:Field;color:FieldText;min-width:0;resize:vertical}
.batch-items{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(300px,100%),1fr));gap:12px;padding:0;list-style:none}
.batch-items li{display:grid;gap:6px;align-content:start;padding:10px;border-radius:10px;background:#8881;font-size:13px}
.batch-items .state{font-size:11px;font-weight:600;letter-spacing:.04em;text-transform:uppercase}
.batch-items .state-done{color:#1a7f37}
.batch-items .state-failed{color:#c62828}
.batch-items .item-link{overflow-wrap:anywhere;opacity:.75}
`.trim();

function page(base: string, playerOrigins: readonly string[]): string {
  const origins = escapeHtml(playerOrigins.join(' '));
  const card = (size: string, theme: string) =>
    `<figure${theme === 'dark' ? ' class="dark-bg"' : ''}><figcaption>${size}, ${theme}</figcaption><linklens-card size="${size}" theme="${theme}" player-origins="${origins}"></linklens-card></figure>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>linklens playground</title><link rel="stylesheet" href="${base}/playground.css"><script type="module" src="${base}/playground.js"></script></head>
<body><header><h1>linklens playground</h1><p>Preview a link with this linklens: the cards a client renders from the record, its player, where the time went, and the record itself.</p></header>
<main>
<form id="form" method="dialog"><label>Link<input id="link" type="url" required placeholder="https://example.com/article" autocomplete="url"></label>
<label>Key<input id="key" type="password" autocomplete="off" spellcheck="false"></label><button type="submit" disabled>Preview</button></form>
<p id="status" role="status" aria-live="polite"></p>
<section id="cards" hidden aria-labelledby="cards-title"><h2 id="cards-title">Cards</h2><div class="cards">${card('large', 'light')}${card('large', 'dark')}${card('small', 'light')}${card('small', 'dark')}</div></section>
<section id="player" hidden aria-labelledby="player-title"><h2 id="player-title">Player</h2><p id="player-facts"></p><button type="button" id="load-player">Load the player</button><div id="player-box" data-player-origins="${origins}"></div></section>
<section id="timing" hidden aria-labelledby="timing-title"><h2 id="timing-title">Server-Timing</h2><div id="bars"></div></section>
<section id="json" hidden aria-labelledby="json-title"><h2 id="json-title">Record</h2><pre id="record"></pre></section>
<section id="many" aria-labelledby="many-title"><h2 id="many-title">Many links</h2>
<form id="batch-form" method="dialog"><label>Links, one a line (POST /previews, with the key above)<textarea id="links" rows="4" spellcheck="false" placeholder="https://example.com/a&#10;https://example.com/b"></textarea></label><button type="submit" disabled>Preview all</button></form>
<p id="batch-status" role="status" aria-live="polite"></p><ol id="batch-items" class="batch-items"></ol></section>
</main></body></html>`;
}

export interface PlaygroundAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Whether an Accept header asks for a page (a browser's navigation names text/html). */
export function wantsHtml(accept: string | undefined): boolean {
  return /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept ?? '');
}

/**
 * The playground's answer for a route (`/`, `/playground.js`, `/playground.css`), or undefined
 * for any other. `base` is the path prefix the API is served under (a named stage), '' at the
 * root; `playerOrigins` the operator's player origins (LINKPREVIEW_EMBED_ORIGINS).
 */
export function playgroundAnswer(route: string, base: string, playerOrigins: readonly string[] = []): PlaygroundAnswer | undefined {
  const answer = (type: string, body: string, cacheControl: string): PlaygroundAnswer => ({
    statusCode: 200,
    headers: { 'content-type': type, 'cache-control': cacheControl, ...SECURITY_HEADERS },
    body,
  });
  if (route === '/') return answer('text/html; charset=utf-8', page(base, playerOrigins), 'no-cache');
  if (route === '/playground.js') return answer('text/javascript; charset=utf-8', PLAYGROUND_JS, 'public, max-age=300');
  if (route === '/playground.css') return answer('text/css; charset=utf-8', CSS, 'public, max-age=300');
  return undefined;
}
