/**
 * The playground's script (browser code, bundled into lib/playground/script.gen.ts by
 * `npm run playground:build`): a link and a key in, and out the record as cards (both sizes, both
 * themes, through `<linklens-card>`), its player (built only on a click), its Server-Timing
 * phases as bars, and the record as JSON; and a list of links as a batch, each item shown as it
 * finishes. The key stays in this tab's session storage and goes
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

/** A batch as GET /previews/{batchId} answers it (the fields shown here). */
interface BatchView {
  batchId: string;
  state: 'queued' | 'running' | 'done';
  counts: { queued: number; running: number; done: number; failed: number };
  items: { index: number; link: string; state: string; errorCode?: string; message?: string; record?: LinkRecord }[];
  errorCode?: string;
  message?: string;
}

/** How often a batch is read again while it runs. */
const BATCH_POLL_MS = 500;

/** Each item as a list entry: its state, its link, and once done its small card (or why it failed). */
function showItems(batch: BatchView, rows: Map<number, HTMLLIElement>): void {
  const list = byId('batch-items');
  for (const item of batch.items) {
    let row = rows.get(item.index);
    if (!row) {
      row = document.createElement('li');
      const state = document.createElement('span');
      const link = document.createElement('span');
      link.className = 'item-link';
      link.textContent = item.link;
      row.append(state, link);
      rows.set(item.index, row);
      list.append(row);
    }
    const state = row.firstElementChild as HTMLElement;
    state.className = `state state-${item.state}`;
    state.textContent = item.errorCode ? `${item.state} · ${item.errorCode}` : item.state;
    if (item.record && !row.querySelector('linklens-card')) {
      const card = document.createElement('linklens-card') as LinklensCardElement;
      card.setAttribute('size', 'small');
      card.record = item.record;
      row.append(card);
    }
  }
  const { done, failed, queued, running } = batch.counts;
  byId('batch-status').textContent =
    `${batch.batchId} · ${done} done · ${failed} failed · ${queued + running} to go${batch.state === 'done' ? ' · finished' : ''}`;
}

/** Submits the links as a batch and shows its items as they finish (polling GET /previews/{batchId}). */
async function previewMany(links: string[], key: string): Promise<void> {
  const status = byId('batch-status');
  const rows = new Map<number, HTMLLIElement>();
  byId('batch-items').replaceChildren();
  status.textContent = `Submitting ${links.length} links…`;
  const base = location.pathname.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
  const call = async (url: string, init: RequestInit): Promise<{ res: Response; body?: BatchView }> => {
    const res = await fetch(url, init);
    return { res, body: (await res.json().catch(() => undefined)) as BatchView | undefined };
  };
  try {
    let { res, body } = await call(`${base}/previews`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ links }),
    });
    while (res.ok && body && !body.errorCode) {
      showItems(body, rows);
      if (body.state === 'done') return;
      await new Promise((r) => setTimeout(r, BATCH_POLL_MS));
      ({ res, body } = await call(`${base}/previews/${encodeURIComponent(body.batchId)}`, { headers }));
    }
    status.textContent = `HTTP ${res.status}${body?.errorCode ? ` ${body.errorCode}` : ''}${body?.message ? `: ${body.message}` : ''}`;
  } catch (err) {
    status.textContent = `Could not reach linklens: ${String(err)}`;
  }
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
  const batchForm = byId<HTMLFormElement>('batch-form');
  batchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const links = byId<HTMLTextAreaElement>('links')
      .value.split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const key = keyInput.value.trim();
    sessionStorage.setItem(KEY_ITEM, key);
    if (links.length) void previewMany(links, key);
  });
  // The pages' buttons stay disabled until now: the forms never submit without this script.
  for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>('form button'))) button.disabled = false;
  document.documentElement.dataset.ready = 'true';
}

start();
