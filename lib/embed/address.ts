/**
 * A player's address as the record may carry it: https only. An `http:` address on the default
 * port and a protocol-relative one (`//player.example/...`) are made https; anything else
 * (`javascript:`, `data:`, `blob:`, an `http:` address on a port of its own, credentials in it, a
 * bare IP address) is no player address. The gate (host rules and the on/off setting) is here too.
 */
import { hostRulesOf } from '../fetch/host-rules.js';
import type { EmbedConfig } from './types.js';

/** The longest player address kept. */
const MAX_ADDRESS = 2048;

const IP_LITERAL = /^(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:.]+\])$/i;

/** `raw` (resolved against `base` when relative) as an https URL, or undefined when it cannot be one. */
export function httpsAddress(raw: string | undefined, base?: string): URL | undefined {
  const text = raw?.trim();
  if (!text || text.length > MAX_ADDRESS) return undefined;
  let url: URL;
  try {
    url = text.startsWith('//') ? new URL(`https:${text}`) : new URL(text, base);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:') {
    // An http address on a port of its own is served on that port only: https there is another server.
    if (url.port) return undefined;
    url = new URL(`https:${url.href.slice('http:'.length)}`);
  }
  if (url.protocol !== 'https:' || url.username || url.password || !url.hostname || IP_LITERAL.test(url.hostname)) return undefined;
  return url;
}

/** True when records may carry players at all (LINKPREVIEW_EMBEDS) and no host rule says `no-embed` for any of `urls` (the link, where it led). */
export function embedsFor(config: EmbedConfig, urls: readonly string[]): boolean {
  if (config.embeds === 'off') return false;
  const rules = hostRulesOf(config);
  return !urls.some((u) => rules.has(u, 'no-embed'));
}

/** True when a player at `url` may be shown: no host rule says `no-embed` or `deny` for its host. */
export function playerHostAllowed(config: EmbedConfig, url: URL | string): boolean {
  const verdict = hostRulesOf(config).verdict(url);
  return !verdict.actions.has('no-embed') && !verdict.actions.has('deny');
}
