/**
 * An Instagram profile (PHOTOSHARE_USER, `photoshareUser`): og:description (the counts), og:title,
 * og:image (avatar), `is_verified` / `is_private` in the page.
 */
import type { PhotoshareUser } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { fetchPlatformPage, isOk } from '../shared/fetch.js';
import { compact, parseJson, str } from '../shared/json.js';
import { parsePlatformPage } from '../shared/page.js';
import type { PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';
import { ICONS, isLoginTitle, isLoginUrl, userId } from './site.js';

/**
 * A profile's description, in either form Instagram serves:
 *   og:description    "1,234 Followers, 56 Following, 789 Posts - See Instagram photos and videos from Name (@user)"
 *   meta description  "1,234 Followers, 56 Following, 789 Posts - Name (@user) on Instagram: "bio""
 * The bio is only in the second (and only when the profile has one).
 */
export function parseProfileDescription(d: string): {
  followersCount?: number;
  followingCount?: number;
  postsCount?: number;
  name?: string;
  username?: string;
  bio?: string;
} {
  const out: ReturnType<typeof parseProfileDescription> = {};
  const m = /^([\d.,\s]+[KkMm]?) Followers?, ([\d.,\s]+[KkMm]?) Following, ([\d.,\s]+[KkMm]?) Posts?(?: - ([\s\S]*)|: ([\s\S]*))?$/i.exec(d.trim());
  if (!m) return out;
  out.followersCount = parseCount(m[1]);
  out.followingCount = parseCount(m[2]);
  out.postsCount = parseCount(m[3]);
  if (m[5]?.trim()) out.bio = m[5].trim().replace(/^["“]([\s\S]*)["”]$/, '$1');
  const rest = m[4]?.trim() ?? '';
  const see = /^See Instagram photos and videos from (.+?)(?: \(@([A-Za-z0-9._]{1,30})\))?(?:: ([\s\S]*))?$/i.exec(rest);
  const on = see ? null : /^(?:(.+?) \(@([A-Za-z0-9._]{1,30})\)|@([A-Za-z0-9._]{1,30})) on Instagram(?:: ([\s\S]*))?$/i.exec(rest);
  const name = see?.[1] ?? on?.[1];
  const username = see?.[2] ?? on?.[2] ?? on?.[3];
  const bio = (see?.[3] ?? on?.[4])
    ?.trim()
    .replace(/^["“]([\s\S]*)["”]$/, '$1')
    .trim();
  if (name) out.name = name.replace(/^@/, '');
  if (username) out.username = username;
  if (bio) out.bio = bio;
  return compact(out);
}

export async function extractUser(url: URL, username: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const res = await fetchPlatformPage(url.href, ctx);
  const page = parsePlatformPage(res, ctx);
  if (page.wall === 'login-redirect' || isLoginUrl(res.finalUrl) || isLoginTitle(page))
    return { type: 'PHOTOSHARE_USER', ok: false, status: res.status, fields: {} };
  if (res.status === 404) return { type: 'PHOTOSHARE_USER', ok: false, status: 404, fields: {} };
  if (!isOk(res.status) || page.wall) return undefined;

  const desc = page.meta('og:description', 'description');
  // og:description has the counts and name; the bio is only in <meta name="description"> ("… on Instagram: "bio"").
  const metaDesc = page.data.metas.find((m) => m.name === 'description' && m.content.trim())?.content;
  const parsed = { ...(metaDesc ? parseProfileDescription(metaDesc) : {}), ...(desc ? parseProfileDescription(desc) : {}) };
  const ogTitle = page.meta('og:title') ?? page.data.title;
  const t = ogTitle ? /^(.*?) \(@([A-Za-z0-9._]{1,30})\)/.exec(ogTitle) : null;
  if (!t && parsed.followersCount === undefined) return undefined; // not a profile page
  const name = parsed.name ?? t?.[1];
  const handle = t?.[2] ?? parsed.username ?? username;
  const html = page.html;
  const near = (key: string) => new RegExp(`"${key}"\\s*:\\s*(true|false)`).exec(html)?.[1];
  const verified = near('is_verified') === 'true';
  const privateFlag = near('is_private');
  const isPrivate = privateFlag === 'true' || /This (?:A|a)ccount is (?:P|p)rivate/.test(html);
  const bioJson = /"biography"\s*:\s*("(?:\\.|[^"\\])*")/.exec(html)?.[1];
  const bio = parsed.bio ?? (bioJson ? str(parseJson(bioJson)) : undefined);
  const extUrl = /"external_url"\s*:\s*("(?:\\.|[^"\\])*")/.exec(html)?.[1];
  const avatar = await ctx.hostImage(page.meta('og:image', 'twitter:image'));
  const user: PhotoshareUser = compact({
    id: userId(handle),
    username: handle,
    verified,
    name: name && name !== handle ? name : undefined,
    bio,
    url: extUrl ? str(parseJson(extUrl)) : undefined,
    ...(avatar ? { avatar: toImageSet(avatar) } : {}),
    followersCount: parsed.followersCount,
    followingCount: parsed.followingCount,
    postsCount: parsed.postsCount,
    visibility: isPrivate ? 'PRIVATE' : 'PUBLIC',
  });
  return {
    type: 'PHOTOSHARE_USER',
    ok: true,
    status: res.status,
    title: `${name ?? handle} (@${handle}) • Instagram photos and videos`,
    description: desc ?? bio ?? '',
    ...(avatar ? { image: toImageSet(avatar) } : {}),
    icons: ICONS,
    fields: { photoshareUser: user },
  };
}
