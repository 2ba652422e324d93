/**
 * A Reddit post's player (docs/embeds.md): the post on Reddit's embed host,
 * `embed.reddit.com/r/<subreddit>/comments/<id>/?embed=true` (what Reddit's embed script frames), a
 * post-sized box. The subreddit comes from the link, else from the post as the platform read it
 * (a `/comments/<id>` or `redd.it` link names none); a share link's post is where it led.
 */
import type { Player } from '../../embed/types.js';
import type { PlatformMatch, PlatformPreview } from '../types.js';
import { matchReddit } from './site.js';

const NAME = /^[A-Za-z0-9_]{2,32}$/;

/** The post the link names, or where a share link led (its trail's last URL). */
function postOf(match: PlatformMatch, preview: PlatformPreview | undefined): { postId?: string; subreddit?: string } {
  if (match.kind === 'post') return match.ids;
  const last = match.kind === 'share' ? preview?.trail?.at(-1) : undefined;
  if (!last) return {};
  try {
    const target = matchReddit(new URL(last));
    return target?.kind === 'post' ? target.ids : {};
  } catch {
    return {};
  }
}

export function player(_url: URL, match: PlatformMatch, preview?: PlatformPreview): Player | undefined {
  const { postId, subreddit: named } = postOf(match, preview);
  const community = preview?.fields.forumPost?.community?.name;
  const subreddit = named ?? community;
  if (!postId || !/^[a-z0-9]{3,12}$/.test(postId) || !subreddit || !NAME.test(subreddit)) return undefined;
  return { type: 'rich', url: `https://embed.reddit.com/r/${subreddit}/comments/${postId}/?embed=true`, provider: 'Reddit', width: 640, height: 500 };
}
