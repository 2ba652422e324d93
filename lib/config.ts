/**
 * The one place configuration is read. `loadConfig(env)` is pure (tests pass their own env);
 * it validates every variable and throws a ConfigError naming the bad one, so a misconfigured
 * deployment fails at start-up instead of on the first request.
 */
import * as v from 'valibot';

export class ConfigError extends Error {}

export interface Config {
  /** Plain bearer keys (LINKPREVIEW_API_KEYS). */
  apiKeys: string[];
  /** SHA-256 hex digests of bearer keys (LINKPREVIEW_API_KEY_HASHES), as the AWS stack passes them. */
  apiKeyHashes: string[];
  /**
   * Opens the SSRF guard to loopback and private addresses (RFC 1918, fc00::/7, 100.64.0.0/10) on
   * any port; never to link-local or cloud metadata addresses. Tests and local development only.
   */
  allowPrivateNetworks: boolean;
  /** Opens the SSRF guard to loopback alone (127.0.0.0/8, ::1, localhost), on any port: local development. */
  allowLoopback: boolean;
  /** Ports allowed besides 80 and 443 when the guard is closed. */
  allowedPorts: number[];
  userAgent: string;
  /** Cap on the bytes read of the link itself (HTML is truncated there, other bodies are measured only). */
  maxPageBytes: number;
  /** Cap on the bytes of any image sub-download. */
  maxImageBytes: number;
  /** Cap on the bytes of a media/document download. */
  maxMediaBytes: number;
  /** Video/audio: the prefix fetched (Range where the server supports it, else a bounded download) and probed. */
  mediaProbeBytes: number;
  /** Video/audio: at most this many seconds are decoded (waveform, frames); a longer file is described from its header. */
  mediaMaxDurationSeconds: number;
  /** Time cap of one decoder run (ffprobe, ffmpeg, pdf.js); the child process is killed after it. */
  mediaDecodeTimeoutMs: number;
  /** Video: frames grabbed as `snapshots` (besides the poster). */
  videoSnapshots: number;
  /** PDF: pages beyond this are not read for text. */
  pdfMaxPages: number;
  /** PDF: the first N pages rendered as `pages` screenshots. */
  pdfRenderPages: number;
  /** Total time allowed for one fetch (all hops); within the request's time budget (`jobDeadlineMs`). */
  fetchTimeoutMs: number;
  maxRedirects: number;
  /**
   * The jobs' own deadline, counted from when they start (after the fetch): jobs still running
   * after it are left out. Within the request's time budget (`jobDeadlineMs`).
   */
  recordDeadlineMs: number;
  /** Max decoded pixels an image may have before it is refused (decompression bombs). */
  maxImagePixels: number;
  /** Local data dir (assets) for the local blob store. */
  dataDir: string;
  /** Base URL under which /assets/... are public. Empty: the local server's own address. */
  publicUrl: string;
  /** Concurrency of in-process jobs; in the worker Lambda, records of a batch running at once (at most). */
  jobConcurrency: number;
  /**
   * The memory of the Lambda function in MB (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, set by Lambda): the
   * worker admits jobs while their declared worst cases fit in it (lib/jobs/memory.ts). 0 where
   * unset (locally): no memory admission, only `jobConcurrency`.
   */
  functionMemoryMb: number;
  /** Local server: previews running at once; more wait in a queue. */
  maxConcurrentPreviews: number;
  /** Local server: previews waiting; beyond this a request gets 503 OVERLOADED at once. */
  maxQueuedPreviews: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** AWS: the S3 bucket for assets (`assets/`) and job results (`jobs/`) (LINKPREVIEW_BUCKET). Empty: local adapters. */
  bucket: string;
  /** AWS: the SQS queue the preview function sends jobs to (LINKPREVIEW_JOB_QUEUE_URL). Empty: jobs run in-process. */
  jobQueueUrl: string;
  /**
   * The time budget of one preview request, counted from its start (LINKPREVIEW_JOB_DEADLINE_MS):
   * every phase (platform lookups, the fetch and its redirects, the generic fallback, sub-fetches,
   * the job wait) draws from it, and when it ends the record built so far is the answer. In the
   * Lambda (and the local server, which stands in for API Gateway) it is also cut to the
   * invocation's remaining time less 1.5 s (lib/budget.ts), so the response leaves well inside
   * API Gateway's 29 s limit whatever the other timeouts say.
   */
  jobDeadlineMs: number;
  /**
   * Page screenshots in headless Chromium (LINKPREVIEW_SCREENSHOTS=on|off). Unset: 'auto', on where
   * a browser exists at `browserPath` (lib/browser/browser.ts `screenshotsEnabled`).
   */
  screenshots: 'on' | 'off' | 'auto';
  /** The Chromium (or Chrome) executable for screenshots (LINKPREVIEW_BROWSER_PATH). */
  browserPath: string;
  /** Time cap of one screenshot job: launch or page, load, settle and capture (LINKPREVIEW_SCREENSHOT_TIMEOUT_MS). */
  screenshotTimeoutMs: number;
  /** Quiet time after the load event before the capture (LINKPREVIEW_SCREENSHOT_SETTLE_MS). */
  screenshotSettleMs: number;
  /** AWS: the SQS queue of the screenshot worker (LINKPREVIEW_SCREENSHOT_QUEUE_URL). Empty: the job queue. */
  screenshotQueueUrl: string;
  /** Platforms, part 1: upstream base URLs (GitHub Enterprise, fixture servers) and optional credentials. */
  youtubeBaseUrl: string;
  youtubeApiUrl: string;
  /** YOUTUBE_API_KEY: enables the YouTube Data API v3 (exact counts, channel joinedAt/viewsCount). */
  youtubeApiKey: string;
  githubApiUrl: string;
  githubBaseUrl: string;
  /** GITHUB_TOKEN: raises the GitHub REST rate limit from 60 to 5000 requests an hour. */
  githubToken: string;
  redditBaseUrl: string;
  /** REDDIT_CLIENT_ID / REDDIT_CLIENT_SECRET: app-only OAuth (higher rate limits); unset: key-less .json. */
  redditClientId?: string;
  redditClientSecret?: string;
  /** Where the OAuth'd API answers and where tokens come from (LINKPREVIEW_REDDIT_OAUTH_URL, LINKPREVIEW_REDDIT_TOKEN_URL). */
  redditOauthUrl: string;
  redditTokenUrl: string;
}

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; linklens/1.0; +https://github.com/linklens/linklens)';

