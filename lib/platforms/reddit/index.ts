/**
 * Reddit (platform `forum`): posts (FORUM_POST, `forumPost`: ./post.ts), subreddits
 * (FORUM_COMMUNITY, `forumCommunity`: ./community.ts) and users (FORUM_USER, `forumUser`: ./user.ts) from
 * the public `.json` endpoints (`/comments/{id}.json`, `/r/{sub}/about.json`,
 * `/user/{name}/about.json`), asked with linklens's own User-Agent. Key-less Reddit allows about
 * 10 requests a minute per address; a post costs two (the post and its subreddit's about.json,
 * the latter best-effort). A share link (`/r/{sub}/s/{code}`) is resolved by following its redirect.
 *
 * When the source fails (blocked, rate-limited, an HTML answer) the generic preview of the link is
 * used. What Reddit itself says is gone (a removed or deleted post, a private, banned or
 * quarantined subreddit, a suspended or deleted user) is reported as ok:false with the reason,
 * never as a page titled "Reddit - Dive into anything".
 * Base URLs and the OAuth client are its settings (./settings.ts), given to it as `ctx.settings`.
 */
import { metaValues } from '../../extract/rules.js';
import type { Platform } from '../types.js';
import { player } from './player.js';
import { settings } from './settings.js';
import { matchReddit } from './site.js';

export { matchReddit };

import { extractCommunity } from './community.js';
import { extractPost, extractShare } from './post.js';
import { extractUser } from './user.js';

export const reddit: Platform<typeof settings> = {
  name: 'forum',
  siteName: 'Reddit',
  settings,
  hostProfile: {
    hosts: ['reddit.com'],
    userAgent: 'Mozilla/5.0 (compatible; Discordbot/2.0; linklens/1.0)',
    note: 'serves Open Graph HTML to preview bots instead of the "blocked" page for unknown clients',
  },
  match: matchReddit,
  player,
  async extract(url, match, ctx) {
    switch (match.kind) {
      case 'post':
        return extractPost(match.ids.postId, ctx);
      case 'share':
        return extractShare(url, match.ids.subreddit, match.ids.share, ctx);
      case 'community':
        return extractCommunity(match.ids.subreddit, ctx);
      case 'user':
        return extractUser(match.ids.username, ctx);
      default:
        return undefined;
    }
  },
  // Reddit's page read generically (the .json source blocked): its og tags are templates
  // ("From the lotus community on Reddit: …", "Explore this post and more from the lotus
  // community"), while <title> ("Post title : r/lotus") and the meta description (the post's
  // first lines) are the post's own.
  pageRules: {
    title: [{ name: 'reddit <title>', get: (c) => (c.page.title && / : (r\/)?[A-Za-z0-9_]{2,32}$/.test(c.page.title) ? c.page.title : undefined) }],
    description: [{ name: 'reddit meta description', get: (c) => metaValues(c.page, 'description') }],
  },
};
