/**
 * The service's own settings, one entry each: the variable, the Config key, the type (its
 * validation), the default and one line of docs, in the sections docs/configuration.md shows.
 * Platforms declare theirs in their own modules; lib/config.ts reads both.
 *
 * This module imports only the toolkit (and the proxy URL's and the host rules' parsers, which import nothing, and the
 * embedded players' section, lib/embed/settings.ts, which imports only the toolkit), so the
 * CDK app takes the variable names (`ENV`) and the defaults (`DEFAULTS`) from here without loading
 * the service's code.
 */
import * as v from 'valibot';
import { EMBEDS } from './embed/settings.js';
import { type HostRule, readHostRules, showHostRules } from './fetch/host-rules.js';
import { parseProxyUrl } from './fetch/proxy-url.js';
import {
  autoOrInt,
  bytes,
  defineSettings,
  envNames,
  type GroupsValues,
  int,
  list,
  oneOf,
  type SettingType,
  settingDefaults,
  splitList,
  text,
  trueOrFalse,
} from './settings.js';

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; linklens/1.0; +https://github.com/linklens/linklens)';

// The limits of the platform the service runs on, which the settings, the service and the CDK app
// (cdk/) share: each is defined here once.

/** API Gateway's hard limit on an integration, in ms: the record must be out before it. */
export const API_GATEWAY_LIMIT_MS = 29_000;

/** The memory that buys one vCPU on Lambda, in MB (below it, a share of one). */
export const LAMBDA_MB_PER_VCPU = 1769;

/** On AWS, `jobs/` objects (job inputs and results, the memos: lib/storage-keys.ts) expire after this many days. */
export const JOBS_EXPIRE_DAYS = 1;

/** The longest a memo under `jobs/` is kept on AWS, in ms: the upper bound of the memos' settings. */
export const MEMO_MAX_TTL_MS = JOBS_EXPIRE_DAYS * 86_400_000;

/** An SQS queue URL, or empty. */
const queueUrl: SettingType<string> = {
  allowed: 'SQS queue URL',
  schema: (env) =>
    v.pipe(
      v.string(),
      v.trim(),
      v.check((s) => s === '' || /^https?:\/\/[^/]+\/.+/i.test(s), `${env} must be an SQS queue URL`),
    ),
};

const SECURITY = defineSettings('security', 'Keys and the SSRF guard', {
  apiKeys: {
    env: 'LINKPREVIEW_API_KEYS',
    type: list(),
    default: [],
    doc: 'Bearer keys. Unset locally: the local server generates one and prints it at start.',
  },
  apiKeyHashes: {
    env: 'LINKPREVIEW_API_KEY_HASHES',
    type: {
      allowed: 'comma-separated SHA-256 hex digests',
      schema: (env) =>
        v.pipe(
          v.string(),
          v.transform((s) => splitList(s).map((x) => x.toLowerCase())),
          v.check((a) => a.every((h) => /^[0-9a-f]{64}$/.test(h)), `${env} must be comma-separated SHA-256 hex digests`),
        ),
    },
    default: [],
    doc: 'SHA-256 hex digests of bearer keys: what the AWS stack passes (plain keys never reach AWS).',
  },
  apiKeyParameter: {
    env: 'LINKPREVIEW_API_KEY_PARAMETER',
    type: text({ allowed: 'SSM parameter name or ARN' }),
    default: '',
    doc: 'AWS: an SSM parameter holding more key digests (a SecureString or String of comma-separated digests, or a StringList), read by the preview Lambda and cached for `LINKPREVIEW_API_KEY_CACHE_S`: keys are added and revoked without a redeploy.',
  },
  apiKeySecret: {
    env: 'LINKPREVIEW_API_KEY_SECRET',
    type: text({ allowed: 'Secrets Manager secret name or ARN' }),
    default: '',
    doc: 'AWS: or a Secrets Manager secret holding them (comma-separated digests or a JSON array of them), read and cached the same way. Not both.',
  },
  apiKeyCacheSeconds: {
    env: 'LINKPREVIEW_API_KEY_CACHE_S',
    type: int(0, 86_400),
    default: 300,
    doc: 'Seconds the digests of the parameter or secret are cached: an added or revoked key takes effect within this time (0: read at every request). A failed read keeps the last digests this long (a minute at most).',
  },
  allowLoopback: {
    env: 'LINKPREVIEW_ALLOW_LOOPBACK',
    type: trueOrFalse(),
    default: false,
    doc: 'Local development: opens the SSRF guard to loopback alone (127.0.0.0/8, `::1`, `localhost`) on any port; nothing private, link-local or metadata. Warns at start.',
  },
  allowPrivateNetworks: {
    env: 'LINKPREVIEW_ALLOW_PRIVATE_NETWORKS',
    type: trueOrFalse(),
    default: false,
    doc: 'Tests only: opens the SSRF guard to loopback and private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) on any port; never link-local or cloud metadata addresses. Warns at start. Prefer `LINKPREVIEW_ALLOW_LOOPBACK`.',
  },
  allowedPorts: {
    env: 'LINKPREVIEW_ALLOWED_PORTS',
    type: {
      allowed: 'comma-separated port numbers',
      schema: (env) =>
        v.pipe(
          v.string(),
          v.transform(splitList),
          v.check((a) => a.every((p) => /^\d+$/.test(p) && +p > 0 && +p < 65536), `${env} must be comma-separated port numbers`),
          v.transform((a) => a.map(Number)),
        ),
    },
    default: [],
    doc: 'Ports allowed besides 80 and 443 while the guard is closed.',
  },
});

