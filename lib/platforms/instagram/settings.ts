/**
 * Instagram's setting (the `photoshare` group: the embed page's origin), given to its readers as
 * `ctx.settings`, and the context type they take.
 */
import { defineSettings, httpUrl } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('photoshare', 'photoshare (Instagram)', {
  baseUrl: {
    env: 'LINKPREVIEW_INSTAGRAM_BASE_URL',
    type: httpUrl(),
    default: 'https://www.instagram.com',
    doc: "Instagram's web origin: a post's embed page (`/p/{code}/embed/captioned/`: exact time, owner, media).",
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
