/**
 * Per-host request profiles. Some sites answer a generic client with a consent interstitial, a
 * login wall or a JavaScript shell, but serve complete, crawler-friendly HTML (Open Graph tags) to
 * the link-preview bots they know. For those hosts we present a known preview-bot token *and* keep
 * linklens in the User-Agent, and send the consent cookie where a clean one exists (YouTube's
 * `SOCS`: "reject all" / essential cookies only).
 *
 * A platform declares the profile of its own hosts in its site's folder (a Platform's `hostProfile`); the
 * registry (lib/platforms/registry.ts) assembles them with OTHER_HOST_PROFILES below, the hosts
 * that have no platform. Everything else gets the configured User-Agent
 * (LINKPREVIEW_USER_AGENT, default DEFAULT_USER_AGENT in lib/core-settings.ts), which identifies
 * linklens.
 */
import { hostOf, onAnyHost } from '../host.js';

export interface HostProfile {
  /** Host suffixes this profile applies to (`youtube.com` matches `www.youtube.com` and `m.youtube.com`). */
  hosts: string[];
  /** A User-Agent to present instead of the configured one. `{ua}` is replaced by the configured one. */
  userAgent?: string;
  /**
   * Cookies sent on the first request, and on later hops to this profile's own hosts (the chain may
   * go through consent hosts); never to another host (lib/preview/preview-link.ts passes `hosts` as `cookieHosts`).
   */
  cookies?: Record<string, string>;
  headers?: Record<string, string>;
  note: string;
}

/** The preview-bot token of Facebook's crawler, which several sites recognise, followed by linklens's own identification. */
export const FACEBOOK_BOT = 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php; compatible; linklens/1.0)';

/** The profiles of hosts previewed generically (no platform module reads them). */
export const OTHER_HOST_PROFILES: readonly HostProfile[] = [
  {
    hosts: ['facebook.com', 'fb.com', 'fb.watch'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to its own crawler instead of the login wall',
  },
  {
    hosts: ['threads.net', 'threads.com'],
    userAgent: FACEBOOK_BOT,
    note: 'serves Open Graph HTML to the Facebook crawler',
  },
];

export function hostProfileFor(url: string, profiles: readonly HostProfile[]): HostProfile | undefined {
  const host = hostOf(url);
  if (!host) return undefined;
  return profiles.find((p) => onAnyHost(host, p.hosts));
}

/** The headers a profile adds: its User-Agent (`{ua}` the configured one), its cookies and other headers. */
export function profileHeaders(profile: HostProfile | undefined, configuredUserAgent: string): Record<string, string> {
  if (!profile) return {};
  const headers: Record<string, string> = { ...profile.headers };
  if (profile.userAgent) headers['user-agent'] = profile.userAgent.replace('{ua}', configuredUserAgent);
  if (profile.cookies)
    headers.cookie = Object.entries(profile.cookies)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  return headers;
}

/** Headers for the main fetch of `url`: User-Agent and Cookie from its host's profile, nothing otherwise. */
export function hostProfileHeaders(url: string, configuredUserAgent: string, profiles: readonly HostProfile[]): Record<string, string> {
  return profileHeaders(hostProfileFor(url, profiles), configuredUserAgent);
}
