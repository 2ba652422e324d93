/**
 * Reddit's settings (the `forum` group: base URLs and the OAuth client), given to its readers as
 * `ctx.settings`, and the context type they take.
 */
import { defineSettings, httpUrl, optionalText } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('forum', 'forum (Reddit)', {
  baseUrl: {
    env: 'LINKPREVIEW_REDDIT_BASE_URL',
    type: httpUrl(),
    default: 'https://www.reddit.com',
    doc: "Reddit's web origin: the key-less `.json` endpoints and share links.",
  },
  oauthUrl: {
    env: 'LINKPREVIEW_REDDIT_OAUTH_URL',
    type: httpUrl(),
    default: 'https://oauth.reddit.com',
    doc: 'Where the API answers with an app-only OAuth token.',
  },
  tokenUrl: {
    env: 'LINKPREVIEW_REDDIT_TOKEN_URL',
    type: httpUrl(),
    default: 'https://www.reddit.com/api/v1/access_token',
    doc: 'Where the app-only OAuth token comes from.',
  },
  clientId: {
    env: 'REDDIT_CLIENT_ID',
    type: optionalText(),
    default: undefined,
    doc: 'With `REDDIT_CLIENT_SECRET`: app-only OAuth (higher rate limits). Unset: the key-less `.json` endpoints.',
  },
  clientSecret: {
    env: 'REDDIT_CLIENT_SECRET',
    type: optionalText(),
    default: undefined,
    doc: "The OAuth app's secret (with `REDDIT_CLIENT_ID`).",
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
