/**
 * The card fields of a platform's record, the same as a page's: `siteName` (the platform's own
 * name), `author` and `publishedAt`. A site sets them on its preview where it knows better; else
 * they come from its object: a post's or a video's `user` is its author (its name, else its
 * handle, with its profile URL), a repository's `owner` too (on the platform's host), and the
 * object's `publishedAt` (else `createdAt`) is the date. A profile (a channel, a user) is its own
 * author and has no date; a community or a product has no author. The objects keep their own fields.
 */
import type { Author } from '../contract/link.js';
import { type FieldRules, withRules } from '../extract/rules.js';
import type { Platform, PlatformPreview } from './types.js';

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** The one platform object of a preview's fields (`videohostVideo`, `codehostRepository`, …), with its key. */
function objectOf(out: PlatformPreview): { key: string; o: Json } | undefined {
  const found = Object.entries(out.fields).find(([, v]) => !!v && typeof v === 'object' && !Array.isArray(v));
  return found && { key: found[0], o: found[1] as Json };
}

/** A profile (`videohostUser`, `microblogUser`, …) is its own author: the channel or person whose page it is. */
function profileAuthor(o: Json): Author | undefined {
  const name = str(o.name) ?? str(o.username);
  const url = str(o.url);
  return name ? { name, ...(url ? { url } : {}) } : undefined;
}

function authorOf(o: Json, home: string | undefined): Author | undefined {
  const user = (o.user ?? undefined) as Json | undefined;
  if (user && typeof user === 'object') {
    const name = str(user.name) ?? str(user.username);
    const url = str(user.url);
    return name ? { name, ...(url ? { url } : {}) } : undefined;
  }
  const owner = (o.owner ?? undefined) as Json | undefined;
  const login = owner && typeof owner === 'object' ? str(owner.username) : undefined;
  return login ? { name: login, ...(home ? { url: new URL(`/${encodeURIComponent(login)}`, home).href } : {}) } : undefined;
}

/** The preview with its card fields filled in from the platform and its object, where the site set none. */
export function withCardFields(platform: Platform, out: PlatformPreview): PlatformPreview {
  const found = objectOf(out);
  const profile = found !== undefined && /User$/.test(found.key);
  const author = out.author ?? (found && (profile ? profileAuthor(found.o) : authorOf(found.o, platform.home)));
  const publishedAt = out.publishedAt ?? (found && !profile ? (str(found.o.publishedAt) ?? str(found.o.createdAt)) : undefined);
  return {
    ...out,
    siteName: out.siteName ?? platform.siteName,
    ...(out.themeColor || platform.themeColor ? { themeColor: out.themeColor ?? platform.themeColor } : {}),
    ...(author ? { author } : {}),
    ...(publishedAt && !Number.isNaN(Date.parse(publishedAt)) ? { publishedAt } : {}),
  };
}

/** The rules a platform's page is read with when its own sources failed: its page rules in front of the defaults, its name as the site name first. */
export function platformPageRules(platform: Platform): FieldRules {
  const rules = platform.pageRules ?? {};
  return withRules({ ...rules, siteName: [{ name: `${platform.name} site name`, get: () => platform.siteName }, ...(rules.siteName ?? [])] });
}
