/**
 * Per-host request profiles for the main page fetch. Some sites answer a generic client with a
 * consent interstitial, a login wall or a JavaScript shell, but serve complete, crawler-friendly
 * HTML (Open Graph tags) to the link-preview bots they know. For those hosts we present a known
 * preview-bot token *and* keep linklens in the User-Agent, and send the consent cookie where a
 * clean one exists (YouTube's `SOCS`: "reject all" / essential cookies only).
 *
 * Everything else gets the configured User-Agent (LINKPREVIEW_USER_AGENT, default
 * DEFAULT_USER_AGENT in lib/config.ts), which identifies linklens.
 */

export interface HostProfile {
  /** Host suffixes this profile applies to (`youtube.com` matches `www.youtube.com` and `m.youtube.com`). */
  hosts: string[];
  /** A User-Agent to present instead of the configured one. `{ua}` is replaced by the configured one. */
  userAgent?: string;
  /**
   * Cookies sent on the first request, and on later hops to this profile's own hosts (the chain may
   * go through consent hosts); never to another host (lib/preview.ts passes `hosts` as `cookieHosts`).
   */
  cookies?: Record<string, string>;
  headers?: Record<string, string>;
  note: string;
}

/** The preview-bot tokens these sites recognise, followed by linklens's own identification. */
const FACEBOOK_BOT = 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php; compatible; linklens/1.0)';

export const HOST_PROFILES: HostProfile[] = [
  {
    hosts: ['youtube.com', 'youtu.be', 'youtube-nocookie.com'],
    // SOCS=CAI: the "reject all" consent choice; skips the consent.youtube.com redirect in the EU.
    cookies: { SOCS: 'CAI', CONSENT: 'PENDING+987' },
    note: 'EU consent interstitial (consent.youtube.com) avoided with the SOCS consent cookie',
  },
  {
    hosts: ['instagram.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to the Facebook crawler instead of the login redirect',
  },
  {
    hosts: ['facebook.com', 'fb.com', 'fb.watch'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to its own crawler instead of the login wall',
  },
  {
    hosts: ['x.com', 'twitter.com', 't.co'],
    userAgent: 'Twitterbot/1.0 (compatible; linklens/1.0)',
    note: 'serves a small Open Graph page to preview bots instead of the JavaScript app / login flow',
  },
  {
    hosts: ['tiktok.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to preview bots',
  },
  {
    hosts: ['threads.net', 'threads.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to the Facebook crawler',
  },
  {
    hosts: ['reddit.com'],
    userAgent: 'Mozilla/5.0 (compatible; Discordbot/2.0; linklens/1.0)',
    note: 'serves Open Graph HTML to preview bots instead of the "blocked" page for unknown clients',
  },
];

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return '';
  }
}

export function hostProfileFor(url: string, profiles: HostProfile[] = HOST_PROFILES): HostProfile | undefined {
  const host = hostOf(url);
  if (!host) return undefined;
  return profiles.find((p) => p.hosts.some((h) => host === h || host.endsWith(`.${h}`)));
}

/** Headers for the main fetch of `url`: User-Agent and Cookie from its host profile, nothing otherwise. */
export function hostProfileHeaders(url: string, configuredUserAgent: string, profiles: HostProfile[] = HOST_PROFILES): Record<string, string> {
  const p = hostProfileFor(url, profiles);
  if (!p) return {};
  const headers: Record<string, string> = { ...p.headers };
  if (p.userAgent) headers['user-agent'] = p.userAgent.replace('{ua}', configuredUserAgent);
  if (p.cookies) headers.cookie = Object.entries(p.cookies).map(([k, v]) => `${k}=${v}`).join('; ');
  return headers;
}
