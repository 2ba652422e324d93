/**
 * The settings: declared once each (lib/core-settings.ts, each platform's `settings`), read by
 * loadConfig, named for the CDK by ENV, and documented in docs/configuration.md, which is
 * generated from them and must be current.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, configWarnings, DEFAULTS, ENV, loadConfig } from '../../lib/config';
import { openApiDocument, openApiPath } from '../../lib/contract/openapi';
import { ffmpegBinary, ffprobeBinary } from '../../lib/media/run-tool';
import { assertUniqueVariables, defineSettings, httpUrl, int, readSettings } from '../../lib/settings';
import { CONFIG_DOCS_PATH, renderConfigDocs } from '../../scripts/config-docs';

test('docs/configuration.md is what `npm run docs:config` generates from the declarations', () => {
  expect(readFileSync(CONFIG_DOCS_PATH, 'utf8')).toBe(renderConfigDocs());
});

test('the docs list every variable loadConfig reads, core and platform', () => {
  const docs = renderConfigDocs();
  for (const name of [...Object.values(ENV), 'YOUTUBE_API_KEY', 'GITHUB_TOKEN', 'LINKPREVIEW_REDDIT_TOKEN_URL', 'REDDIT_CLIENT_SECRET']) {
    expect(docs).toContain(`| \`${name}\` |`);
  }
});

test('ENV names the core variables by Config key, as the CDK constructs set them', () => {
  expect(ENV).toMatchObject({
    bucket: 'LINKPREVIEW_BUCKET',
    jobQueueUrl: 'LINKPREVIEW_JOB_QUEUE_URL',
    ffprobePath: 'LINKPREVIEW_FFPROBE_PATH',
    jobWaitMs: 'LINKPREVIEW_JOB_WAIT_MS',
    functionMemoryMb: 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
    port: 'PORT',
  });
  expect(loadConfig({ [ENV.browserQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/1/shots' }).browserQueueUrl).toBe(
    'https://sqs.eu-west-1.amazonaws.com/1/shots',
  );
});

test('DEFAULTS is every core setting unset, as the CDK constructs read the defaults', () => {
  const { platforms: _, ...core } = loadConfig({});
  expect(DEFAULTS).toEqual(core);
  expect(DEFAULTS).toMatchObject({ requestBudgetMs: 25_000, jobWaitMs: 20_000, fetchTimeoutMs: 10_000, metricsNamespace: 'linklens' });
});

test('the names four settings had before any release are not read: no deployment carried them', () => {
  for (const [key, former, raw] of [
    ['requestBudgetMs', 'LINKPREVIEW_JOB_DEADLINE_MS', '12000'],
    ['jobWaitMs', 'LINKPREVIEW_DEADLINE_MS', '9000'],
    ['browserQueueUrl', 'LINKPREVIEW_SCREENSHOT_QUEUE_URL', 'https://sqs.eu-west-1.amazonaws.com/1/browser'],
    ['browserConcurrency', 'LINKPREVIEW_SCREENSHOT_CONCURRENCY', '3'],
  ] as const) {
    expect(loadConfig({ [former]: raw })[key]).toEqual(DEFAULTS[key]);
    expect(readFileSync(CONFIG_DOCS_PATH, 'utf8')).not.toContain(former);
  }
  expect(configWarnings({ LINKPREVIEW_JOB_DEADLINE_MS: '12000' })).toEqual([]);
});

test("the platforms' settings are read from their own variables into config.platforms.<name>", () => {
  expect(loadConfig({}).platforms).toEqual({
    videohost: { baseUrl: 'https://www.youtube.com', apiUrl: 'https://www.googleapis.com/youtube/v3', apiKey: '' },
    codehost: { apiUrl: 'https://api.github.com', baseUrl: 'https://github.com', token: '' },
    forum: {
      baseUrl: 'https://www.reddit.com',
      oauthUrl: 'https://oauth.reddit.com',
      tokenUrl: 'https://www.reddit.com/api/v1/access_token',
      clientId: undefined,
      clientSecret: undefined,
    },
    microblog: {
      syndicationUrl: 'https://cdn.syndication.twimg.com',
      oembedUrl: 'https://publish.twitter.com',
      timelineUrl: 'https://syndication.twitter.com',
    },
    photoshare: { baseUrl: 'https://www.instagram.com' },
    clips: { baseUrl: 'https://www.tiktok.com' },
  });
  const config = loadConfig({
    LINKPREVIEW_GITHUB_API_URL: 'https://ghe.example/api/v3/',
    GITHUB_TOKEN: ' ghp_x ',
    YOUTUBE_API_KEY: 'k',
    REDDIT_CLIENT_ID: 'id',
    REDDIT_CLIENT_SECRET: '',
  });
  expect(config.platforms.codehost).toMatchObject({ apiUrl: 'https://ghe.example/api/v3', token: 'ghp_x' });
  expect(config.platforms.videohost.apiKey).toBe('k');
  expect(config.platforms.forum).toMatchObject({ clientId: 'id', clientSecret: undefined });
  expect(() => loadConfig({ LINKPREVIEW_YOUTUBE_API_URL: 'googleapis.com' })).toThrow(/LINKPREVIEW_YOUTUBE_API_URL must be an http\(s\) URL/);
});

test('a bad value throws a ConfigError naming the variable and the value', () => {
  const group = defineSettings('demo', 'Demo', {
    retries: { env: 'DEMO_RETRIES', type: int(0, 5), default: 2, doc: 'Retries.' },
    origin: { env: 'DEMO_ORIGIN', type: httpUrl(), default: 'https://demo.example', doc: 'Origin.' },
  });
  expect(readSettings(group, {})).toEqual({ retries: 2, origin: 'https://demo.example' });
  expect(readSettings(group, { DEMO_RETRIES: ' 5 ', DEMO_ORIGIN: 'http://127.0.0.1:9/' })).toEqual({ retries: 5, origin: 'http://127.0.0.1:9' });
  expect(() => readSettings(group, { DEMO_RETRIES: '9' })).toThrow(new ConfigError('Invalid configuration: DEMO_RETRIES must be at most 5 (got 9)'));
  expect(() => readSettings(group, { DEMO_RETRIES: 'many' })).toThrow(/DEMO_RETRIES must be a whole number \(got "many"\)/);
});

test('the proxy URL: read with its credentials; a bad one is refused without its value repeated', () => {
  expect(loadConfig({ LINKPREVIEW_PROXY_URL: 'http://user:pa55word@proxy.internal:3128' }).proxyUrl).toBe('http://user:pa55word@proxy.internal:3128');
  expect(loadConfig({}).proxyMode).toBe('fallback');
  for (const bad of ['socks5://user:pa55word@proxy:1080', 'http://user:pa55word@proxy:3128/path', 'user:pa55word@proxy']) {
    let message = '';
    try {
      loadConfig({ LINKPREVIEW_PROXY_URL: bad });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration: LINKPREVIEW_PROXY_URL must be http\(s\):\/\//);
    expect(message).not.toContain('pa55word');
  }
  expect(() => loadConfig({ LINKPREVIEW_PROXY_MODE: 'sometimes' })).toThrow(/LINKPREVIEW_PROXY_MODE must be fallback, hosts, always or off/);
});

test('two settings reading one variable are refused', () => {
  const core = defineSettings('core', 'Core', { token: { env: 'GITHUB_TOKEN', type: httpUrl(), default: '', doc: '' } });
  const platform = defineSettings('codehost', 'codehost', { token: { env: 'GITHUB_TOKEN', type: httpUrl(), default: '', doc: '' } });
  expect(() => assertUniqueVariables([core, platform])).toThrow(/GITHUB_TOKEN is declared twice/);
});

test('the decoder binaries come from the configuration, else the npm packages', async () => {
  const config = loadConfig({ LINKPREVIEW_FFPROBE_PATH: '/opt/bin/ffprobe', LINKPREVIEW_FFMPEG_PATH: '/opt/bin/ffmpeg' });
  expect(await ffprobeBinary(config.ffprobePath)).toBe('/opt/bin/ffprobe');
  expect(await ffmpegBinary(config.ffmpegPath)).toBe('/opt/bin/ffmpeg');
  const defaults = loadConfig({});
  expect(await ffprobeBinary(defaults.ffprobePath)).toBe((require('@ffprobe-installer/ffprobe') as { path: string }).path);
  expect(await ffmpegBinary(defaults.ffmpegPath)).toBe((require('@ffmpeg-installer/ffmpeg') as { path: string }).path);
});

test('the OpenAPI document is read from the configured path first', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-openapi-'));
  try {
    const file = path.join(dir, 'api.yaml');
    copyFileSync(openApiPath(), file);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^(\s+title:).*$/m, '$1 Configured copy'));
    const configured = loadConfig({ LINKPREVIEW_OPENAPI_PATH: file }).openApiPath;
    expect(openApiPath(configured)).toBe(file);
    expect((openApiDocument(configured).info as { title: string }).title).toBe('Configured copy');
    expect((openApiDocument().info as { title: string }).title).not.toBe('Configured copy');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
