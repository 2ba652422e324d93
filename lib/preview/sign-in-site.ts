/**
 * The site of a link that ended on another site's sign-in page (an identity provider's:
 * `PageRead.signIn` is `elsewhere`), so that its record, `ok: false` with LOGIN_REQUIRED, still
 * names the site and shows its icon: a client can show "sign-in required" on a small card.
 *
 * The site is the one of the page the link led to before the sign-in (`signInFrom`: a short
 * link's target, not the short link; SharePoint's page, not its own sign-in hops). Its name is the
 * platform's own for a platform's page, else the name its home page gives (when the home page
 * answers as a page of the same site, not a wall: it is often public when the document is not),
 * else its host without `www.` (`contoso.sharepoint.com`): a name made up from a host's labels
 * is often wrong ("Live" for onedrive.live.com), the host never is. Its icons are the home page's
 * (ending with `/favicon.ico` of the host it answered from), else the site's `/favicon.ico`; the
 * icon job hosts the first that decodes. The home page is one guarded fetch of the preview's
 * budget (at most OWN_SITE_LIMITS), and neither it nor an icon is asked on a host a `deny` rule
 * refuses; a `metadata-only` host's icon is not stored (Run.hostImages).
 */
import { type PageRead, pageFields, pageIcons, readPage } from '../extract/extract-page.js';
import type { IconCandidate } from '../extract/icons.js';
import { signInFrom } from '../extract/walls.js';
import { header } from '../fetch/headers.js';
import { hostProfileHeaders } from '../fetch/host-profiles.js';
import { hostRulesOf } from '../fetch/host-rules.js';
import type { FetchResult } from '../fetch/types.js';
import { onHost, withoutWww } from '../host.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { Platform } from '../platforms/types.js';
import { sameSite } from '../site.js';
import type { Run } from './run.js';

/** The home page's fetch: at most this many bytes (its head is what is read), within this time. */
export const OWN_SITE_LIMITS = { homeBytes: 256 * 1024, timeoutMs: 2500 };

export interface OwnSite {
  /** The site's name for the record's `siteName`. */
  name: string;
  /** Its icon sources, best first, for the icon job. */
  icons: IconCandidate[];
  backgroundColor?: string;
}

/** The name and icon sources of the site the link led to before another site's sign-in page. */
export async function ownSite(run: Run, res: FetchResult): Promise<OwnSite> {
  const page = new URL(signInFrom(res.trail.length ? res.trail : [res.url, res.finalUrl]));
  const rules = hostRulesOf(run.config);
  const home = new URL('/', page);
  const read = rules.denies(home) ? undefined : await homePage(run, home);
  const name = platformOf(run.platforms, page)?.siteName ?? (read && pageFields(read).siteName) ?? page.hostname.replace(/^www\./i, '');
  const { icons, backgroundColor } = read ? pageIcons(read) : { icons: [{ url: new URL('/favicon.ico', page).href, rel: 'favicon.ico' }] };
  return { name, icons: icons.filter((i) => !rules.denies(i.url)), ...(backgroundColor ? { backgroundColor } : {}) };
}

/** The platform the page is on: one whose URLs it matches, or whose home or hosts are its host. */
function platformOf(platforms: PlatformRegistry, page: URL): Platform | undefined {
  const host = withoutWww(page.hostname);
  const on = (h: string) => onHost(host, h);
  return (
    platforms.match(page)?.platform ?? platforms.platforms.find((p) => (p.home && on(withoutWww(new URL(p.home).hostname))) || p.hostProfile?.hosts.some(on))
  );
}

/** The site's home page read, when it answers 2xx with HTML on the same site and is no wall; else undefined. */
async function homePage(run: Run, home: URL): Promise<PageRead | undefined> {
  const { config, platforms } = run;
  try {
    const res = await run.fetch(home.href, {
      maxBytes: OWN_SITE_LIMITS.homeBytes,
      onTooLarge: 'truncate',
      timeoutMs: Math.min(config.fetchTimeoutMs, OWN_SITE_LIMITS.timeoutMs),
      headers: { ...hostProfileHeaders(home.href, config.userAgent, platforms.hostProfiles), accept: 'text/html,application/xhtml+xml' },
      maxRedirects: 5,
    });
    const type = header(res.headers, 'content-type');
    if (res.status < 200 || res.status >= 300 || !/html/i.test(type ?? '') || !sameSite(res.finalUrl, home.href)) return undefined;
    const read = readPage(res, type);
    return read.wall ? undefined : read;
  } catch {
    return undefined; // refused, unreachable, out of time: the host's name and /favicon.ico
  }
}
