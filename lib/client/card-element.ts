/**
 * The card in a browser: `activateCard(root)` brings a rendered card to life (colours through the
 * CSSOM, the blurhash drawn on a canvas, the play button), and `defineCardElement()` registers
 * `<linklens-card>`, which renders a record in its shadow root with the card's own stylesheet and
 * activates it. Nothing here touches a browser global until it is called, so the module loads in
 * Node and edge runtimes too.
 *
 * The player is built only on a click, from the record's `embed.html` parsed inert (a `<template>`:
 * nothing in it loads or runs): the first `<iframe>`, `<video>` or `<audio>` is rebuilt from the
 * attributes a player needs, each checked, so nothing else of it reaches the page and nothing is
 * requested from the player's origin before the click. An iframe is rebuilt only on a player
 * place of the list the server shares (./players.ts: a provider's origin and player paths, no
 * encoded slash or dot segment), or on an origin the caller trusts (`playerOrigins`); its `allow`
 * keeps only what linklens grants that kind of player, its `sandbox` only linklens's own tokens,
 * its referrer policy is linklens's.
 */
import type { LinkRecord } from '../contract/link.js';
import { decodeBlurhash } from './blurhash.js';
import { type CardOptions, cardStyles, playerOriginsOf, renderCard, webUrl } from './card.js';
import { frameAllowance, REFERRER_POLICY, SANDBOX } from './players.js';

/** The sandbox tokens linklens emits (./players.ts): no other passes. */
const SANDBOX_TOKENS = SANDBOX.split(' ');

/** What a page gives `buildPlayer` and `activateCard` besides the record. */
export interface PlayerOptions {
  /**
   * https origins (`https://player.example.com`) whose iframes may be built besides the list's:
   * the operator's LINKPREVIEW_EMBED_ORIGINS, a site's own player the page trusts. None by default.
   */
  playerOrigins?: readonly string[];
}

/** The tokens of `allowed` that `value` names, in `allowed`'s order: nothing else of it passes. */
const tokens = (value: string | null, allowed: readonly string[]) => {
  const named = new Set((value ?? '').split(/[\s;]+/).filter(Boolean));
  return allowed.filter((t) => named.has(t));
};

const dimension = (value: string | null) => (value && /^\d{1,4}$/.test(value) ? value : undefined);

/** The iframe of a player, rebuilt when its address is on the list (or a trusted origin); undefined otherwise. */
function buildFrame(doc: Document, source: Element, origins: readonly string[] | undefined): HTMLIFrameElement | undefined {
  const raw = source.getAttribute('src')?.trim() ?? '';
  const src = webUrl(raw, true);
  const allowed = src && frameAllowance(raw, origins);
  if (!src || !allowed) return undefined;
  const frame = doc.createElement('iframe');
  frame.src = src;
  frame.title = (source.getAttribute('title') ?? 'Player').slice(0, 200);
  frame.setAttribute('allow', tokens(source.getAttribute('allow'), allowed).join('; '));
  frame.setAttribute('sandbox', tokens(source.getAttribute('sandbox'), SANDBOX_TOKENS).join(' '));
  frame.setAttribute('referrerpolicy', REFERRER_POLICY);
  frame.className = 'll-player';
  return frame;
}

/** The player element from a record's `embed.html`, rebuilt from checked attributes; undefined when it holds none the client may build. */
export function buildPlayer(doc: Document, html: string, options: PlayerOptions = {}): HTMLElement | undefined {
  const template = doc.createElement('template');
  template.innerHTML = html;
  const source = template.content.querySelector('iframe, video, audio');
  if (!source) return undefined;
  const tag = source.tagName.toLowerCase();
  if (tag === 'iframe') return buildFrame(doc, source, options.playerOrigins);
  const src = webUrl(source.getAttribute('src'));
  if (!src) return undefined;
  const media = doc.createElement(tag as 'video' | 'audio');
  media.src = src;
  media.controls = true;
  media.preload = 'metadata';
  media.autoplay = true;
  const poster = tag === 'video' ? webUrl(source.getAttribute('poster')) : undefined;
  if (poster) (media as HTMLVideoElement).poster = poster;
  for (const a of ['width', 'height']) {
    const v = dimension(source.getAttribute(a));
    if (v) media.setAttribute(a, v);
  }
  media.className = 'll-player';
  return media;
}

