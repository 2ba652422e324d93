/**
 * An X post's player (docs/embeds.md): the post page X's own widget frames,
 * `platform.twitter.com/embed/Tweet.html?id=<id>` (`dnt=true`: no personalisation), a post-sized box.
 */
import type { Player } from '../../embed/types.js';
import type { PlatformMatch } from '../types.js';

export function player(_url: URL, match: PlatformMatch): Player | undefined {
  const id = match.kind === 'post' ? match.ids.postId : undefined;
  if (!id || !/^\d{1,20}$/.test(id)) return undefined;
  return { type: 'rich', url: `https://platform.twitter.com/embed/Tweet.html?id=${id}&dnt=true`, provider: 'X', width: 550, height: 600 };
}
