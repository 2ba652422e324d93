/**
 * GitHub (platform `codehost`): repositories (CODEHOST_REPOSITORY, `codehostRepository`:
 * ./repository.ts) `github.com/{owner}/{repo}`. Base URLs and the token are its settings
 * (./settings.ts), given to it as `ctx.settings`.
 */

import { hostOf } from '../../host.js';
import type { Platform, PlatformMatch } from '../types.js';
import { extractRepository } from './repository.js';
import { settings } from './settings.js';

/** First path segments of github.com that are not users or organisations. */
const RESERVED = new Set([
  'about',
  'account',
  'apps',
  'blog',
  'codespaces',
  'collections',
  'contact',
  'customer-stories',
  'dashboard',
  'enterprise',
  'events',
  'explore',
  'features',
  'github-copilot',
  'issues',
  'join',
  'login',
  'logout',
  'marketplace',
  'new',
  'notifications',
  'orgs',
  'organizations',
  'pricing',
  'pulls',
  'readme',
  'search',
  'security',
  'sessions',
  'settings',
  'signup',
  'site',
  'sponsors',
  'team',
  'topics',
  'trending',
  'users',
  'resources',
  'solutions',
  'premium-support',
  'stars',
  'watching',
  'copilot',
]);

export function matchGithub(url: URL): PlatformMatch | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (!/^(www\.)?github\.com$/.test(hostOf(url))) return undefined;
  const [owner, rawRepo] = url.pathname.split('/').filter(Boolean);
  if (!owner || !rawRepo || RESERVED.has(owner.toLowerCase())) return undefined;
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(owner)) return undefined;
  const repo = rawRepo.replace(/\.git$/i, '');
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(repo) || repo === '.' || repo === '..') return undefined;
  return { kind: 'repository', ids: { owner, repo } };
}

export const github: Platform<typeof settings> = {
  name: 'codehost',
  siteName: 'GitHub',
  themeColor: '#1e2327',
  home: 'https://github.com',
  settings,
  match: matchGithub,
  extract: (_url, match, ctx) => extractRepository(match.ids.owner, match.ids.repo, ctx),
};