/** LINKPREVIEW_HOST_RULES: `pattern=actions` rules separated by `;` (lib/fetch/host-rules.ts). */
const hostRules: SettingType<HostRule[]> = {
  allowed: '`pattern=action[,action]` rules separated by `;`',
  show: showHostRules,
  schema: (env) =>
    v.pipe(
      v.string(),
      v.check(
        (s) => typeof readHostRules(s) !== 'string',
        (issue) => `${env}: ${readHostRules(String(issue.input))}`,
      ),
      v.transform((s) => readHostRules(s) as HostRule[]),
    ),
};

const HOSTS = defineSettings(
  'hosts',
  'Host rules',
  {
    hostRules: {
      env: 'LINKPREVIEW_HOST_RULES',
      type: hostRules,
      default: [],
      doc: 'What is done with the links and sub-resources of some hosts, as ordered `pattern=actions` rules: the first rule whose pattern matches a URL decides. A pattern is a host (with its subdomains: `example.com`), its subdomains only (`*.example.com`), a host with a path prefix (`wiki.example.com/reset/`), or `*` (every URL). Actions: `deny`, `metadata-only`, `no-embed`, `proxy`, `render`, `allow` (see below). A malformed rule, or one that can never match (a `?` or `#` in its path, or every URL it names decided by an earlier rule), stops start-up with a message naming it.',
    },
  },
  [
    'The actions of a rule (comma-separated; `deny` goes alone):',
    '',
    '- `deny`: never fetched, by the guard itself: the link answers 400 `LINK_NOT_ALLOWED` (`details`: the URL and the rule); a redirect into it ends the preview with an `ok: false` record and the upstream error `LINK_NOT_ALLOWED`; an image, icon, oEmbed, manifest or platform source on it is not fetched, nor any request of the browser rendering or capturing a page. It holds on the address connected to, not only the name: the addresses a denied host resolves to are denied under every name and as IP literals (`http://11.0.0.2/`, `http://184549378/`, `http://[::ffff:11.0.0.2]/`), checked at connect time like the SSRF guard, with a path rule judged as if the URL named the denied host. The denied hosts are resolved on first use and again after a minute; an address stays denied ten minutes after the last resolution that returned it. A denied host that shares its address with other hosts (a CDN, a shared host) denies them too: a rule means "never connect there", so deny a host on a shared CDN by a path rule of its own site, or not at all. A wildcard rule (`*.corp.example`) has no named host to resolve: its subdomains are denied by name.',
    "- `metadata-only`: the record's fields, but nothing of the site is stored: no image, no icon, no page versions, no screenshot, no media files. Nor for another page: an image or icon it names on such a host is not copied, and an image of its content there is left out of its page versions (never downloaded).",
    "- `no-embed`: no `embed` (player) in the records of its links, nor any player on its hosts in another link's record ([embeds.md](embeds.md)).",
    "- `proxy`: what `LINKPREVIEW_PROXY_HOSTS` did: the host goes to the proxy first (`LINKPREVIEW_PROXY_MODE=fallback`) or only (`hosts`). The CDK construct writes its proxy's `hosts` as such rules, after `hostRules`.",
    '- `render`: what `LINKPREVIEW_RENDER_HOSTS` did: its pages are always rendered in the browser.',
    '- `allow`: previewed as usual; the rules after it are not read for the URLs it matches.',
    '',
    "A path prefix is compared with the URL's path as servers read it, so every spelling of one path matches: percent-encoding decoded until nothing changes (`%72eset` and `%2572eset` are `reset`, as a server that decodes twice reads them), a backslash read as a slash, each segment's `;` parameters cut (`/reset;x/`), empty and dot segments removed (`//reset/`, `/a/../reset/`). Path rules are case-insensitive: IIS, ASP.NET, Windows and macOS file systems and many routers serve `/Reset/` as `/reset/`, and a rule that matches more paths errs on the safe side for `deny`. The pattern keeps its case as written in messages. A prefix ending in `/` also matches the path without it (`/reset/` matches `/reset`).",
    '',
    'Only allowed hosts, for closed deployments: end the table with `*=deny`. Every URL no earlier rule matched is then denied, images and icons on other hosts included (allow a CDN by its own rule).',
    '',
    '`LINKPREVIEW_PROXY_HOSTS` and `LINKPREVIEW_RENDER_HOSTS` are still read, as entries after the rules (they add `proxy` or `render` to what a rule decided, never to a `deny`), with a warning at start naming the rules to write instead.',
    '',
    'Examples:',
    '',
    '- an intranet never fetched: `LINKPREVIEW_HOST_RULES="intranet.example.com=deny;*.corp.example=deny"`;',
    '- one-time login links that a preview would use up: `LINKPREVIEW_HOST_RULES="chat.example.com/_oauth/=deny;wiki.example.com/reset/=deny"`;',
    '- a site that forbids copying its images, and a shop behind a wall: `LINKPREVIEW_HOST_RULES="photos.example=metadata-only;*.shop.example=proxy,render"`;',
    '- a closed deployment: `LINKPREVIEW_HOST_RULES="docs.example.com=allow;cdn.example.com=allow;*=deny"`.',
  ].join('\n'),
);

