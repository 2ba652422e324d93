/**
 * A platform (videohost, codehost, forum, ...) is one file under lib/platforms/ exporting a
 * Platform, plus one line in lib/platforms/index.ts. It matches the platform's real URL forms
 * and returns the platform's own data; when it cannot (blocked, rate-limited, unknown form) it
 * returns undefined and the generic PAGE preview of the same URL is used instead.
 */
import type { Config } from '../config.js';
import type { ImageSet, LinkRecord, LinkType, MediaImage } from '../contract/link.js';
import type { IconCandidate } from '../extract/icons.js';
import type { FieldRules } from '../extract/rules.js';
import type { Fetcher, FetchResult } from '../fetch/safe-fetch.js';
import type { JobRunner } from '../ports.js';
import type { SettingsGroup } from '../settings.js';

export interface PlatformMatch {
  /** What the URL names, e.g. 'video', 'channel', 'repository', 'post', 'user', 'community'. */
  kind: string;
  /** The ids parsed from the URL (videoId, owner, repo, subreddit, ...). */
  ids: Record<string, string>;
}

export interface PlatformContext {
  fetch: Fetcher;
  config: Config;
  jobs: JobRunner;
  requestId: string;
  /** Epoch ms: the record's deadline, for image jobs. */
  deadline: number;
  acceptLanguage?: string;
  /** The generic fetch of the link when it already happened (a short link resolved by redirects). */
  page?: FetchResult;
  /** Records the language a fetched platform page declares (`<html lang>`), used when the platform gives none. */
  noteLanguage?(tag: string | undefined): void;
  /** Hosts one image (avatar, thumbnail, banner) through the image job; undefined when it fails. */
  hostImage(url: string | undefined): Promise<MediaImage | undefined>;
}

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
}

export interface Platform<G extends SettingsGroup = SettingsGroup> {
  name: string;
  /**
   * The platform's own settings (upstream base URLs, keys), declared with `defineSettings(name, ...)`
   * from lib/settings.ts under the platform's name; read as `ctx.config.platforms.<name>`.
   */
  settings?: G;
  match(url: URL): PlatformMatch | undefined;
  extract(url: URL, match: PlatformMatch, ctx: PlatformContext): Promise<PlatformPreview | undefined>;
  /**
   * Field rules put in front of the defaults when the platform falls back to the generic preview
   * of its own page (its source blocked or rate-limited), e.g. the page's `<title>` over a
   * templated og:title.
   */
  pageRules?: Partial<FieldRules>;
}
