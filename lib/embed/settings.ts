/**
 * The embedded players' settings (docs/embeds.md): whether records carry a player at all, the
 * player origins the operator adds to the built-in list, the domains of the pages that show the
 * players (Twitch's `parent`) and a Dailymotion player id. One of the core sections
 * (lib/core-settings.ts lists it); like that module, this one imports only the settings toolkit, so
 * the CDK app can read the names and defaults without the service's code.
 */
import * as v from 'valibot';
import { defineSettings, oneOf, type SettingType, splitList } from '../settings.js';

/** An https origin as written in LINKPREVIEW_EMBED_ORIGINS: `https://host[:port]`, nothing after it. */
const ORIGIN = /^https:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?\/?$/i;

/** A DNS name, as Twitch's `parent` takes it: no scheme, no port, no path. */
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

/** Comma-separated https origins, each normalized to `https://host[:port]` (lower case, no trailing slash). */
const origins: SettingType<string[]> = {
  allowed: 'comma-separated https origins (`https://host[:port]`)',
  schema: (env) =>
    v.pipe(
      v.string(),
      v.transform(splitList),
      v.check((a) => a.every((o) => ORIGIN.test(o)), `${env} must be comma-separated https origins (https://host[:port], no path)`),
      v.transform((a) => a.map((o) => new URL(o).origin)),
    ),
};

/** Comma-separated domain names. */
const domains: SettingType<string[]> = {
  allowed: 'comma-separated domain names',
  schema: (env) =>
    v.pipe(
      v.string(),
      v.transform(splitList),
      v.check((a) => a.every((d) => DOMAIN.test(d)), `${env} must be comma-separated domain names (no scheme, port or path)`),
      v.transform((a) => a.map((d) => d.toLowerCase())),
    ),
};

/** A Dailymotion player id (`x` and letters or digits), or empty. */
const dailymotionPlayer: SettingType<string> = {
  allowed: 'a Dailymotion player id (`x` then letters and digits)',
  schema: (env) => v.pipe(v.string(), v.trim(), v.regex(/^(x[a-z0-9]{2,15})?$/i, `${env} must be a Dailymotion player id such as x1a2b`)),
};

export const EMBEDS = defineSettings(
  'embeds',
  'Embedded players',
  {
    embeds: {
      env: 'LINKPREVIEW_EMBEDS',
      type: oneOf(['on', 'off']),
      default: 'on',
      doc: "`on`: a record gets `embed`, a safe player, when its link has one (docs/embeds.md). `off`: no record has one, and no oEmbed is fetched for one. The host rule `no-embed` turns them off for some hosts' links.",
    },
    embedOrigins: {
      env: 'LINKPREVIEW_EMBED_ORIGINS',
      type: origins,
      default: [],
      doc: "Player origins added to the built-in list (YouTube, Vimeo, Spotify, ...: docs/embeds.md): an oEmbed iframe, a `twitter:player` or an `og:video` page on one of them becomes the record's player. https only.",
    },
    embedParents: {
      env: 'LINKPREVIEW_EMBED_PARENTS',
      type: domains,
      default: [],
      doc: 'The domains of the pages that show the players (`app.example.com`): Twitch plays only inside the pages its `parent` parameters name. Unset: no Twitch player (linklens cannot know where its records are shown).',
    },
    dailymotionPlayer: {
      env: 'LINKPREVIEW_EMBED_DAILYMOTION_PLAYER',
      type: dailymotionPlayer,
      default: '',
      doc: "A Dailymotion player id (made in Dailymotion's Studio): a Dailymotion link's player is made with it. Unset: only the player a Dailymotion page names itself.",
    },
  },
  [
    'A player is never copied from a provider: linklens builds one `<iframe>` with fixed attributes (or a native `<video>`/`<audio>` for a media file link) around a player address on an allowed origin. Which providers and addresses, the attributes and how to show `html` safely: [embeds.md](embeds.md).',
  ].join('\n'),
);