const FETCH = defineSettings('fetch', 'Fetching and time budgets', {
  userAgent: {
    env: 'LINKPREVIEW_USER_AGENT',
    type: text({ nonEmpty: true }),
    default: DEFAULT_USER_AGENT,
    doc: 'The User-Agent of outbound fetches (some hosts get their own: lib/fetch/host-profiles.ts).',
  },
  maxPageBytes: {
    env: 'LINKPREVIEW_MAX_PAGE_BYTES',
    type: bytes(1024, 100 * 1024 * 1024),
    default: 5 * 1024 * 1024,
    doc: 'Bytes read of the link itself: HTML beyond it is cut (metadata is at the top), other bodies are only measured.',
  },
  maxImageBytes: {
    env: 'LINKPREVIEW_MAX_IMAGE_BYTES',
    type: bytes(1024, 200 * 1024 * 1024),
    default: 15 * 1024 * 1024,
    doc: 'Cap on any image download.',
  },
  maxImagePixels: {
    env: 'LINKPREVIEW_MAX_IMAGE_PIXELS',
    type: int(1, 1_000_000_000),
    default: 50_000_000,
    doc: 'Decoded pixels an image (or a video frame) may have before it is refused (decompression bombs).',
  },
  fetchTimeoutMs: {
    env: 'LINKPREVIEW_FETCH_TIMEOUT_MS',
    type: int(100, 120_000),
    default: 10_000,
    doc: "Total time of one fetch, all redirect hops included, within the request's time budget.",
  },
  maxRedirects: {
    env: 'LINKPREVIEW_MAX_REDIRECTS',
    type: int(0, 10),
    default: 10,
    doc: 'Redirect hops followed.',
  },
  hostConcurrency: {
    env: 'LINKPREVIEW_HOST_CONCURRENCY',
    type: int(0, 256),
    default: 6,
    doc: "Requests at once to one host from one process (the link, its redirects, images, icons, oEmbed, the browser's requests), the others queued in order within their own time; 0: no limit. 6 is what browsers allow per host over HTTP/1.1, and what a site expects of one client. On AWS each preview Lambda instance (and each worker) has its own: a herd spread over N instances may reach a host N × this at once.",
  },
  retryAfterMaxMs: {
    env: 'LINKPREVIEW_RETRY_AFTER_MAX_MS',
    type: int(0, 86_400_000),
    default: 600_000,
    doc: "Longest a host that answered 429 or 503 with Retry-After is left alone: until then its fetches fail at once as RATE_LIMITED with the status it gave, and the record's `retryAfter` says when it is asked again (a host with a `proxy` host rule goes through the proxy instead). Remembered per process; 0 forgets at once.",
  },
  // Every phase (platform lookups, the fetch and its redirects, the generic fallback, sub-fetches,
  // the job wait) draws from it; when it ends the record built so far is the answer. In the Lambda
  // (and the local server, which stands in for API Gateway) it is also cut to the invocation's
  // remaining time less 1.5 s (lib/budget.ts), so the answer leaves inside API Gateway's 29 s.
  requestBudgetMs: {
    env: 'LINKPREVIEW_REQUEST_BUDGET_MS',
    type: int(100, 28_000),
    default: 25_000,
    doc: 'The time budget of one request, every phase included; in the Lambda also cut to its remaining time less 1.5 s.',
  },
  jobWaitMs: {
    env: 'LINKPREVIEW_JOB_WAIT_MS',
    type: int(100, 28_000),
    default: 20_000,
    doc: "The jobs' deadline, counted from when they start (after the fetch), within the request's budget: a late job's part is left out.",
  },
});

/** A forward proxy's URL (the credentials in it stay out of every message), or empty. */
const proxyUrl: SettingType<string> = {
  allowed: '`http://[user:password@]host:port` or `https://…`',
  schema: (env) =>
    v.pipe(
      v.string(),
      v.trim(),
      v.check((s) => {
        if (s === '') return true;
        try {
          parseProxyUrl(s);
          return true;
        } catch {
          return false;
        }
      }, `${env} must be http(s)://[user:password@]host[:port] with no path (its value is not repeated here: it may hold credentials)`),
    ),
};

