/**
 * Chromium's command line: the network walls, the switches that keep the browser from asking for
 * anything itself, the renderers' JavaScript heap cap, and one `--disable-features` list.
 *
 * Chromium keeps only the last `--disable-features` (and the last `--enable-features`): a second
 * one replaces the first instead of adding to it. playwright-core puts its own list first (it
 * cannot be read at run time; `PLAYWRIGHT_DISABLED_FEATURES` mirrors it, and the browser-silence
 * test reads the real command line of the launched browser to check that the last list still holds
 * every name of the earlier ones), the AWS layer's @sparticuz/chromium flags come next with lists
 * of their own; `chromiumArgs` drops every list it is given and appends the union of all of them.
 */

/** The network walls: nothing leaves the browser except through the interception. */
export const NETWORK_WALLS = [
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * What the browser would otherwise ask for itself, each switch with what it stops. The DNS probe
 * Chromium starts after a top-level navigation fails with a name error has no switch: the route
 * never fails a request with a name error (lib/browser/route.ts, `AbortCode`).
 */
export const QUIET_SWITCHES = [
  // Extension, safe-browsing list, variations and translate fetches, the upgrade detector, GCM.
  '--disable-background-networking',
  // chrome://components updates (CRLSets, certificate-transparency lists, Widevine, models).
  '--disable-component-update',
  // Domain Reliability reports to Google.
  '--disable-domain-reliability',
  // The client-side phishing model and its lookups.
  '--disable-client-side-phishing-detection',
  // Safe Browsing's list updates (already stopped by background networking; kept for older builds).
  '--safebrowsing-disable-auto-update',
  // UMA: metrics are recorded in memory and never uploaded.
  '--metrics-recording-only',
  // Crash reports (breakpad / crashpad uploads).
  '--disable-breakpad',
  // <a ping> hyperlink auditing.
  '--no-pings',
  // Sign-in and sync.
  '--disable-sync',
  // Default apps and the first-run and default-browser checks.
  '--disable-default-apps',
  '--no-first-run',
  '--no-default-browser-check',
  // Extensions, and the built-in ones with background pages.
  '--disable-extensions',
  '--disable-component-extensions-with-background-pages',
  // QUIC: no UDP to the sites either.
  '--disable-quic',
];

/**
 * playwright-core's own `--disable-features` list (chromiumSwitches.ts in playwright-core 1.63),
 * kept here because the last list on the command line is the only one Chromium reads.
 */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'DialMediaRouteProvider',
  'GlobalMediaControls',
  'HttpsUpgrades',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'BlockOriginHeaderModificationOnRedirect',
  'Translate',
  'AutoDeElevate',
  'OptimizationHints',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/** playwright-core's `--enable-features` (its screenshots take the new surface). */
export const PLAYWRIGHT_ENABLED_FEATURES = ['CDPScreenshotNewSurface'];

/** Features whose work is a request of the browser's own. */
export const QUIET_FEATURES = [
  // Secure DNS: no DNS-over-HTTPS upgrade of the system resolver.
  'DnsOverHttps',
  // The network time queries (clock checks for certificate errors).
  'NetworkTimeServiceQuerying',
  // Optimization Guide hints and model downloads.
  'OptimizationHints',
  'OptimizationHintsFetching',
  'OptimizationGuideModelDownloading',
  // Cast discovery (mDNS, SSDP) and its DIAL provider.
  'MediaRouter',
  'DialMediaRouteProvider',
  // Certificate-transparency list updates, the autofill server, the feed.
  'CertificateTransparencyComponentUpdater',
  'AutofillServerCommunication',
  'InterestFeedContentSuggestions',
  // Translate's language model and server.
  'Translate',
  // WebRTC's mDNS names for host candidates: a page's RTCPeerConnection made the browser join the
  // mDNS multicast group (IGMP reports on the machine's network), though the walls leave WebRTC no
  // host candidate to name.
  'WebRtcHideLocalIpsWithMdns',
];

/** Every value of `--name=` in `args`, split on commas. */
function listed(args: readonly string[], name: string): string[] {
  const prefix = `--${name}=`;
  return args.filter((a) => a.startsWith(prefix)).flatMap((a) => a.slice(prefix.length).split(','));
}

/** The names in `lists`, each once, in their first order, empty ones dropped. */
function union(...lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat().map((s) => s.trim()))].filter(Boolean);
}

/**
 * The static flags: what this machine's headless runs need, the quiet switches and the network
 * walls (a test takes the walls out of this array to see what the other layers stop alone).
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--mute-audio',
  '--hide-scrollbars',
  '--autoplay-policy=user-gesture-required',
  ...QUIET_SWITCHES,
  ...NETWORK_WALLS,
];

/**
 * The browser's flags after playwright-core's defaults: `extra` (the AWS layer's flags), then
 * CHROMIUM_ARGS, the renderers' heap cap, and one `--disable-features` and one `--enable-features`
 * holding every name of every list (playwright-core's, `extra`'s, ours).
 */
export function chromiumArgs(extra: readonly string[], options: { heapMb: number }): string[] {
  const features = (a: string) => a.startsWith('--disable-features=') || a.startsWith('--enable-features=');
  const flags = [
    ...extra.filter((a) => !features(a) && !a.startsWith('--js-flags=')),
    ...CHROMIUM_ARGS,
    // V8 stops a page's heap here: its renderer dies, and the page's `crash` event fails the load.
    `--js-flags=--max-old-space-size=${options.heapMb}`,
  ];
  const disabled = union(PLAYWRIGHT_DISABLED_FEATURES, listed(extra, 'disable-features'), QUIET_FEATURES);
  const enabled = union(PLAYWRIGHT_ENABLED_FEATURES, listed(extra, 'enable-features')).filter((f) => !disabled.includes(f));
  return [...union(flags), `--disable-features=${disabled.join(',')}`, ...(enabled.length ? [`--enable-features=${enabled.join(',')}`] : [])];
}
