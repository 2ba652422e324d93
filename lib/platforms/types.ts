/**
 * A platform is one site (YouTube, GitHub, Reddit, ...): a folder under lib/platforms/ named after
 * it, whose index.ts exports a Platform, listed once in lib/platforms/index.ts. Its `name` is the
 * contract's neutral word (videohost, codehost, forum, ...). The folder declares everything about the
 * platform: its URL patterns (`match`), the request profile of its hosts (`hostProfile`), its
 * settings (`settings`: upstream base URLs, keys) and the record objects it builds (their types
 * come from ../contract/link.js, generated from openapi.yaml). The registry, the configuration
 * and the host profiles are assembled from the list (lib/platforms/registry.ts).
 *
 * The failure convention, the same in every platform:
 *  - `extract` returns the platform's preview; an ok:false preview when the platform itself says
 *    the object is gone (deleted, private, a robot check);
 *  - it returns `undefined` when the answer is not something it can read (not a product page, no
 *    player data): the generic PAGE preview of the same URL is used instead;
 *  - an upstream failure (the FetchFailure of a source: unreachable, timed out, too large) is
 *    thrown, not caught: the runner (`extractPlatform` in ./run.ts) turns it into the same generic
 *    preview. A platform catches one only where it has another source to try next, with
 *    `optional()` from ./shared/fetch.ts.
 */
import type { Author, Embed, ImageSet, LinkRecord, LinkType, MediaImage } from '../contract/link.js';
import type { CoreConfig } from '../core-settings.js';
import type { Player } from '../embed/types.js';
import type { IconCandidate } from '../extract/icons.js';
import type { FieldRules } from '../extract/rules.js';
import type { HostProfile } from '../fetch/host-profiles.js';
import type { Fetcher, FetchResult } from '../fetch/types.js';
import type { JobRunner } from '../ports.js';
import type { GroupValues, SettingsGroup } from '../settings.js';

export interface PlatformMatch {
  /** What the URL names, e.g. 'video', 'channel', 'repository', 'post', 'user', 'community'. */
  kind: string;
  /** The ids parsed from the URL (videoId, owner, repo, subreddit, ...). */
  ids: Record<string, string>;
}

/** Every platform's settings values, by platform name (lib/config.ts reads them into `config.platforms`). */
export type PlatformSettingsValues = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** What a platform is given: `S` is the values of its own settings. */
export interface PlatformContext<S = Readonly<Record<string, unknown>>> {
  fetch: Fetcher;
  /** The core settings (page and time limits, the User-Agent); the platform's own are `settings`. */
  config: CoreConfig;
  /** The platform's own settings (its `settings` group, read from the environment). */
  settings: S;
  /** The platform's own host profile (its `hostProfile`), which fetchPlatformPage presents. */
  hostProfile?: HostProfile;
  jobs: JobRunner;
  requestId: string;
  /** Epoch ms: the record's deadline, for image jobs. */
  deadline: number;
  /** The caller's language list, already clean (lib/contract/accept-language.ts). */
  acceptLanguage?: string;
  /** The generic fetch of the link when it already happened (a short link resolved by redirects). */
  page?: FetchResult;
  /** Records the language a fetched platform page declares (`<html lang>`), used when the platform gives none. */
  noteLanguage?(tag: string | undefined): void;
  /** Records the theme colour a fetched platform page declares (`<meta name="theme-color">`), the record's `themeColor`. */
  noteThemeColor?(hex: string | undefined): void;
  /** Hosts one image (avatar, thumbnail, banner) through the image job; undefined when it fails. */
  hostImage(url: string | undefined): Promise<MediaImage | undefined>;
}

/** The context of a platform whose settings are the group `G` (`PlatformContextOf<typeof settings>`). */
export type PlatformContextOf<G extends SettingsGroup> = PlatformContext<GroupValues<G>>;

export interface PlatformPreview {
  type: LinkType;
  ok: boolean;
  /** The HTTP status seen on the platform source (the page or the API). */
  status: number;
  /** The redirect trail of the link itself, when the platform followed it (share links). */
  trail?: string[];
  title?: string;
  description?: string;
  language?: string;
  /** The top-level image: a source to host, or an ImageSet already hosted. */
  imageSource?: string;
  image?: ImageSet;
  icons?: IconCandidate[];
  /** The type's object, e.g. `{ videohostVideo: {...} }`. */
  fields: Partial<LinkRecord>;
  /** The card's fields, where the site knows them better than its object tells (lib/platforms/card.ts fills the rest). */
  siteName?: string;
  author?: Author;
  publishedAt?: string;
  /** `#rrggbb`: the page's own theme colour when the platform read its page, else the platform's (`Platform.themeColor`). */
  themeColor?: string;
  /** The record's player, from the platform's `player` (set by the runner, ./run.ts, when embeds are on for the link). */
  embed?: Embed;
}

export interface Platform<G extends SettingsGroup = SettingsGroup> {
  name: string;
  /** The site's own name, the records' `siteName` (its generic previews' too). */
  siteName: string;
  /**
   * The theme colour its pages declare (`#rrggbb`), the record's `themeColor` when the platform's
   * sources are an API and its page is not read (a page it reads gives its own).
   */
  themeColor?: string;
  /** The site's home, where its users' and owners' pages are (`https://github.com`), when they are on it. */
  home?: string;
  /**
   * The platform's own settings (upstream base URLs, keys), declared with `defineSettings(name, ...)`
   * from lib/settings.ts under the platform's name; given to `extract` as `ctx.settings`.
   */
  settings?: G;
  /** The request profile of the platform's hosts (User-Agent, cookies): lib/fetch/host-profiles.ts. */
  hostProfile?: HostProfile;
  match(url: URL): PlatformMatch | undefined;
  extract(url: URL, match: PlatformMatch, ctx: PlatformContextOf<G>): Promise<PlatformPreview | undefined>;
  /**
   * The player of one of its links, on the platform's own player host (YouTube's no-cookie embed,
   * an X post's Tweet.html, ...), from the link's ids and, once the platform read it, its preview
   * (a Reddit post's subreddit). No fetch. None for a site without players (GitHub, Amazon, Etsy).
   * lib/embed turns it into the record's `embed` (docs/embeds.md).
   */
  player?(url: URL, match: PlatformMatch, preview?: PlatformPreview): Player | undefined;
  /**
   * Field rules put in front of the defaults when the platform falls back to the generic preview
   * of its own page (its source blocked or rate-limited), e.g. the page's `<title>` over a
   * templated og:title.
   */
  pageRules?: Partial<FieldRules>;
}
