/**
 * YouTube (platform `videohost`): videos (VIDEOHOST_VIDEO, `videohostVideo`: ./video.ts) and
 * channels (VIDEOHOST_USER, `videohostUser`: ./channel.ts).
 *
 * Sources, key-less first:
 *  - the watch page's embedded `ytInitialPlayerResponse` (videoDetails, microformat) and
 *    `ytInitialData` (likes, comments, the channel's avatar/subscribers/badge), fetched with the
 *    SOCS consent cookie so the EU interstitial never stands in for the video;
 *  - the channel page's `ytInitialData` (channelMetadataRenderer and the header);
 *  - oEmbed when the page gives no player data (consent wall, bot check);
 *  - the Data API v3 when YOUTUBE_API_KEY is set: exact counts, channel joinedAt and viewsCount.
 * Upstream base URLs and the key are its settings (./settings.ts), given to it as `ctx.settings`.
 */
import type { Platform } from '../types.js';
import { player } from './player.js';
import { settings } from './settings.js';
import { matchYoutube } from './site.js';

export { matchYoutube };

import { extractChannel } from './channel.js';
import { extractVideo } from './video.js';

export const youtube: Platform<typeof settings> = {
  name: 'videohost',
  siteName: 'YouTube',
  settings,
  hostProfile: {
    hosts: ['youtube.com', 'youtu.be', 'youtube-nocookie.com'],
    // SOCS=CAI: the "reject all" consent choice; skips the consent.youtube.com redirect in the EU.
    // Sent on the watch and channel pages whatever host the base URL names.
    cookies: { SOCS: 'CAI', CONSENT: 'PENDING+987' },
    note: 'EU consent interstitial (consent.youtube.com) avoided with the SOCS consent cookie',
  },
  match: matchYoutube,
  player,
  async extract(_url, match, ctx) {
    return match.kind === 'video' ? extractVideo(match.ids.videoId, ctx) : extractChannel(match.ids, ctx);
  },
};