const PROXY = defineSettings('proxy', 'Outbound proxy', {
  proxyUrl: {
    env: 'LINKPREVIEW_PROXY_URL',
    type: proxyUrl,
    default: '',
    secret: true,
    doc: "An HTTP forward proxy for the sites that wall datacenter addresses (https targets and plain ones through CONNECT, to the address the SSRF guard checked). The operator's own choice: the guard does not apply to its address. Its credentials never appear in a log, an error, a header or a record. On AWS, `LINKPREVIEW_PROXY_SECRET` or `LINKPREVIEW_PROXY_PARAMETER` instead.",
  },
  proxyMode: {
    env: 'LINKPREVIEW_PROXY_MODE',
    type: oneOf(['fallback', 'hosts', 'always', 'off']),
    default: 'fallback',
    defaultDoc: '`fallback` (nothing goes through a proxy until one is set)',
    doc: '`fallback`: direct first; a wall, or a refused or reset connection, is asked again through the proxy, and that host stays on the proxy for the rest of the preview (images, icons, oEmbed, jobs, the browser). `hosts`: only `LINKPREVIEW_PROXY_HOSTS` use the proxy. `always`: every request. `off`: none.',
  },
  proxyHosts: {
    env: 'LINKPREVIEW_PROXY_HOSTS',
    type: list(),
    default: [],
    doc: 'Hosts that go to the proxy first (`fallback`) or only (`hosts`); `amazon.com` also matches its subdomains. Still read, with a warning: write `amazon.com=proxy` in `LINKPREVIEW_HOST_RULES` instead.',
  },
  proxyMemoTtlMs: {
    env: 'LINKPREVIEW_PROXY_MEMO_TTL_MS',
    type: int(0, MEMO_MAX_TTL_MS),
    default: 3_600_000,
    doc: 'How long a walled host is remembered (in the blob store): its next preview goes to the proxy first. 0: never remembered. On AWS at most a day (jobs/ objects expire then).',
  },
  proxyParameter: {
    env: 'LINKPREVIEW_PROXY_PARAMETER',
    type: text({ allowed: 'SSM parameter name or ARN' }),
    default: '',
    doc: 'AWS: an SSM SecureString holding the proxy URL, read through Powertools and cached for `LINKPREVIEW_PROXY_CACHE_S`.',
  },
  proxySecret: {
    env: 'LINKPREVIEW_PROXY_SECRET',
    type: text({ allowed: 'Secrets Manager secret name or ARN' }),
    default: '',
    doc: 'AWS: or a Secrets Manager secret holding it (the URL as the secret string). Not both.',
  },
  proxyCacheSeconds: {
    env: 'LINKPREVIEW_PROXY_CACHE_S',
    type: int(0, 86_400),
    default: 300,
    doc: 'Seconds the proxy URL read from the parameter or secret is cached: a rotated URL takes effect within this time.',
  },
});

const MEDIA = defineSettings('media', 'Media and documents', {
  maxMediaBytes: {
    env: 'LINKPREVIEW_MAX_MEDIA_BYTES',
    type: bytes(1024, 1024 * 1024 * 1024),
    default: 50 * 1024 * 1024,
    doc: 'Cap on a media or document download.',
  },
  mediaProbeBytes: {
    env: 'LINKPREVIEW_MEDIA_PROBE_BYTES',
    type: bytes(1024, 1024 * 1024 * 1024),
    default: 16 * 1024 * 1024,
    doc: 'Video/audio: the prefix fetched (a Range request where the server supports it, else a bounded download) and probed.',
  },
  mediaMaxDurationSeconds: {
    env: 'LINKPREVIEW_MEDIA_MAX_DURATION_S',
    type: int(1, 24 * 3600),
    default: 3600,
    doc: 'Video/audio: seconds decoded at most (waveform, frames); a longer file is described from its header.',
  },
  mediaDecodeTimeoutMs: {
    env: 'LINKPREVIEW_MEDIA_DECODE_TIMEOUT_MS',
    type: int(100, 120_000),
    default: 12_000,
    doc: 'Time cap of one decoder run (ffprobe, ffmpeg, the pdf.js thread); the child process is killed after it.',
  },
  videoSnapshots: {
    env: 'LINKPREVIEW_VIDEO_SNAPSHOTS',
    type: int(0, 12),
    default: 4,
    doc: 'Video: frames grabbed as `snapshots` (besides the poster).',
  },
  pdfMaxPages: {
    env: 'LINKPREVIEW_PDF_MAX_PAGES',
    type: int(1, 10_000),
    default: 200,
    doc: 'PDF: pages read for text.',
  },
  pdfRenderPages: {
    env: 'LINKPREVIEW_PDF_RENDER_PAGES',
    type: int(0, 20),
    default: 3,
    doc: 'PDF: the first pages rendered as `pages` screenshots.',
  },
  ffprobePath: {
    env: 'LINKPREVIEW_FFPROBE_PATH',
    type: text({ allowed: 'path' }),
    default: '',
    defaultDoc: "the npm package's binary",
    doc: "The ffprobe binary (the worker's Lambda layer puts it at `/opt/bin/ffprobe`). Empty: @ffprobe-installer's.",
  },
  ffmpegPath: {
    env: 'LINKPREVIEW_FFMPEG_PATH',
    type: text({ allowed: 'path' }),
    default: '',
    defaultDoc: "the npm package's binary",
    doc: "The ffmpeg binary (the worker's Lambda layer puts it at `/opt/bin/ffmpeg`). Empty: @ffmpeg-installer's.",
  },
});

