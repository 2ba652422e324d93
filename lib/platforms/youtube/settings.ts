/**
 * YouTube's settings (the `videohost` group: upstream base URLs and the Data API key), given to its
 * readers as `ctx.settings`, and the context type they take.
 */
import { defineSettings, httpUrl, text } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('videohost', 'videohost (YouTube)', {
  baseUrl: {
    env: 'LINKPREVIEW_YOUTUBE_BASE_URL',
    type: httpUrl(),
    default: 'https://www.youtube.com',
    doc: "YouTube's web origin: watch and channel pages, oEmbed.",
  },
  apiUrl: {
    env: 'LINKPREVIEW_YOUTUBE_API_URL',
    type: httpUrl(),
    default: 'https://www.googleapis.com/youtube/v3',
    doc: 'The YouTube Data API v3.',
  },
  apiKey: {
    env: 'YOUTUBE_API_KEY',
    type: text(),
    default: '',
    doc: 'Enables the Data API v3: exact counts, channel joinedAt and viewsCount. Unset: key-less sources only.',
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
