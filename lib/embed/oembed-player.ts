/**
 * oEmbed as a player source (docs/embeds.md): the provider's `html` is parsed (htmlparser2, never
 * a regular expression) only to find its one `<iframe>`; when that iframe's `src` is on an allowed
 * player origin (./allow.ts), the src (made https) and the size (the iframe's width and height,
 * else the answer's) are kept, and nothing else of the markup. Markup with no iframe (a
 * blockquote and a script), with several, or an iframe with `srcdoc` gives no player.
 *
 * oEmbed is fetched for a player only when nothing else gave one and the endpoint is on the site
 * of an allowed player origin (`oembedWorthFetching`): another provider's answer could only hold a
 * player linklens would drop.
 */
import { Parser } from 'htmlparser2';
import { OEMBED_HTML_CHARS } from '../extract/oembed-source.js';
import type { OEmbedData } from '../extract/rules.js';
import { siteOf } from '../site.js';
import { type AddressHint, playerAt, playerSites } from './allow.js';
import type { EmbedConfig, Player, PlayerSize } from './types.js';

interface Frame {
  src?: string;
  width?: string;
  height?: string;
  srcdoc: boolean;
}

/** Every `<iframe>` of the markup, with the attributes linklens may read (the others are never looked at). */
function framesOf(html: string): Frame[] {
  const frames: Frame[] = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'iframe') frames.push({ src: attrs.src, width: attrs.width, height: attrs.height, srcdoc: 'srcdoc' in attrs });
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return frames;
}

const pixels = (s: string | number | undefined) =>
  typeof s === 'number' ? s : s !== undefined && /^\s*\d{1,5}(px)?\s*$/i.test(s) ? Number.parseInt(s, 10) : undefined;

function sizeOf(frame: Frame, oembed: OEmbedData): PlayerSize | undefined {
  const width = pixels(frame.width) ?? pixels(oembed.width);
  const height = pixels(frame.height) ?? pixels(oembed.height);
  return width || height ? { ...(width ? { width } : {}), ...(height ? { height } : {}) } : undefined;
}

/** The player an oEmbed answer holds, when its markup is one iframe on an allowed player origin. */
export function oembedPlayer(oembed: OEmbedData | undefined, config: EmbedConfig): Player | undefined {
  const html = oembed?.html;
  if (!oembed || !html || html.length > OEMBED_HTML_CHARS) return undefined;
  const frames = framesOf(html);
  if (frames.length !== 1 || frames[0].srcdoc) return undefined;
  const [frame] = frames;
  const provider = oembed.provider_name?.replace(/\s+/g, ' ').trim().slice(0, 100);
  const hint: AddressHint = { type: oembed.type === 'rich' ? 'rich' : 'video', size: sizeOf(frame, oembed), ...(provider ? { provider } : {}) };
  return playerAt(frame.src, hint, { config });
}

/** True when an oEmbed endpoint is worth fetching for a player: its site is one of an allowed player origin's. */
export function oembedWorthFetching(oembedUrl: string | undefined, config: EmbedConfig): boolean {
  if (!oembedUrl) return false;
  try {
    return playerSites({ config }).has(siteOf(new URL(oembedUrl).hostname));
  } catch {
    return false;
  }
}