function drawBlurhash(box: HTMLElement): void {
  const hash = box.dataset.llBlurhash;
  if (!hash || box.querySelector('canvas')) return;
  const pixels = decodeBlurhash(hash, 32, 20);
  if (!pixels) return;
  const canvas = box.ownerDocument.createElement('canvas');
  canvas.width = 32;
  canvas.height = 20;
  canvas.setAttribute('aria-hidden', 'true');
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const data = ctx.createImageData(32, 20);
  data.data.set(pixels);
  ctx.putImageData(data, 0, 0);
  box.prepend(canvas);
}

function play(button: HTMLElement, options: PlayerOptions): void {
  const box = button.closest('.ll-media-box');
  const player = box && buildPlayer(button.ownerDocument, button.dataset.llEmbed ?? '', options);
  if (!box || !player) return;
  button.hidden = true;
  box.append(player);
  player.focus();
}

/** Activates the cards under `root` (a rendered card's container, a document or a shadow root). Idempotent. */
export function activateCard(root: ParentNode, options: PlayerOptions = {}): void {
  for (const el of Array.from(root.querySelectorAll<HTMLElement>('[data-ll-placeholder],[data-ll-icon]'))) {
    const c = el.dataset.llPlaceholder ?? el.dataset.llIcon;
    if (c && /^#[0-9a-f]{6}$/i.test(c)) el.style.backgroundColor = c;
  }
  for (const box of Array.from(root.querySelectorAll<HTMLElement>('[data-ll-blurhash]'))) drawBlurhash(box);
  for (const button of Array.from(root.querySelectorAll<HTMLElement>('[data-ll-play]'))) {
    if (button.dataset.llActive) continue;
    button.dataset.llActive = '1';
    button.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      play(button, options);
    });
  }
}

/**
 * The `<linklens-card>` element's interface: `record` (a Link record), and the attributes `record`
 * (JSON), `size`, `theme`, `failed`, `locale` and `player-origins` (space-separated https origins
 * whose players may load besides the list's: `PlayerOptions.playerOrigins`).
 */
export interface LinklensCardElement extends HTMLElement {
  record: unknown;
}

/**
 * Registers `<linklens-card>` (or `tagName`) once; returns its class. It renders with
 * `inlineStyles: false` and its stylesheet adopted (constructable stylesheets), so it works under
 * a CSP without 'unsafe-inline'.
 */
export function defineCardElement(tagName = 'linklens-card'): CustomElementConstructor {
  const registry = globalThis.customElements;
  const existing = registry.get(tagName);
  if (existing) return existing;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(`:host{display:block;max-width:560px}${cardStyles}`);
  class LinklensCard extends HTMLElement {
    static observedAttributes = ['record', 'size', 'theme', 'failed', 'locale', 'player-origins'];
    #record: unknown;
    get record(): unknown {
      if (this.#record !== undefined) return this.#record;
      const json = this.getAttribute('record');
      try {
        return json ? JSON.parse(json) : undefined;
      } catch {
        return undefined;
      }
    }
    set record(value: unknown) {
      this.#record = value;
      this.#render();
    }
    connectedCallback() {
      this.#render();
    }
    attributeChangedCallback() {
      if (this.isConnected) this.#render();
    }
    #render() {
      const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
      root.adoptedStyleSheets = [sheet];
      const record = this.record;
      const option = (name: string) => this.getAttribute(name) ?? undefined;
      const playerOrigins = playerOriginsOf(option('player-origins'));
      const options = {
        size: option('size'),
        theme: option('theme'),
        failed: option('failed'),
        locale: option('locale'),
        inlineStyles: false,
        playerOrigins,
      } as CardOptions;
      root.innerHTML = record && typeof record === 'object' ? renderCard(record as LinkRecord, options) : '';
      activateCard(root, { playerOrigins });
    }
  }
  registry.define(tagName, LinklensCard);
  return LinklensCard;
}
