/**
 * An X user (MICROBLOG_USER, `microblogUser`): the public profile timeline's embedded data (the
 * full user), else the bot page (name, username, bio, avatar).
 */
import type { MicroblogUser } from '../../contract/link.js';
import { flattenJsonLd, ldTypes } from '../../extract/json-ld.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchSource, optional } from '../shared/fetch.js';
import { arr, bool, compact, obj, parseJson, str } from '../shared/json.js';
import { cleanHtmlText, type ParsedPage, scriptById } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { biggerAvatar, firstTwimg, ICONS, tryPage, userId, userTitle, verifiedFlag } from './site.js';

export async function extractUser(url: URL, username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  // 1. The public profile timeline: the full user object inside its embedded data.
  const tl = await optional(() =>
    fetchSource(`${ctx.settings.timelineUrl}/srv/timeline-profile/screen-name/${encodeURIComponent(username)}?showReplies=false`, ctx, { accept: 'text/html' }),
  );
  const fromTimeline = tl?.text ? timelineUser(tl.text, username) : undefined;
  if (fromTimeline) return finishUser(fromTimeline, ctx);

  // 2. The bot HTML of the profile.
  const page = await tryPage(url.href, ctx);
  if (page) {
    const u = crawlerUser(page);
    if (u) return finishUser(u, ctx);
  }
  return undefined;
}

interface UserDraft {
  user: Omit<MicroblogUser, 'avatar' | 'cover'>;
  avatar?: string;
  cover?: string;
}

/** The user object of the profile timeline's `__NEXT_DATA__` (the account's own posts carry it). */
function timelineUser(html: string, username: string): UserDraft | undefined {
  const data = obj(parseJson(scriptById(html, '__NEXT_DATA__')));
  const props = obj(obj(data?.props)?.pageProps);
  if (!props) return undefined;
  const want = username.toLowerCase();
  let found: Record<string, unknown> | undefined;
  for (const e of arr(obj(props.timeline)?.entries)) {
    const tweet = obj(obj(obj(e)?.content)?.tweet);
    for (const cand of [obj(tweet?.user), obj(obj(tweet?.retweeted_status)?.user)]) {
      if (cand && str(cand.screen_name)?.toLowerCase() === want) {
        found = cand;
        break;
      }
    }
    if (found) break;
  }
  if (!found) return undefined;
  return legacyUser(found);
}

/** A v1.1-style user object (timeline data) as a draft MicroblogUser. */
function legacyUser(u: Record<string, unknown>): UserDraft {
  const screen = str(u.screen_name);
  const url = expandedProfileUrl(u);
  const banner = str(u.profile_banner_url);
  return {
    user: compact({
      id: userId(screen ?? str(u.id_str) ?? ''),
      username: screen,
      name: str(u.name),
      bio: expandText(str(u.description), arr(obj(obj(u.entities)?.description)?.urls)),
      url,
      location: str(u.location),
      verified: verifiedFlag(u),
      protected: bool(u.protected),
      sensitive: bool(u.possibly_sensitive),
      followersCount: parseCount(u.followers_count as number),
      followingCount: parseCount(u.friends_count as number),
      postsCount: parseCount(u.statuses_count as number),
      joinedAt: isoDate(u.created_at),
    }),
    avatar: biggerAvatar(str(u.profile_image_url_https) ?? str(u.profile_image_url)),
    cover: banner ? (/\/\d+x\d+$/.test(banner) ? banner : `${banner}/1500x500`) : undefined,
  };
}

function expandedProfileUrl(u: Record<string, unknown>): string | undefined {
  const urls = arr(obj(obj(u.entities)?.url)?.urls).map(obj);
  return str(urls[0]?.expanded_url) ?? str(u.url);
}

function expandText(text: string | undefined, urls: unknown[]): string | undefined {
  if (!text) return undefined;
  let out = text;
  for (const e of urls.map(obj)) {
    const short = str(e?.url);
    const expanded = str(e?.expanded_url);
    if (short && expanded) out = out.split(short).join(expanded);
  }
  return out;
}

function crawlerUser(page: ParsedPage): UserDraft | undefined {
  const title = page.meta('og:title', 'twitter:title') ?? page.data.title;
  if (!title) return undefined;
  const m = /^(.*?) \(@([A-Za-z0-9_]{1,15})\) (?:on X|on Twitter|\/ X|\/ Twitter)$/s.exec(title);
  if (!m) return undefined;
  const og = page.meta('og:image', 'twitter:image');
  // Without a profile og:image (rendered HTML carries X's generic one), the avatar is the first
  // large profile image in the markup: the profile header's.
  const image = og && /profile_images/.test(og) ? og : firstTwimg(page.html, /\/profile_images\/[^"'\s)&]*_(?:400x400|200x200)\./);
  const ld = profileSchema(page, m[2]);
  return {
    user: compact({
      id: userId(m[2]),
      username: m[2],
      name: m[1],
      bio: cleanHtmlText(page.meta('og:description', 'description')) ?? ld?.bio,
      location: ld?.location,
      followersCount: ld?.followersCount,
      followingCount: ld?.followingCount,
      postsCount: ld?.postsCount,
      joinedAt: ld?.joinedAt,
    }),
    avatar: image && /profile_images/.test(image) ? biggerAvatar(image) : ld?.avatar ? biggerAvatar(ld.avatar) : undefined,
  };
}

/**
 * The schema.org ProfilePage X renders into a profile (`UserProfileSchema`): the bio, location,
 * join date and the follower/following/post counters, for the account named by the URL only.
 */
function profileSchema(page: ParsedPage, username: string): (Partial<Omit<MicroblogUser, 'avatar'>> & { avatar?: string }) | undefined {
  for (const node of flattenJsonLd(page.data.jsonLd)) {
    if (!ldTypes(node).includes('profilepage')) continue;
    const person = obj(node.mainEntity) ?? obj(node.author);
    if (!person || str(person.additionalName)?.toLowerCase() !== username.toLowerCase()) continue;
    const counter = (kind: RegExp) => {
      for (const c of arr(person.interactionStatistic).map(obj)) {
        if (kind.test(String(c?.interactionType ?? '')) || kind.test(String(c?.name ?? ''))) return parseCount(c?.userInteractionCount as number);
      }
      return undefined;
    };
    const bio = str(person.description)
      ?.replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n');
    const image = obj(person.image);
    return compact({
      bio,
      location: str(obj(person.homeLocation)?.name),
      followersCount: counter(/FollowAction|^Follows$/),
      followingCount: counter(/SubscribeAction|^Friends$/),
      postsCount: counter(/WriteAction|^Tweets$/),
      joinedAt: isoDate(node.dateCreated),
      avatar: str(image?.contentUrl) ?? str(person.image),
    });
  }
  return undefined;
}

async function finishUser(d: UserDraft, ctx: Ctx): Promise<PlatformPreview> {
  const [avatar, cover] = await Promise.all([ctx.hostImage(d.avatar), ctx.hostImage(d.cover)]);
  const user: MicroblogUser = { ...d.user, ...(avatar ? { avatar: toImageSet(avatar) } : {}), ...(cover ? { cover: toImageSet(cover) } : {}) };
  return {
    type: 'MICROBLOG_USER',
    ok: true,
    status: 200,
    title: userTitle(user),
    ...(user.bio ? { description: user.bio } : {}),
    ...(avatar ? { image: toImageSet(avatar) } : {}),
    icons: ICONS,
    fields: { microblogUser: user },
  };
}
