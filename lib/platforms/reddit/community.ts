/**
 * A subreddit (FORUM_COMMUNITY, `forumCommunity`) from `/r/{sub}/about.json`; also the community
 * a post carries. A private, banned or quarantined subreddit is ok:false with the reason.
 */
import type { ForumCommunity } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { isoDate } from '../shared/dates.js';
import { at, type Json, num, str } from '../shared/json.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { fetchJson, forumObjectId, gone, imageUrl, isVerdict } from './site.js';

export async function buildCommunity(d: Json, ctx: Ctx): Promise<ForumCommunity> {
  const name = str(d.display_name);
  const own = str(d.name) ?? (name ? name.toLowerCase() : 'unknown');
  const [avatar, banner] = await Promise.all([
    ctx.hostImage(imageUrl(d.community_icon) ?? imageUrl(d.icon_img)),
    ctx.hostImage(imageUrl(d.banner_background_image) ?? imageUrl(d.banner_img) ?? imageUrl(d.mobile_banner_image)),
  ]);
  const c: ForumCommunity = { id: forumObjectId('community', own) };
  if (name) c.name = name;
  if (str(d.title)) c.title = str(d.title);
  const description = str(d.public_description) ?? str(d.description);
  if (description) c.description = description;
  if (str(d.subreddit_type)) c.type = str(d.subreddit_type);
  if (num(d.subscribers) !== undefined) c.subscribersCount = num(d.subscribers);
  const active = num(d.active_user_count) ?? num(d.accounts_active);
  if (active !== undefined) c.activeUsersCount = active;
  if (isoDate(d.created_utc)) c.createdDate = isoDate(d.created_utc);
  if (typeof d.over18 === 'boolean') c.nsfw = d.over18;
  if (banner) c.banner = toImageSet(banner);
  if (avatar) c.avatar = toImageSet(avatar);
  return c;
}

export const COMMUNITY_GONE: Record<string, string> = {
  private: 'This community is private.',
  banned: 'This community was banned.',
  quarantined: 'This community is quarantined.',
  gold_only: 'This community is for premium members only.',
};

export async function extractCommunity(subreddit: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const answer = await fetchJson(`/r/${subreddit}/about.json?raw_json=1`, ctx);
  if (answer.status === 429 || !answer.isJson) return undefined;
  const fields = { forumCommunity: { id: forumObjectId('community', subreddit.toLowerCase()), name: subreddit } };
  if (isVerdict(answer)) {
    return gone('FORUM_COMMUNITY', answer.status, COMMUNITY_GONE[answer.reason ?? ''] ?? 'This community does not exist.', fields);
  }
  const d = at(answer.json, 'data') as Json | undefined;
  // A name Reddit does not know answers with a search listing, not a t5.
  if (answer.status !== 200 || at(answer.json, 'kind') !== 't5' || !d) {
    return answer.status === 200 ? gone('FORUM_COMMUNITY', 404, 'This community does not exist.', fields) : undefined;
  }
  const community = await buildCommunity(d, ctx);
  const prefixed = str(d.display_name_prefixed) ?? `r/${community.name ?? subreddit}`;
  return {
    type: 'FORUM_COMMUNITY',
    ok: true,
    status: answer.status,
    title: community.title ? `${community.title} (${prefixed})` : prefixed,
    description: community.description ?? '',
    ...(community.avatar ? { image: community.avatar } : community.banner ? { image: community.banner } : {}),
    fields: { forumCommunity: community },
  };
}