const SCREENSHOTS = defineSettings('screenshots', 'Screenshots and the browser', {
  screenshots: {
    env: 'LINKPREVIEW_SCREENSHOTS',
    type: {
      allowed: '`on`, `off`, `auto` (or `true`/`false`, `1`/`0`, `yes`/`no`)',
      schema: (env) =>
        v.pipe(
          v.string(),
          v.trim(),
          v.toLowerCase(),
          v.picklist(['on', 'off', 'auto', 'true', 'false', '1', '0', 'yes', 'no', ''], `${env} must be on, off or auto`),
          v.transform((s) =>
            ['on', 'true', '1', 'yes'].includes(s) ? ('on' as const) : ['off', 'false', '0', 'no'].includes(s) ? ('off' as const) : ('auto' as const),
          ),
        ),
    },
    default: 'auto',
    defaultDoc: '`auto`: on where a browser exists at `LINKPREVIEW_BROWSER_PATH`',
    doc: 'Page screenshots in headless Chromium.',
  },
  browserPath: {
    env: 'LINKPREVIEW_BROWSER_PATH',
    type: text({ nonEmpty: true, allowed: 'path' }),
    default: '/usr/bin/chromium',
    doc: 'The Chromium (or Chrome) executable for screenshots.',
  },
  screenshotTimeoutMs: {
    env: 'LINKPREVIEW_SCREENSHOT_TIMEOUT_MS',
    type: int(1000, 60_000),
    default: 10_000,
    doc: 'Time cap of one capture: browser launch or page, load, network quiet and capture.',
  },
  screenshotQuietMs: {
    env: 'LINKPREVIEW_SCREENSHOT_QUIET_MS',
    type: int(0, 1000),
    default: 100,
    doc: 'After the load event, the page is captured once none of its requests has been running for this long (at most 1 s after the load event).',
  },
  browserConcurrency: {
    env: 'LINKPREVIEW_BROWSER_CONCURRENCY',
    type: autoOrInt(1, 16),
    default: 'auto',
    defaultDoc:
      "`auto`: from the memory: what a quarter of the machine's memory holds beside Chromium's own (300 MB), at `LINKPREVIEW_BROWSER_PAGE_MB` a page, at least 1 and at most two per core (pages beyond the cores share them, and when every lane is taken the page that has used the most CPU gives its lane to a waiting one)",
    doc: "Pages loaded in the browser at once in this process (the local server), each in a lane of its own: a job that needs the browser (a render, a screenshot) never takes one of `LINKPREVIEW_JOB_CONCURRENCY`'s slots, and one still waiting when its deadline can no longer be met is dropped at once. On AWS the browser worker Lambda takes one page at a time (its Chromium is a single process), and its concurrency sets how many load at once.",
  },
  browserPageMb: {
    env: 'LINKPREVIEW_BROWSER_PAGE_MB',
    type: int(128, 4096),
    default: 512,
    doc: "The memory one page may take in the browser, in MB: its renderer's private memory. A renderer past it is killed, and its load fails (the record keeps the static fields). The renderers' JavaScript heap is capped at half of it (V8's `--max-old-space-size`). The local lanes and the browser worker's memory follow from it.",
  },
  browserPageCpuMs: {
    env: 'LINKPREVIEW_BROWSER_PAGE_CPU_MS',
    type: int(250, 60_000),
    default: 3000,
    doc: "The CPU time one page may take in the browser (its renderer's, scripts, layout and workers included), in ms: past it, its scripts are stopped and its load fails (the record keeps the static fields). A page that never stops (a script in an endless loop) ends here, within the render's or the screenshot's time cap.",
  },
  contentWaitMs: {
    env: 'LINKPREVIEW_CONTENT_WAIT_MS',
    type: int(0, 28_000),
    default: 0,
    doc: "Once the rest of the card is ready (its fields, image and icon), how long the record waits for the page's content to be read, for its reading time (within the jobs' deadline). 0: not at all, the record goes out with the card. The versions' addresses are named either way, and a reading time that came late is in the next preview of the same page. A page with no description of its own waits for the read in any case (its excerpt is the description).",
  },
  contentIdleMs: {
    env: 'LINKPREVIEW_CONTENT_IDLE_MS',
    type: int(0, 60_000),
    default: 250,
    doc: "The local server: the page's content (its read for the reading time, and its versions with their images) is not made while previews are in flight. When the record needs neither its excerpt nor its reading time (the page has a description, and `LINKPREVIEW_CONTENT_WAIT_MS` is 0), the whole `page-content` job waits; otherwise the read runs at once and the versions' build with images waits. It runs once the server has had no preview in flight for this long (ms), one page at a time, or at once when one of the versions' addresses is asked for (the request is held until they are built), so it never shares the cores with a record still being made; its reading time is in the next preview of the page. At most 256 pages wait, holding at most a sixteenth of the memory (256 MB at most); past that, the oldest is made at once. A stopping server makes those still waiting for up to 5 s. 0: made at once, as the worker Lambda does on AWS, where it has cores of its own.",
  },
  screenshotWaitMs: {
    env: 'LINKPREVIEW_SCREENSHOT_WAIT_MS',
    type: int(0, 28_000),
    default: 250,
    doc: "Once the rest of the record is ready, how long it waits for the screenshot (within the jobs' deadline). A later screenshot is still stored, and remembered for its URL.",
  },
  screenshotMemoTtlMs: {
    env: 'LINKPREVIEW_SCREENSHOT_MEMO_TTL_MS',
    type: int(0, MEMO_MAX_TTL_MS),
    default: 3_600_000,
    doc: 'How long a screenshot is remembered for its URL: a preview of that URL in that time takes it instead of rendering the page again; a record never carries an older one. 0: never remembered. On AWS at most a day (jobs/ objects expire then).',
  },
});

