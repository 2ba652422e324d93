/**
 * TikTok's setting (the `clips` group: oEmbed's origin), given to its readers as `ctx.settings`,
 * and the context type they take.
 */
import { defineSettings, httpUrl } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('clips', 'clips (TikTok)', {
  baseUrl: {
    env: 'LINKPREVIEW_TIKTOK_BASE_URL',
    type: httpUrl(),
    default: 'https://www.tiktok.com',
    doc: "TikTok's web origin: oEmbed (`/oembed`), read when the video's page gives no data.",
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
