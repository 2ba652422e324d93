/**
 * Reddit the site, as the post, community and user readers share it: which URLs are what (match),
 * the object ids, the `.json` source (with the OAuth token when a client is set) and Reddit's
 * verdicts on it, image URLs, and the ok:false record of what is gone.
 */
import { decodeHTML } from 'entities';
import { header } from '../../fetch/headers.js';
import { hostOf } from '../../host.js';
import { fetchSource, optional, SOURCE_LIMITS } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { obj, parseJson, str } from '../shared/json.js';
import type { PlatformMatch, PlatformPreview } from '../types.js';
import type { Ctx } from './settings.js';

export const CANONICAL = 'https://www.reddit.com';

export function forumObjectId(kind: 'post' | 'community' | 'user', ownId: string): number {
  return platformObjectId('forum', kind, ownId);
}

const NAME = /^[A-Za-z0-9_-]{2,32}$/;

export function matchReddit(url: URL): PlatformMatch | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = hostOf(url);
  const segs = url.pathname.split('/').filter(Boolean);
  if (host === 'redd.it' || host === 'www.redd.it') {
    return segs.length === 1 && /^[a-z0-9]{3,12}$/i.test(segs[0]) ? { kind: 'post', ids: { postId: segs[0].toLowerCase() } } : undefined;
  }
  if (!/^((www|old|new|np|m|i|amp|sh)\.)?reddit\.com$/.test(host)) return undefined;
  const [a, b, c, d] = segs;
  if (a === 'comments' && b && /^[a-z0-9]{3,12}$/i.test(b)) return { kind: 'post', ids: { postId: b.toLowerCase() } };
  if (a === 'r' && b && NAME.test(b)) {
    if (c === 'comments' && d && /^[a-z0-9]{3,12}$/i.test(d)) return { kind: 'post', ids: { postId: d.toLowerCase(), subreddit: b } };
    if (c === 's' && d && /^[A-Za-z0-9]{4,20}$/.test(d)) return { kind: 'share', ids: { subreddit: b, share: d } };
    if (!c || ['hot', 'new', 'top', 'rising', 'controversial', 'wiki', 'about'].includes(c)) return { kind: 'community', ids: { subreddit: b } };
    return undefined;
  }
  if ((a === 'user' || a === 'u') && b && NAME.test(b.replace(/^u_/, ''))) {
    if (c === 'comments' && d && /^[a-z0-9]{3,12}$/i.test(d)) return { kind: 'post', ids: { postId: d.toLowerCase() } };
    if (!c || ['submitted', 'overview', 'comments', 'posts'].includes(c)) return { kind: 'user', ids: { username: b } };
    return undefined;
  }
  return undefined;
}

interface Answer {
  status: number;
  json?: unknown;
  /** Reddit's own JSON error body (`{"reason": "private", "error": 403}`), when it sent one. */
  reason?: string;
  /** The answer was Reddit's JSON (even an error), not an HTML block page or a proxy's 404. */
  isJson: boolean;
}

/** App-only OAuth tokens, per client id, reused until a minute before they expire. */
const tokens = new Map<string, { token: string; expires: number }>();

/**
 * The app-only OAuth token when REDDIT_CLIENT_ID/SECRET are set (client_credentials grant through
 * the guarded fetcher); undefined when not configured or the token call fails (key-less .json then).
 */
async function redditToken(ctx: Ctx): Promise<string | undefined> {
  const { clientId: id, clientSecret: secret, tokenUrl } = ctx.settings;
  if (!id || !secret) return undefined;
  const cached = tokens.get(id);
  if (cached && cached.expires > Date.now()) return cached.token;
  // The token call may fail: the key-less .json is the next source.
  const res = await optional(() =>
    ctx.fetch(tokenUrl, {
      method: 'POST',
      body: 'grant_type=client_credentials',
      maxBytes: 64 * 1024,
      onTooLarge: 'fail',
      timeoutMs: Math.min(SOURCE_LIMITS.timeoutMs, ctx.config.fetchTimeoutMs),
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': ctx.config.userAgent,
      },
    }),
  );
  const body = res?.status === 200 ? obj(parseJson(res.body.toString('utf8'))) : undefined;
  if (!body || typeof body.access_token !== 'string') return undefined;
  const ttl = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  tokens.set(id, { token: body.access_token, expires: Date.now() + Math.max(0, ttl - 60) * 1000 });
  return body.access_token;
}

export async function fetchJson(path: string, ctx: Ctx): Promise<Answer> {
  const token = await redditToken(ctx);
  const { oauthUrl, baseUrl } = ctx.settings;
  const { res } = await fetchSource(`${token ? oauthUrl : baseUrl}${path}`, ctx, {
    accept: 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
  // Reddit's JSON, an error included; an HTML block page or a proxy's answer is none.
  const looksJson = /json/i.test(header(res.headers, 'content-type') ?? '') || /^\s*[[{]/.test(res.body.toString('utf8', 0, 64));
  const json = looksJson ? parseJson(res.body.toString('utf8')) : undefined;
  const reason = str(obj(json)?.reason);
  return { status: res.status, json, reason, isJson: json !== undefined };
}

/** A JSON error that is Reddit's word on the object (not a rate limit or a block). */
export function isVerdict(a: Answer): boolean {
  return a.isJson && (a.status === 404 || a.status === 403 || a.status === 410);
}

/** Reddit's image URLs come HTML-escaped (`&amp;`) unless raw_json=1 was honoured. */
export const imageUrl = (v: unknown) => {
  const s = str(v);
  if (!s || !/^https?:\/\//i.test(s)) return undefined;
  return decodeHTML(s);
};

export function gone(type: PlatformPreview['type'], status: number, description: string, fields: PlatformPreview['fields']): PlatformPreview {
  return { type, ok: false, status, description, fields };
}