const RENDER = defineSettings('render', 'Rendering pages built by JavaScript', {
  render: {
    env: 'LINKPREVIEW_RENDER',
    type: oneOf(['auto', 'on', 'off']),
    default: 'auto',
    defaultDoc: '`auto`: where a browser exists (locally at `LINKPREVIEW_BROWSER_PATH`, on AWS the browser worker)',
    doc: "`auto`: a page whose static HTML is a single-page app's empty shell (no metadata title or description, scripts and an empty mount element) is rendered in headless Chromium before extraction; a page with good static metadata never is. `on`: every page. `off`: none.",
  },
  renderHosts: {
    env: 'LINKPREVIEW_RENDER_HOSTS',
    type: list(),
    default: [],
    doc: 'Hosts whose pages are always rendered (`example.com` also matches its subdomains). Still read, with a warning: write `example.com=render` in `LINKPREVIEW_HOST_RULES` instead.',
  },
  renderTimeoutMs: {
    env: 'LINKPREVIEW_RENDER_TIMEOUT_MS',
    type: int(1000, 60_000),
    default: 8000,
    doc: "The hard cap of one render: browser launch or tab, page load, the network-quiet window and reading the DOM. Past it, the record goes out with the static page's fields.",
  },
});

const SERVICE = defineSettings('service', 'Jobs, assets and logs', {
  playground: {
    env: 'LINKPREVIEW_PLAYGROUND',
    type: trueOrFalse(),
    default: true,
    doc: '`GET /` from a browser answers the playground page (docs/clients.md, "The playground"): static, it holds no key and needs none. `false`: `GET /` is 405 for every client.',
  },
  jobConcurrency: {
    env: 'LINKPREVIEW_JOB_CONCURRENCY',
    type: int(1, 64),
    default: 4,
    doc: 'Jobs running at once in this process (shared by all requests); in the worker Lambda, records of a batch run at once (at most).',
  },
  cpuThreads: {
    env: 'LINKPREVIEW_CPU_THREADS',
    type: autoOrInt(0, 64),
    default: 'auto',
    defaultDoc: `\`auto\`: one per core (\`os.availableParallelism()\`); in a Lambda, one per ${LAMBDA_MB_PER_VCPU.toLocaleString('en-US')} MB of its memory (a vCPU)`,
    doc: "Worker threads for the jobs' CPU-heavy steps (a page's content: DOM, Readability, sanitizer, Markdown), off the event loop; a step past its job's deadline is stopped with its thread. `0`: in-process.",
  },
  cpuQueue: {
    env: 'LINKPREVIEW_CPU_QUEUE',
    type: int(0, 10_000),
    default: 32,
    doc: 'Steps waiting for a CPU thread at most; beyond it a job fails at once (a transient failure) instead of waiting.',
  },
  dataDir: {
    env: 'LINKPREVIEW_DATA_DIR',
    type: text({ trim: false, allowed: 'path' }),
    default: '.data',
    defaultDoc: '`.data` (`/tmp/linklens` in the preview Lambda without AWS adapters)',
    doc: 'The local asset store (assets are served under `/assets/`).',
  },
  publicUrl: {
    env: 'LINKPREVIEW_PUBLIC_URL',
    type: {
      allowed: 'http(s) URL',
      schema: (env) =>
        v.pipe(
          v.string(),
          v.trim(),
          v.check((s) => s === '' || /^https?:\/\/[^/]+/i.test(s), `${env} must be an http(s) URL`),
          v.transform((s) => s.replace(/\/+$/, '')),
        ),
    },
    default: '',
    defaultDoc: "the local server's address",
    doc: 'Base URL of `/assets/...` in records.',
  },
  logLevel: {
    env: 'LINKPREVIEW_LOG_LEVEL',
    type: oneOf(['debug', 'info', 'warn', 'error', 'silent']),
    default: 'info',
    doc: 'Log level (JSON lines on stderr locally).',
  },
  openApiPath: {
    env: 'LINKPREVIEW_OPENAPI_PATH',
    type: text({ allowed: 'path' }),
    default: '',
    defaultDoc: '`openapi.yaml` in the working directory, else beside the code (the Lambda bundle ships it)',
    doc: 'Where `GET /openapi.json` reads the OpenAPI document.',
  },
});

