/** The local server: a thin adapter over the same handler, plus /assets/. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startTestServer, TEST_KEY } from '../helpers/service';
import { html, startFixtureServer, type FixtureServer } from '../helpers/fixture-server';
import { startLocalServer } from '../../functions/local-server';
import { silentLog } from '../helpers/service';

let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer({ '/': { body: html('<title>Local page</title><meta name="description" content="Served on loopback">') } });
});
afterAll(() => site.close());

test('POST / through real HTTP returns the Link record with its headers', async () => {
  const server = await startTestServer();
  try {
    const res = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ link: site.url('/') }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('server-timing')).toContain('total;dur=');
    const record = await res.json();
    expect(record).toMatchObject({ ok: true, title: 'Local page', description: 'Served on loopback', requestId: res.headers.get('x-request-id') });
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('a key is generated when LINKPREVIEW_API_KEYS is unset, and configured keys are used otherwise', async () => {
  const generated = await startLocalServer({ port: 0, env: { LINKPREVIEW_DATA_DIR: '/tmp/linklens-gen' }, log: silentLog });
  expect(generated.keyGenerated).toBe(true);
  expect(generated.apiKey.length).toBeGreaterThanOrEqual(32);
  const unauthorized = await fetch(`${generated.url}/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'example.com' });
  expect(unauthorized.status).toBe(401);
  await generated.close();

  const configured = await startLocalServer({ port: 0, env: { LINKPREVIEW_API_KEYS: 'alpha, beta' }, log: silentLog });
  expect(configured.keyGenerated).toBe(false);
  expect(configured.apiKey).toBe('alpha');
  await configured.close();
});

test('a body over 1 MB is refused with 413 and the error body', async () => {
  const server = await startTestServer();
  try {
    const res = await fetch(`${server.url}/`, { method: 'POST', headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'text/plain' }, body: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, status: 413, errorCode: 'PAYLOAD_TOO_LARGE' });
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('/assets/ serves stored blobs with Content-Type, ETag, immutable caching and 304; nothing else', async () => {
  const server = await startTestServer();
  try {
    await server.deps.blobs.put('assets/abc/thumbnail.webp', Buffer.from('RIFF....WEBP'), { contentType: 'image/webp', cacheControl: 'public, max-age=31536000, immutable' });
    const url = server.deps.blobs.publicUrl('assets/abc/thumbnail.webp');
    expect(url).toBe(`${server.url}/assets/abc/thumbnail.webp`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('cache-control')).toContain('immutable');
    const etag = res.headers.get('etag')!;
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('RIFF....WEBP');
    const again = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await fetch(`${server.url}/assets/nope.webp`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/abc/thumbnail.webp.meta.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('`npm start` (functions/start-local.ts) honours HOST, PORT and LINKPREVIEW_API_KEYS and prints where it listens', async () => {
  const root = path.resolve(__dirname, '../..');
  const child = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'functions/start-local.ts'], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LINKPREVIEW_API_KEYS: 'cli-key', LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true', LINKPREVIEW_LOG_LEVEL: 'silent', LINKPREVIEW_DATA_DIR: '/tmp/linklens-start-test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.trim()); });
      child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      setTimeout(() => reject(new Error(`no start line: ${out}`)), 20_000);
    });
    expect(line).toMatch(/^linklens listening on http:\/\/127\.0\.0\.1:\d+ .*LINKPREVIEW_API_KEYS/);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
    const res = await fetch(`${url}/`, { method: 'POST', headers: { authorization: 'Bearer cli-key', 'content-type': 'text/plain' }, body: site.url('/') });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe('Local page');
  } finally {
    child.kill('SIGTERM');
  }
});

test('an invalid configuration stops start-up with a message naming the variable', async () => {
  const { loadConfig, ConfigError } = await import('../../lib/config');
  expect(() => loadConfig({ LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(ConfigError);
  expect(() => loadConfig({ LINKPREVIEW_FETCH_TIMEOUT_MS: 'soon' })).toThrow(/LINKPREVIEW_FETCH_TIMEOUT_MS/);
  expect(() => loadConfig({ LINKPREVIEW_API_KEY_HASHES: 'nothex' })).toThrow(/LINKPREVIEW_API_KEY_HASHES/);
  expect(loadConfig({ LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true', LINKPREVIEW_API_KEYS: 'a,b', LINKPREVIEW_ALLOWED_PORTS: '8080' })).toMatchObject({ allowPrivateNetworks: true, apiKeys: ['a', 'b'], allowedPorts: [8080] });
  expect(loadConfig({}).allowPrivateNetworks).toBe(false);
});
