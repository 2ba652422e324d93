/**
 * The record's `embed.html`: an element linklens builds from a Player, never a provider's markup
 * (docs/embeds.md says why each attribute is there). An iframe gets exactly: `src`, its size (a
 * box, a fixed height, or width 100% with the aspect ratio) as a style of numbers, `allow` (only
 * what the kind of player needs), `sandbox`, `loading="lazy"`, `referrerpolicy` and `title`. A
 * media file gets a native `<video>` or `<audio>` with `controls`, `preload="none"`, its address and
 * (video) the hosted poster. Every attribute value is escaped, whatever it holds.
 */
// What each kind may use, the sandbox and the referrer policy: the client's too (its buildPlayer lets through nothing else).
import { escapeHtml } from '../client/escape.js';
import { PLAYER_ALLOW as ALLOW, REFERRER_POLICY, SANDBOX } from '../client/players.js';
import type { Embed } from '../contract/link.js';
import type { Player, PlayerSize } from './types.js';

/** The longest `title` attribute: a post's whole text is not a title. */
const TITLE_CHARS = 200;

function element(tag: string, attributes: [string, string | true][]): string {
  const attrs = attributes.map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`)).join('');
  return `<${tag}${attrs}></${tag}>`;
}

/** A number as CSS takes it: whole pixels, a ratio to four places. */
const px = (n: number) => `${Math.round(n)}px`;
const ratio = (n: number) => String(Math.round(n * 10_000) / 10_000);

/** The element's size as a style made of numbers only: width 100% and the aspect ratio, or a fixed height (with a largest width). */
function sizeStyle(size: PlayerSize): string {
  if (size.aspectRatio) return `width:100%;aspect-ratio:${ratio(size.aspectRatio)};border:0`;
  const max = size.width ? `;max-width:${px(size.width)}` : '';
  return `width:100%${max};height:${px(size.height ?? 150)};border:0`;
}

function titleOf(player: Player, title: string | undefined): string {
  const t = (title ?? '').replace(/\s+/g, ' ').trim();
  const text = t ? `${player.provider}: ${t}` : `${player.provider} player`;
  return text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS - 1)}…` : text;
}

/** The iframe of a player, around its address; `title` names what it plays (the record's title). */
export function iframeHtml(player: Player, title?: string): string {
  return element('iframe', [
    ['src', player.url],
    ['style', sizeStyle(player)],
    ['allow', ALLOW[player.type].join('; ')],
    ['sandbox', SANDBOX],
    ['loading', 'lazy'],
    ['referrerpolicy', REFERRER_POLICY],
    ['title', titleOf(player, title)],
  ]);
}

/** The native element of a media file link: `<video>` (with the hosted poster) or `<audio>`, its address already https. */
export function nativeHtml(player: Player, poster?: string): string {
  const tag = player.type === 'audio' ? 'audio' : 'video';
  const style = tag === 'video' && player.aspectRatio ? `width:100%;aspect-ratio:${ratio(player.aspectRatio)}` : 'width:100%';
  return element(tag, [
    ['controls', true],
    ['preload', 'none'],
    ['src', player.url],
    ...(poster && tag === 'video' ? [['poster', poster] as [string, string]] : []),
    ['style', style],
  ]);
}

/** The player as the record gives it: its aspect ratio to four places (16/9 is 1.7778). */
function rounded(player: Player): Player {
  return player.aspectRatio ? { ...player, aspectRatio: Math.round(player.aspectRatio * 10_000) / 10_000 } : player;
}

/** The record's `embed`: the player and its iframe. */
export function embedOf(player: Player, title?: string): Embed {
  return { ...rounded(player), html: iframeHtml(player, title) };
}

/** The record's `embed` of a media file: the player and its native element. */
export function nativeEmbedOf(player: Player, poster?: string): Embed {
  return { ...rounded(player), html: nativeHtml(player, poster) };
}