/** The webhooks' retries, per the Standard Webhooks' reference schedule (docs/batches.md says why). */
export const WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const DURATION_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A duration's ms (`5m`: 300000); one DURATION matches. */
const durationMs = (x: string): number => {
  const [, n, unit] = DURATION.exec(x) as RegExpExecArray;
  return Number(n) * DURATION_MS[unit as keyof typeof DURATION_MS];
};

/** A comma-separated list of durations (`500ms`, `5s`, `5m`, `2h`, `1d`), in ms. */
function durations(): SettingType<number[]> {
  return {
    allowed: 'comma-separated durations (`500ms`, `5s`, `5m`, `2h`, `1d`), up to 20, each at most 12 h',
    show: (ms) =>
      ms.map((x) => (x % 3_600_000 === 0 ? `${x / 3_600_000}h` : x % 60_000 === 0 ? `${x / 60_000}m` : x % 1000 === 0 ? `${x / 1000}s` : `${x}ms`)).join(','),
    schema: (env) =>
      v.pipe(
        v.string(),
        v.transform(splitList),
        v.check((items) => items.length <= 20 && items.every((x) => DURATION.test(x)), `${env} must be comma-separated durations such as 5s,5m,2h`),
        v.transform((items) => items.map(durationMs)),
        v.check((ms) => ms.every((x) => x <= 12 * 3_600_000), `${env}: each retry is at most 12 h away (SQS's longest visibility timeout)`),
      ),
  };
}

/** A Standard Webhooks secret as linklens takes it: `whsec_` and the base64 of at least 24 random bytes. */
export function isWebhookSecret(x: string): boolean {
  return /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(x) && Buffer.from(x.slice(6), 'base64').length >= 24;
}

/** Standard Webhooks secrets: `whsec_` and the base64 of 24 to 64 random bytes. */
const webhookSecrets: SettingType<string[]> = {
  allowed: 'comma-separated `whsec_…` secrets',
  schema: (env) =>
    v.pipe(
      v.string(),
      v.transform(splitList),
      v.check((items) => items.every(isWebhookSecret), `${env} must hold whsec_ secrets, each the base64 of at least 24 random bytes`),
    ),
};

export const BATCHES = defineSettings('batches', 'Batches and webhooks', {
  batchConcurrency: {
    env: 'LINKPREVIEW_BATCH_CONCURRENCY',
    type: int(1, 64),
    default: 2,
    doc: "A batch's previews at once (`POST /previews`), beside `POST /`'s own; the local server starts one while no `POST /` is in flight, or when none has started for 2 s. With 2 on 2 cores, a `POST /` beside a 1,000-link batch keeps its p50 within 1.5× of its p50 alone (docs/benchmarks.md).",
  },
  batchMaxQueued: {
    env: 'LINKPREVIEW_BATCH_MAX_QUEUED',
    type: int(1, 1_000_000),
    default: 10_000,
    doc: "A key's batch items queued or running at most; a batch that would go past it is refused whole: 429 `TOO_MANY_QUEUED` with `Retry-After`.",
  },
  batchTtlDays: {
    env: 'LINKPREVIEW_BATCH_TTL_DAYS',
    type: int(1, 365),
    default: 7,
    doc: 'How long a batch and its records are kept after it was submitted; then `GET /previews/{batchId}` is 404.',
  },
  webhookSecrets: {
    env: 'LINKPREVIEW_WEBHOOK_SECRETS',
    type: webhookSecrets,
    default: [],
    defaultDoc: 'the local server makes one and keeps it in the data dir (`webhook-secret`)',
    doc: 'The secrets webhooks are signed with (Standard Webhooks), one signature each: while rotating, set the new and the old, and receivers verify with either.',
    secret: true,
  },
  webhookSecretId: {
    env: 'LINKPREVIEW_WEBHOOK_SECRET_ID',
    type: text({ allowed: 'Secrets Manager secret name or ARN' }),
    default: '',
    doc: "AWS: the Secrets Manager secret holding the webhooks' secrets (comma- or line-separated; `whsec_…`, or the bare base64 the CDK stack generates), read by the webhook function and cached for 5 minutes. Set by the stack.",
  },
  batchQueueUrl: {
    env: 'LINKPREVIEW_BATCH_QUEUE_URL',
    type: queueUrl,
    default: '',
    doc: "AWS: the SQS queue of the batches' items, which the preview function sends and consumes. Empty: no batches (`POST /previews` is 404). Set by the stack.",
  },
  webhookQueueUrl: {
    env: 'LINKPREVIEW_WEBHOOK_QUEUE_URL',
    type: queueUrl,
    default: '',
    doc: "AWS: the SQS queue of the webhooks' deliveries, which the webhook function consumes. Set by the stack.",
  },
  webhookRetries: {
    env: 'LINKPREVIEW_WEBHOOK_RETRIES',
    type: durations(),
    default: WEBHOOK_RETRY_SCHEDULE.split(',').map(durationMs),
    doc: 'The waits before each retry of a webhook that was not answered 2xx (nor 410) within 15 s; after the last, the delivery is dead.',
  },
});

