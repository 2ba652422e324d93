/**
 * The playground's script (browser code, bundled into lib/http/playground-assets.gen.ts by
 * `npm run playground:build`): a link and a key in, and out the record as cards (both sizes, both
 * themes, through `<linklens-card>`), its player (built only on a click), its Server-Timing
 * phases as bars, and the record as JSON. The key stays in this tab's session storage and goes
 * only to this origin's `POST /`. Nothing here writes markup from the record: text goes in as
 * text, the cards render it escaped, and sizes are set through the CSSOM (the page's CSP forbids
 * inline styles).
 */
import { playerOriginsOf } from '../client/card.js';
import { buildPlayer, defineCardElement, type LinklensCardElement } from '../client/card-element.js';
import type { LinkRecord } from '../contract/link.js';

const KEY_ITEM = 'linklens.playground.key';

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

interface Phase {
  name: string;
  ms: number;
  desc?: string;
}

/** `name;dur=12.3;desc="..."` entries of a Server-Timing header. */
export function parseServerTiming(header: string | null): Phase[] {
  if (!header) return [];
  const phases: Phase[] = [];
  for (const entry of header.split(',')) {
    const [name, ...params] = entry.trim().split(';');
    if (!name) continue;
    let ms = 0;
    let desc: string | undefined;
    for (const p of params) {
      const [k, v = ''] = p.trim().split('=');
      if (k === 'dur') ms = Number(v) || 0;
      if (k === 'desc') desc = v.replace(/^"|"$/g, '');
    }
    phases.push({ name: name.trim(), ms, desc });
  }
  return phases;
}

function showTiming(phases: Phase[]): void {
  const box = byId('bars');
  box.replaceChildren();
  const max = Math.max(1, ...phases.map((p) => p.ms));
  for (const p of phases) {
    const row = document.createElement('div');
    row.className = 'bar-row';
    const label = document.createElement('span');
    label.className = 'bar-label';
    label.textContent = p.name;
    const track = document.createElement('span');
    track.className = 'bar-track';
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${(100 * p.ms) / max}%`;
    track.append(bar);
    const value = document.createElement('span');
    value.className = 'bar-value';
    value.textContent = `${p.ms.toFixed(1)} ms`;
    row.append(label, track, value);
    box.append(row);
  }
  byId('timing').hidden = phases.length === 0;
}

function showCards(record: LinkRecord): void {
  for (const el of Array.from(document.querySelectorAll<LinklensCardElement>('#cards linklens-card'))) el.record = record;
  byId('cards').hidden = false;
}

function showPlayer(record: LinkRecord): void {
  const box = byId('player-box');
  box.replaceChildren();
  const load = byId<HTMLButtonElement>('load-player');
  byId('player').hidden = !record.embed;
  byId('player-facts').textContent = record.embed ? `${record.embed.provider} · ${record.embed.type} · ${record.embed.url}` : '';
  load.hidden = !record.embed;
  const playerOrigins = playerOriginsOf(box.dataset.playerOrigins);
  load.onclick = () => {
    const player = record.embed && buildPlayer(document, record.embed.html, { playerOrigins });
    if (!player) {
      byId('player-facts').textContent += ' · not a player this client builds (on no provider of its list, nor on an origin of LINKPREVIEW_EMBED_ORIGINS)';
      load.hidden = true;
      return;
    }
    load.hidden = true;
    box.append(player);
  };
}

async function preview(link: string, key: string): Promise<void> {
  const status = byId('status');
  status.textContent = 'Previewing…';
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(location.pathname, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ link }),
    });
  } catch (err) {
    status.textContent = `Could not reach linklens: ${String(err)}`;
    return;
  }
  const body = (await res.json().catch(() => undefined)) as (LinkRecord & { errorCode?: string; message?: string }) | undefined;
  const ms = Math.round(performance.now() - started);
  showTiming(parseServerTiming(res.headers.get('server-timing')));
  byId('record').textContent = JSON.stringify(body, null, 2);
  byId('json').hidden = false;
  if (!res.ok || !body || body.errorCode) {
    status.textContent = `HTTP ${res.status}${body?.errorCode ? ` ${body.errorCode}` : ''}${body?.message ? `: ${body.message}` : ''}`;
    byId('cards').hidden = true;
    byId('player').hidden = true;
    return;
  }
  status.textContent = `${body.ok ? 'OK' : 'Not previewable'} · ${body.type} · HTTP ${body.status} · ${ms} ms`;
  showCards(body);
  showPlayer(body);
}

function start(): void {
  defineCardElement();
  const keyInput = byId<HTMLInputElement>('key');
  keyInput.value = sessionStorage.getItem(KEY_ITEM) ?? '';
  const form = byId<HTMLFormElement>('form');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const link = byId<HTMLInputElement>('link').value.trim();
    const key = keyInput.value.trim();
    sessionStorage.setItem(KEY_ITEM, key);
    void preview(link, key);
  });
  // The page's button stays disabled until now: the form never submits without this script.
  for (const button of Array.from(form.querySelectorAll('button'))) button.disabled = false;
  document.documentElement.dataset.ready = 'true';
}

start();
