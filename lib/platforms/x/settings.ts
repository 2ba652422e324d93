/**
 * X's settings (the `microblog` group: the syndication, oEmbed and profile timeline origins), given
 * to its readers as `ctx.settings`, and the context type they take.
 */
import { defineSettings, httpUrl } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('microblog', 'microblog (X / Twitter)', {
  syndicationUrl: {
    env: 'LINKPREVIEW_X_SYNDICATION_URL',
    type: httpUrl(),
    default: 'https://cdn.syndication.twimg.com',
    doc: "The embed widget's syndication origin: a post (`/tweet-result`), the first source.",
  },
  oembedUrl: {
    env: 'LINKPREVIEW_X_OEMBED_URL',
    type: httpUrl(),
    default: 'https://publish.twitter.com',
    doc: "X's oEmbed origin (`/oembed`): a post's text, day and author when syndication has none.",
  },
  timelineUrl: {
    env: 'LINKPREVIEW_X_TIMELINE_URL',
    type: httpUrl(),
    default: 'https://syndication.twitter.com',
    doc: "The profile timeline's origin (`/srv/timeline-profile/screen-name/{user}`): a user's full profile.",
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
