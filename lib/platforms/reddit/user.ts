/**
 * A Reddit user (FORUM_USER, `forumUser`) from `/user/{name}/about.json`. A suspended or deleted
 * user is ok:false with the reason.
 */
import type { ForumUser } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { isoDate } from '../shared/dates.js';
import { at, type Json, num, str } from '../shared/json.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { fetchJson, forumObjectId, gone, imageUrl, isVerdict } from './site.js';

export async function extractUser(username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const answer = await fetchJson(`/user/${username}/about.json?raw_json=1`, ctx);
  if (answer.status === 429 || !answer.isJson) return undefined;
  const stub = { forumUser: { id: forumObjectId('user', username.toLowerCase()), username } };
  if (isVerdict(answer)) return gone('FORUM_USER', answer.status, 'This account does not exist or was deleted.', stub);
  const d = at(answer.json, 'data') as Json | undefined;
  if (answer.status !== 200 || !d) return undefined;
  if (d.is_suspended === true)
    return gone('FORUM_USER', answer.status, 'This account has been suspended.', { forumUser: { ...stub.forumUser, username: str(d.name) ?? username } });

  const profile = (d.subreddit ?? {}) as Json;
  const [avatar, flattened, banner] = await Promise.all([
    ctx.hostImage(imageUrl(d.icon_img) ?? imageUrl(profile.icon_img)),
    ctx.hostImage(imageUrl(d.snoovatar_img)),
    ctx.hostImage(imageUrl(profile.banner_img)),
  ]);
  const name = str(d.name) ?? username;
  const u: ForumUser = { id: forumObjectId('user', str(d.id) ? `t2_${d.id}` : name.toLowerCase()), username: name };
  const display = str(profile.title);
  if (display) u.name = display;
  const bio = str(profile.public_description);
  if (bio) u.bio = bio;
  if (flattened) u.flattenedAvatar = toImageSet(flattened);
  if (avatar) u.avatar = toImageSet(avatar);
  if (banner) u.banner = toImageSet(banner);
  const post = num(d.link_karma);
  const comment = num(d.comment_karma);
  const total = num(d.total_karma) ?? (post !== undefined && comment !== undefined ? post + comment : undefined);
  if (total !== undefined) u.karma = total;
  if (post !== undefined) u.postKarma = post;
  if (comment !== undefined) u.commentKarma = comment;
  if (isoDate(d.created_utc)) u.joinedAt = isoDate(d.created_utc);
  return {
    type: 'FORUM_USER',
    ok: true,
    status: answer.status,
    title: display ? `${display} (u/${name})` : `u/${name}`,
    description: bio ?? '',
    ...(u.avatar ? { image: u.avatar } : {}),
    fields: { forumUser: u },
  };
}