const LOCAL = defineSettings('local', 'Local server', {
  host: {
    env: 'HOST',
    type: text({ trim: false, allowed: 'host name or address' }),
    default: '127.0.0.1',
    doc: 'The interface `npm start` listens on.',
  },
  port: {
    env: 'PORT',
    type: int(0, 65_535),
    default: 3000,
    doc: 'The port `npm start` listens on (`0` picks a free one).',
  },
  maxConcurrentPreviews: {
    env: 'LINKPREVIEW_MAX_CONCURRENT',
    type: int(1, 10_000),
    default: 32,
    doc: 'Previews running at once; more wait in a queue.',
  },
  maxQueuedPreviews: {
    env: 'LINKPREVIEW_MAX_QUEUED',
    type: int(0, 100_000),
    default: 128,
    doc: "Previews waiting; beyond it a request gets 503 `OVERLOADED` with `Retry-After` at once. The wait counts against the request's budget (`LINKPREVIEW_REQUEST_BUDGET_MS`, from its arrival): a request is refused at once when the queue ahead of it is expected to take longer than its budget allows (the recent previews' durations; half the budget each before the first has ended), and one still waiting when less than 2 s of its budget would be left is refused then; one admitted late gets what is left.",
  },
});

const AWS = defineSettings('aws', 'AWS', {
  bucket: {
    env: 'LINKPREVIEW_BUCKET',
    type: {
      allowed: 'S3 bucket name',
      schema: (env) => v.pipe(v.string(), v.trim(), v.regex(/^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])?$/, `${env} must be an S3 bucket name`)),
    },
    default: '',
    doc: 'The S3 bucket for assets (`assets/`) and job results (`jobs/`); with `LINKPREVIEW_JOB_QUEUE_URL` it switches the Lambda to the AWS adapters. Empty: local adapters.',
  },
  jobQueueUrl: {
    env: 'LINKPREVIEW_JOB_QUEUE_URL',
    type: queueUrl,
    default: '',
    doc: 'The SQS queue the preview function sends jobs to. Empty: jobs run in-process.',
  },
  browserQueueUrl: {
    env: 'LINKPREVIEW_BROWSER_QUEUE_URL',
    type: queueUrl,
    default: '',
    doc: "The browser worker's SQS queue: the preview function sends the jobs that need the browser (screenshots) there. Empty: the job queue.",
  },
  replyQueuePrefix: {
    env: 'LINKPREVIEW_REPLY_QUEUE_PREFIX',
    type: {
      allowed: 'an SQS queue name prefix (letters, digits, `-`, `_`; at most 60)',
      schema: (env) => v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9_-]{0,60}$/, `${env} must be an SQS queue name prefix of at most 60 characters`)),
    },
    default: '',
    doc: "The names of the preview containers' reply queues start with it: each container makes one on first use and long-polls it for its job results, and the workers send results only to queues so named. Empty: results are polled in S3.",
  },
  // Set by Lambda: the worker admits jobs while their declared worst cases fit in it
  // (lib/jobs/memory.ts). 0 where unset (locally): no memory admission, only jobConcurrency.
  functionMemoryMb: {
    env: 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
    type: int(128, 10_240),
    default: 0,
    defaultDoc: 'set by Lambda; unset: 0',
    doc: "The function's memory in MB: the worker admits jobs while their declared worst cases fit in it (0: by `LINKPREVIEW_JOB_CONCURRENCY` alone).",
  },
  powertoolsLogLevel: {
    env: 'POWERTOOLS_LOG_LEVEL',
    type: text({ allowed: 'a Powertools level (`DEBUG`, `INFO`, `WARN`, `ERROR`, `SILENT`, ...)' }),
    default: '',
    defaultDoc: '`LINKPREVIEW_LOG_LEVEL`',
    doc: "The Lambda functions' log level, over `LINKPREVIEW_LOG_LEVEL` (Powertools' own variable).",
  },
  metricsNamespace: {
    env: 'POWERTOOLS_METRICS_NAMESPACE',
    type: text({ trim: false }),
    default: 'linklens',
    doc: "The CloudWatch metrics namespace (Powertools' own variable).",
  },
});

/** The core sections, in the order docs/configuration.md shows them. */
export const CORE_GROUPS = [SECURITY, HOSTS, FETCH, PROXY, MEDIA, EMBEDS, SCREENSHOTS, RENDER, SERVICE, BATCHES, LOCAL, AWS] as const;

/** The core configuration: every core setting's value by its key. */
export type CoreConfig = GroupsValues<typeof CORE_GROUPS>;

/** The core settings' variable names by Config key, e.g. `ENV.bucket` is `'LINKPREVIEW_BUCKET'` (the CDK constructs set them). */
export const ENV = envNames(CORE_GROUPS);

/** The core settings' defaults by Config key: what a function gets for a variable the CDK leaves unset or sets to its default. */
export const DEFAULTS: CoreConfig = settingDefaults(CORE_GROUPS);