const bool = (name: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.toLowerCase(),
      v.picklist(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', ''], `${name} must be true or false`),
      v.transform((s) => ['true', '1', 'yes', 'on'].includes(s)),
    ),
  );

const int = (name: string, min: number, max: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d+$/, `${name} must be a whole number`),
      v.transform(Number),
      v.minValue(min, `${name} must be at least ${min}`),
      v.maxValue(max, `${name} must be at most ${max}`),
    ),
  );

const list = v.optional(
  v.pipe(
    v.string(),
    v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  ),
);

/** An http(s) base URL; a trailing slash is dropped. */
const httpUrl = (name: string) =>
  v.optional(v.pipe(v.string(), v.trim(), v.regex(/^https?:\/\/[^/]+/i, `${name} must be an http(s) URL`), v.transform((s) => s.replace(/\/+$/, ''))));

const EnvSchema = v.object({
  LINKPREVIEW_API_KEYS: list,
  LINKPREVIEW_API_KEY_HASHES: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean)),
      v.check((a) => a.every((h) => /^[0-9a-f]{64}$/.test(h)), 'LINKPREVIEW_API_KEY_HASHES must be comma-separated SHA-256 hex digests'),
    ),
  ),
  LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: bool('LINKPREVIEW_ALLOW_PRIVATE_NETWORKS'),
  LINKPREVIEW_ALLOW_LOOPBACK: bool('LINKPREVIEW_ALLOW_LOOPBACK'),
  LINKPREVIEW_ALLOWED_PORTS: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
      v.check((a) => a.every((p) => /^\d+$/.test(p) && +p > 0 && +p < 65536), 'LINKPREVIEW_ALLOWED_PORTS must be comma-separated port numbers'),
      v.transform((a) => a.map(Number)),
    ),
  ),
  LINKPREVIEW_USER_AGENT: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'LINKPREVIEW_USER_AGENT must not be empty'))),
  LINKPREVIEW_MAX_PAGE_BYTES: int('LINKPREVIEW_MAX_PAGE_BYTES', 1024, 100 * 1024 * 1024),
  LINKPREVIEW_MAX_IMAGE_BYTES: int('LINKPREVIEW_MAX_IMAGE_BYTES', 1024, 200 * 1024 * 1024),
  LINKPREVIEW_MAX_MEDIA_BYTES: int('LINKPREVIEW_MAX_MEDIA_BYTES', 1024, 1024 * 1024 * 1024),
  LINKPREVIEW_MEDIA_PROBE_BYTES: int('LINKPREVIEW_MEDIA_PROBE_BYTES', 1024, 1024 * 1024 * 1024),
  LINKPREVIEW_MEDIA_MAX_DURATION_S: int('LINKPREVIEW_MEDIA_MAX_DURATION_S', 1, 24 * 3600),
  LINKPREVIEW_MEDIA_DECODE_TIMEOUT_MS: int('LINKPREVIEW_MEDIA_DECODE_TIMEOUT_MS', 100, 120_000),
  LINKPREVIEW_VIDEO_SNAPSHOTS: int('LINKPREVIEW_VIDEO_SNAPSHOTS', 0, 12),
  LINKPREVIEW_PDF_MAX_PAGES: int('LINKPREVIEW_PDF_MAX_PAGES', 1, 10_000),
  LINKPREVIEW_PDF_RENDER_PAGES: int('LINKPREVIEW_PDF_RENDER_PAGES', 0, 20),
  LINKPREVIEW_FETCH_TIMEOUT_MS: int('LINKPREVIEW_FETCH_TIMEOUT_MS', 100, 120_000),
  LINKPREVIEW_MAX_REDIRECTS: int('LINKPREVIEW_MAX_REDIRECTS', 0, 10),
  LINKPREVIEW_DEADLINE_MS: int('LINKPREVIEW_DEADLINE_MS', 100, 28_000),
  LINKPREVIEW_MAX_IMAGE_PIXELS: int('LINKPREVIEW_MAX_IMAGE_PIXELS', 1, 1_000_000_000),
  LINKPREVIEW_DATA_DIR: v.optional(v.string()),
  LINKPREVIEW_PUBLIC_URL: v.optional(
    v.pipe(v.string(), v.trim(), v.check((s) => s === '' || /^https?:\/\/[^/]+/i.test(s), 'LINKPREVIEW_PUBLIC_URL must be an http(s) URL')),
  ),
  LINKPREVIEW_JOB_CONCURRENCY: int('LINKPREVIEW_JOB_CONCURRENCY', 1, 64),
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: int('AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 128, 10_240),
  LINKPREVIEW_MAX_CONCURRENT: int('LINKPREVIEW_MAX_CONCURRENT', 1, 10_000),
  LINKPREVIEW_MAX_QUEUED: int('LINKPREVIEW_MAX_QUEUED', 0, 100_000),
  LINKPREVIEW_BUCKET: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])?$/, 'LINKPREVIEW_BUCKET must be an S3 bucket name'))),
  LINKPREVIEW_JOB_QUEUE_URL: v.optional(
    v.pipe(v.string(), v.trim(), v.check((s) => s === '' || /^https?:\/\/[^/]+\/.+/i.test(s), 'LINKPREVIEW_JOB_QUEUE_URL must be an SQS queue URL')),
  ),
  LINKPREVIEW_JOB_DEADLINE_MS: int('LINKPREVIEW_JOB_DEADLINE_MS', 100, 28_000),
  LINKPREVIEW_YOUTUBE_BASE_URL: httpUrl('LINKPREVIEW_YOUTUBE_BASE_URL'),
  LINKPREVIEW_YOUTUBE_API_URL: httpUrl('LINKPREVIEW_YOUTUBE_API_URL'),
  YOUTUBE_API_KEY: v.optional(v.pipe(v.string(), v.trim())),
  LINKPREVIEW_GITHUB_API_URL: httpUrl('LINKPREVIEW_GITHUB_API_URL'),
  LINKPREVIEW_GITHUB_BASE_URL: httpUrl('LINKPREVIEW_GITHUB_BASE_URL'),
  GITHUB_TOKEN: v.optional(v.pipe(v.string(), v.trim())),
  LINKPREVIEW_REDDIT_BASE_URL: httpUrl('LINKPREVIEW_REDDIT_BASE_URL'),
  LINKPREVIEW_REDDIT_OAUTH_URL: httpUrl('LINKPREVIEW_REDDIT_OAUTH_URL'),
  LINKPREVIEW_REDDIT_TOKEN_URL: httpUrl('LINKPREVIEW_REDDIT_TOKEN_URL'),
  REDDIT_CLIENT_ID: v.optional(v.pipe(v.string(), v.trim())),
  REDDIT_CLIENT_SECRET: v.optional(v.pipe(v.string(), v.trim())),
  LINKPREVIEW_SCREENSHOTS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.toLowerCase(),
      v.picklist(['on', 'off', 'auto', 'true', 'false', '1', '0', 'yes', 'no', ''], 'LINKPREVIEW_SCREENSHOTS must be on, off or auto'),
      v.transform((s) => (['on', 'true', '1', 'yes'].includes(s) ? 'on' as const : ['off', 'false', '0', 'no'].includes(s) ? 'off' as const : 'auto' as const)),
    ),
  ),
  LINKPREVIEW_BROWSER_PATH: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'LINKPREVIEW_BROWSER_PATH must not be empty'))),
  LINKPREVIEW_SCREENSHOT_TIMEOUT_MS: int('LINKPREVIEW_SCREENSHOT_TIMEOUT_MS', 1000, 60_000),
  LINKPREVIEW_SCREENSHOT_SETTLE_MS: int('LINKPREVIEW_SCREENSHOT_SETTLE_MS', 0, 10_000),
  LINKPREVIEW_SCREENSHOT_QUEUE_URL: v.optional(
    v.pipe(v.string(), v.trim(), v.check((s) => s === '' || /^https?:\/\/[^/]+\/.+/i.test(s), 'LINKPREVIEW_SCREENSHOT_QUEUE_URL must be an SQS queue URL')),
  ),
  LINKPREVIEW_LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error', 'silent'], 'LINKPREVIEW_LOG_LEVEL must be debug, info, warn, error or silent')),
});

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  const result = v.safeParse(EnvSchema, picked, { abortPipeEarly: true });
  if (!result.success) {
    const issue = result.issues[0];
    throw new ConfigError(`Invalid configuration: ${issue.message} (got ${JSON.stringify(issue.input)})`);
  }
  const e = result.output;
  return {
    apiKeys: e.LINKPREVIEW_API_KEYS ?? [],
    apiKeyHashes: e.LINKPREVIEW_API_KEY_HASHES ?? [],
    allowPrivateNetworks: e.LINKPREVIEW_ALLOW_PRIVATE_NETWORKS ?? false,
    allowLoopback: e.LINKPREVIEW_ALLOW_LOOPBACK ?? false,
    allowedPorts: e.LINKPREVIEW_ALLOWED_PORTS ?? [],
    userAgent: e.LINKPREVIEW_USER_AGENT ?? DEFAULT_USER_AGENT,
    maxPageBytes: e.LINKPREVIEW_MAX_PAGE_BYTES ?? 5 * 1024 * 1024,
    maxImageBytes: e.LINKPREVIEW_MAX_IMAGE_BYTES ?? 15 * 1024 * 1024,
    maxMediaBytes: e.LINKPREVIEW_MAX_MEDIA_BYTES ?? 50 * 1024 * 1024,
    mediaProbeBytes: e.LINKPREVIEW_MEDIA_PROBE_BYTES ?? 16 * 1024 * 1024,
    mediaMaxDurationSeconds: e.LINKPREVIEW_MEDIA_MAX_DURATION_S ?? 3600,
    mediaDecodeTimeoutMs: e.LINKPREVIEW_MEDIA_DECODE_TIMEOUT_MS ?? 12_000,
    videoSnapshots: e.LINKPREVIEW_VIDEO_SNAPSHOTS ?? 4,
    pdfMaxPages: e.LINKPREVIEW_PDF_MAX_PAGES ?? 200,
    pdfRenderPages: e.LINKPREVIEW_PDF_RENDER_PAGES ?? 3,
    fetchTimeoutMs: e.LINKPREVIEW_FETCH_TIMEOUT_MS ?? 10_000,
    maxRedirects: e.LINKPREVIEW_MAX_REDIRECTS ?? 10,
    recordDeadlineMs: e.LINKPREVIEW_DEADLINE_MS ?? 20_000,
    maxImagePixels: e.LINKPREVIEW_MAX_IMAGE_PIXELS ?? 50_000_000,
    dataDir: e.LINKPREVIEW_DATA_DIR ?? '.data',
    publicUrl: (e.LINKPREVIEW_PUBLIC_URL ?? '').replace(/\/+$/, ''),
    jobConcurrency: e.LINKPREVIEW_JOB_CONCURRENCY ?? 4,
    functionMemoryMb: e.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? 0,
    maxConcurrentPreviews: e.LINKPREVIEW_MAX_CONCURRENT ?? 32,
    maxQueuedPreviews: e.LINKPREVIEW_MAX_QUEUED ?? 128,
    logLevel: e.LINKPREVIEW_LOG_LEVEL ?? 'info',
    bucket: e.LINKPREVIEW_BUCKET ?? '',
    jobQueueUrl: e.LINKPREVIEW_JOB_QUEUE_URL ?? '',
    jobDeadlineMs: e.LINKPREVIEW_JOB_DEADLINE_MS ?? 25_000,
    screenshots: e.LINKPREVIEW_SCREENSHOTS ?? 'auto',
    browserPath: e.LINKPREVIEW_BROWSER_PATH ?? '/usr/bin/chromium',
    screenshotTimeoutMs: e.LINKPREVIEW_SCREENSHOT_TIMEOUT_MS ?? 10_000,
    screenshotSettleMs: e.LINKPREVIEW_SCREENSHOT_SETTLE_MS ?? 500,
    screenshotQueueUrl: e.LINKPREVIEW_SCREENSHOT_QUEUE_URL ?? '',
    youtubeBaseUrl: e.LINKPREVIEW_YOUTUBE_BASE_URL ?? 'https://www.youtube.com',
    youtubeApiUrl: e.LINKPREVIEW_YOUTUBE_API_URL ?? 'https://www.googleapis.com/youtube/v3',
    youtubeApiKey: e.YOUTUBE_API_KEY ?? '',
    githubApiUrl: e.LINKPREVIEW_GITHUB_API_URL ?? 'https://api.github.com',
    githubBaseUrl: e.LINKPREVIEW_GITHUB_BASE_URL ?? 'https://github.com',
    githubToken: e.GITHUB_TOKEN ?? '',
    redditBaseUrl: e.LINKPREVIEW_REDDIT_BASE_URL ?? 'https://www.reddit.com',
    redditOauthUrl: e.LINKPREVIEW_REDDIT_OAUTH_URL ?? 'https://oauth.reddit.com',
    redditTokenUrl: e.LINKPREVIEW_REDDIT_TOKEN_URL ?? 'https://www.reddit.com/api/v1/access_token',
    redditClientId: e.REDDIT_CLIENT_ID || undefined,
    redditClientSecret: e.REDDIT_CLIENT_SECRET || undefined,
  };
}
