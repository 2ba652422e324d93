/**
 * GitHub's settings (the `codehost` group: the API and web base URLs, the token), given to its
 * reader as `ctx.settings`, and the context type it takes.
 */
import { defineSettings, httpUrl, text } from '../../settings.js';
import type { PlatformContextOf } from '../types.js';

export const settings = defineSettings('codehost', 'codehost (GitHub)', {
  apiUrl: {
    env: 'LINKPREVIEW_GITHUB_API_URL',
    type: httpUrl(),
    default: 'https://api.github.com',
    doc: 'The GitHub REST API (GitHub Enterprise: `https://HOST/api/v3`).',
  },
  baseUrl: {
    env: 'LINKPREVIEW_GITHUB_BASE_URL',
    type: httpUrl(),
    default: 'https://github.com',
    doc: "GitHub's web origin: the repository page read when the API is rate-limited or unreachable.",
  },
  token: {
    env: 'GITHUB_TOKEN',
    type: text(),
    default: '',
    doc: 'Raises the REST API rate limit from 60 to 5,000 requests an hour.',
  },
});

export type Ctx = PlatformContextOf<typeof settings>;
