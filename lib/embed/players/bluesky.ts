/**
 * Bluesky: a post, `bsky.app/profile/<handle or DID>/post/<rkey>`, plays at
 * `embed.bsky.app/embed/<DID>/app.bsky.feed.post/<rkey>`. The player needs the author's DID: the
 * link names it, or the post's page does in its `<link rel="alternate" href="at://<DID>/app.bsky.feed.post/<rkey>">`.
 */
import { PLAYER_LIST } from '../../client/players.js';
import type { PageData } from '../../extract/page-data.js';
import type { PlayerProvider } from '../types.js';
import { hostIsOneOf, segments } from './shared.js';

const DID = /^did:(plc|web):[A-Za-z0-9._:%-]{1,200}$/;
const RKEY = /^[A-Za-z0-9]{1,64}$/;
const AT_URI = /^at:\/\/(did:[^/]+)\/app\.bsky\.feed\.post\/([A-Za-z0-9]+)$/;

/** The DID the page's at:// link gives for the post `rkey`. */
function didOnPage(page: PageData | undefined, rkey: string): string | undefined {
  for (const link of page?.links ?? []) {
    const m = link.rel.includes('alternate') ? AT_URI.exec(link.href.trim()) : null;
    if (m && m[2] === rkey && DID.test(m[1])) return m[1];
  }
  return undefined;
}

export const bluesky: PlayerProvider = {
  ...PLAYER_LIST.bluesky,
  fromLink(url, ctx) {
    const [profile, actor, post, rkey, ...rest] = segments(url);
    if (!hostIsOneOf(url, 'bsky.app') || profile !== 'profile' || !actor || post !== 'post' || !rkey || rest.length || !RKEY.test(rkey)) return undefined;
    const named = decodeURIComponent(actor);
    const did = DID.test(named) ? named : didOnPage(ctx.page, rkey);
    if (!did) return undefined;
    return { type: 'rich', url: `https://embed.bsky.app/embed/${did}/app.bsky.feed.post/${rkey}`, provider: 'Bluesky', width: 600, height: 500 };
  },
};
