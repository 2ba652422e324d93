/** The local server: a thin adapter over the same handler, plus /assets/. */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { startLocalServer } from '../../functions/local-server';
import type { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { silentLog, startTestServer, TEST_KEY } from '../helpers/service';

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

/** The status of an authenticated (or not) POST / to `url`; the body is not a valid request, so a key that works gets 400. */
async function statusWithKey(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
  await res.arrayBuffer();
  return res.status;
}

test('every key of LINKPREVIEW_API_KEYS works over HTTP, not only the first or the last', async () => {
  const server = await startLocalServer({
    port: 0,
    env: { LINKPREVIEW_API_KEYS: 'alpha, beta,gamma', LINKPREVIEW_DATA_DIR: '/tmp/linklens-keys' },
    log: silentLog,
  });
  try {
    const seen: Record<string, number> = {};
    for (const key of ['alpha', 'beta', 'gamma', 'delta', 'alpha,beta']) seen[key] = await statusWithKey(server.url, key);
    // 400: past the key check (the empty body is not a request); 401: refused.
    expect(seen).toEqual({ alpha: 400, beta: 400, gamma: 400, delta: 401, 'alpha,beta': 401 });
  } finally {
    await server.close();
  }
});

test('every key of LINKPREVIEW_API_KEY_HASHES works over HTTP, alongside the plain keys', async () => {
  const { sha256Hex } = await import('../../lib/auth/key-store');
  const server = await startLocalServer({
    port: 0,
    env: {
      LINKPREVIEW_API_KEYS: 'plain-one,plain-two',
      LINKPREVIEW_API_KEY_HASHES: `${sha256Hex('hashed-one')},${sha256Hex('hashed-two')}`,
      LINKPREVIEW_DATA_DIR: '/tmp/linklens-keys',
    },
    log: silentLog,
  });
  try {
    const seen: Record<string, number> = {};
    for (const key of ['plain-one', 'plain-two', 'hashed-one', 'hashed-two', sha256Hex('hashed-one')]) seen[key] = await statusWithKey(server.url, key);
    expect(seen).toEqual({ 'plain-one': 400, 'plain-two': 400, 'hashed-one': 400, 'hashed-two': 400, [sha256Hex('hashed-one')]: 401 });
  } finally {
    await server.close();
  }
});

test('a body over 1 MB is refused with 413 and the error body', async () => {
  const server = await startTestServer();
  try {
    const res = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'text/plain' },
      body: 'x'.repeat(1024 * 1024 + 10),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, status: 413, errorCode: 'PAYLOAD_TOO_LARGE' });
  } finally {
    await server.close();
    server.cleanup();
  }
});

/**
 * Streams a POST body over a raw socket (up to `total` bytes, or until the server stops it) and
 * reports the status line, what the client wrote, and what the server read off that connection.
 */
async function streamUpload(
  server: { url: string; server: http.Server },
  head: string,
  total: number,
): Promise<{ statusLine: string; sent: number; serverRead: number; response: string }> {
  const { port } = new URL(server.url);
  const serverRead = new Promise<number>((resolve) => {
    server.server.once('connection', (s: net.Socket) => s.once('close', () => resolve(s.bytesRead)));
  });
  const sock = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  let response = '';
  let closed = false;
  sock.on('data', (d) => {
    response += d.toString('latin1');
  });
  sock.on('error', () => {
    closed = true;
  });
  sock.on('close', () => {
    closed = true;
  });
  const chunked = /transfer-encoding: chunked/i.test(head);
  sock.write(head);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const frame = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
  let sent = 0;
  while (sent < total && !closed) {
    const ok = sock.write(frame);
    sent += chunk.length;
    if (!ok)
      await new Promise<void>((resolve) => {
        sock.once('drain', resolve);
        sock.once('close', resolve);
      });
  }
  if (!closed) sock.end(chunked ? '0\r\n\r\n' : '');
  const read = await serverRead;
  sock.destroy();
  return { statusLine: response.split('\r\n')[0], sent, serverRead: read, response };
}

test('the key is checked before the body: an unauthenticated POST over 1 MB is 401, not 413', async () => {
  const server = await startTestServer();
  try {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-key' }, { authorization: 'Basic abc' }];
    for (const headers of refused) {
      const res = await fetch(`${server.url}/`, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body: big });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ ok: false, status: 401, errorCode: 'UNAUTHORIZED' });
    }
    // The routing answers that come before the key in the handler still come first.
    expect((await fetch(`${server.url}/nope`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: big })).status).toBe(404);
    expect(
      (await fetch(`${server.url}/`, { method: 'PUT', headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'text/plain' }, body: big })).status,
    ).toBe(405);
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('an upload is read no further than the cap: 413 near 1 MB, 401 at once, never the whole stream', async () => {
  const server = await startTestServer();
  const MB = 1024 * 1024;
  const total = 48 * MB;
  try {
    // Chunked, with the key: read up to the cap, then 413 and the connection closed.
    const keyed = await streamUpload(
      server,
      `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n`,
      total,
    );
    expect(keyed.serverRead).toBeGreaterThan(1 * MB);
    expect(keyed.serverRead).toBeLessThan(3 * MB);
    expect(keyed.sent).toBeLessThan(total);
    expect(keyed.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(keyed.response).toMatch(/\r\nconnection: close\r\n/i);
    expect(keyed.response).toContain('"errorCode":"PAYLOAD_TOO_LARGE"');
    // A declared Content-Length over the cap: 413 before the body is read.
    const declared = await streamUpload(
      server,
      `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: text/plain\r\nContent-Length: ${total}\r\n\r\n`,
      total,
    );
    expect(declared.serverRead).toBeLessThan(2 * MB);
    expect(declared.sent).toBeLessThan(total);
    expect(declared.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    // No key: 401, and the body is not read at all.
    const anonymous = await streamUpload(server, `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${total}\r\n\r\n`, total);
    expect(anonymous.serverRead).toBeLessThan(2 * MB);
    expect(anonymous.sent).toBeLessThan(total);
    expect(anonymous.statusLine).toBe('HTTP/1.1 401 Unauthorized');
    expect(anonymous.response).toMatch(/\r\nconnection: close\r\n/i);
    // The server still answers after all that.
    expect((await fetch(`${server.url}/status`)).status).toBe(200);
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('Expect: 100-continue: the body is asked for only when it will be read', async () => {
  const server = await startTestServer();
  const { port } = new URL(server.url);
  /** Sends the head alone and returns the first answer's status line. */
  const firstAnswer = (head: string) =>
    new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(port), '127.0.0.1', () => sock.write(head));
      let got = '';
      sock.on('data', (d) => {
        got += d.toString('latin1');
        if (got.includes('\r\n')) {
          resolve(got.split('\r\n')[0]);
          sock.destroy();
        }
      });
      sock.on('error', reject);
    });
  try {
    const expect100 = (auth: string, length: number) =>
      `POST / HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: text/plain\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    expect(await firstAnswer(expect100('', 10 * 1024 * 1024))).toBe('HTTP/1.1 401 Unauthorized');
    expect(await firstAnswer(expect100('Authorization: Bearer wrong\r\n', 100))).toBe('HTTP/1.1 401 Unauthorized');
    expect(await firstAnswer(expect100(`Authorization: Bearer ${TEST_KEY}\r\n`, 10 * 1024 * 1024))).toBe('HTTP/1.1 413 Payload Too Large');
    expect(await firstAnswer(expect100(`Authorization: Bearer ${TEST_KEY}\r\n`, 100))).toBe('HTTP/1.1 100 Continue');
  } finally {
    await server.close();
    server.cleanup();
  }
});

/** A GET with the path sent exactly as written (fetch would normalise dot segments). */
function rawGet(base: string, rawPath: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: Number(port), method: 'GET', path: rawPath, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }));
    });
    req.on('error', reject);
    req.end();
  });
}

test("/assets/: directories, the store's .meta.json files and anything outside assets/ are 404 in every spelling, never 500", async () => {
  const server = await startTestServer();
  try {
    await server.deps.blobs.put('assets/abc/medium.webp', Buffer.from('RIFF-MEDIUM-WEBP'), { contentType: 'image/webp' });
    await server.deps.blobs.put('jobs/j1/result.json', Buffer.from('{"job":"SECRET-JOB"}'), { contentType: 'application/json' });
    await (server.deps.blobs as FsBlobStore).flush(); // the server's store writes behind its puts
    const dataDir = (server.deps.blobs as unknown as { root: string }).root;
    writeFileSync(path.join(dataDir, 'secret.txt'), 'SECRET-FILE');
    mkdirSync(path.join(dataDir, 'assets', 'empty'), { recursive: true });
    const meta = readFileSync(path.join(dataDir, 'assets/abc/medium.webp.meta.json'), 'utf8');
    expect(meta).toContain('image/webp');

    const ok = await rawGet(server.url, '/assets/abc/medium.webp');
    expect(ok).toEqual({ status: 200, body: 'RIFF-MEDIUM-WEBP' });

    const probes = [
      // directories
      '/assets/',
      '/assets/abc/',
      '/assets/abc',
      '/assets/empty',
      '/assets/empty/',
      '/assets/abc/%2f',
      '/assets/%2fabc',
      // the metadata file, however spelled
      '/assets/abc/medium.webp.meta.json',
      '/assets/abc/medium.webp.meta.json%2f',
      '/assets/abc/medium.webp.meta.json%2F',
      '/assets/abc/medium.webp.meta.json/',
      '/assets/abc/medium.webp.meta.json/.',
      '/assets/abc/medium.webp.meta.json%2f.',
      '/assets/abc/medium.webp.META.JSON',
      '/assets/abc/medium.webp.meta.json.',
      '/assets/abc/medium.webp.meta.json%20',
      '/assets/abc/medium.webp.meta.json%00',
      '/assets/abc/medium.webp.meta.json::$DATA',
      '/assets/abc%2fmedium.webp.meta.json',
      '/assets/abc/medium.webp.meta%2ejson',
      '/assets/abc/./medium.webp.meta.json',
      '/assets/abc//medium.webp.meta.json',
      '/assets/abc/medium.webp.meta.json%5c',
      '/assets/abc/medium.webp.meta.json\\',
      // outside assets/
      '/assets/../secret.txt',
      '/assets/%2e%2e/secret.txt',
      '/assets/%2E%2E/secret.txt',
      '/assets/..%2fsecret.txt',
      '/assets/%2e%2e%2fsecret.txt',
      '/assets/abc/../../secret.txt',
      '/assets/abc/%2e%2e/%2e%2e/secret.txt',
      '/assets/..%5csecret.txt',
      '/assets/..\\secret.txt',
      '/assets/%2e%2e%5csecret.txt',
      '/assets/abc\\..\\..\\secret.txt',
      '/assets/%252e%252e/secret.txt',
      '/assets/.%2e/secret.txt',
      '/assets/%2e./jobs/j1/result.json',
      '/assets/../jobs/j1/result.json',
      '/assets/..%2fjobs%2fj1%2fresult.json',
      '/assets/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/assets/%c0%ae%c0%ae/secret.txt',
      '/assets/%2e%2e%00/secret.txt',
      '/assets/abc/%2e%2e%2f%2e%2e%2fsecret.txt',
      // other non-canonical spellings of the real asset, and junk
      '/assets//abc/medium.webp',
      '/assets/abc//medium.webp',
      '/assets/abc/medium.webp/',
      '/assets/./abc/medium.webp',
      '/assets/abc/./medium.webp',
      '/assets/abc/medium.webp%00',
      '/assets/abc/medium.webp%00.png',
      '/assets/%00',
      '/assets/%',
      '/assets/%zz',
      '/assets/%e0%a4%a',
      '/assets/.',
      '/assets/..',
      '/assets/%2e',
      '/assets/abc/medium.webp.',
      '/assets/abc/medium.webp%20',
      '/assets/abc/medium.webp:x',
      '/assets/abc/medium.webp.tmp',
    ];
    for (const probe of probes) {
      const res = await rawGet(server.url, probe);
      const context = `${probe} -> ${res.status} ${res.body.slice(0, 80)}`;
      expect([context, res.status]).toEqual([context, 404]);
      expect(res.body).not.toContain('SECRET');
      expect(res.body).not.toContain('contentType');
      expect(res.body).not.toContain('RIFF-MEDIUM-WEBP');
    }
  } finally {
    await server.close();
    server.cleanup();
  }
});

test('/assets/ serves stored blobs with Content-Type, ETag, immutable caching and 304; nothing else', async () => {
  const server = await startTestServer();
  try {
    await server.deps.blobs.put('assets/abc/thumbnail.webp', Buffer.from('RIFF....WEBP'), {
      contentType: 'image/webp',
      cacheControl: 'public, max-age=31536000, immutable',
    });
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
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LINKPREVIEW_API_KEYS: 'cli-key',
      LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true',
      LINKPREVIEW_LOG_LEVEL: 'silent',
      LINKPREVIEW_DATA_DIR: '/tmp/linklens-start-test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      setTimeout(() => reject(new Error(`no start line: ${out}`)), 20_000);
    });
    expect(line).toMatch(/^linklens listening on http:\/\/127\.0\.0\.1:\d+ .*LINKPREVIEW_API_KEYS/);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
    const res = await fetch(`${url}/`, { method: 'POST', headers: { authorization: 'Bearer cli-key', 'content-type': 'text/plain' }, body: site.url('/') });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe('Local page');
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

test('an invalid configuration stops start-up with a message naming the variable', async () => {
  const { loadConfig, ConfigError } = await import('../../lib/config');
  expect(() => loadConfig({ LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(ConfigError);
  expect(() => loadConfig({ LINKPREVIEW_FETCH_TIMEOUT_MS: 'soon' })).toThrow(/LINKPREVIEW_FETCH_TIMEOUT_MS/);
  expect(() => loadConfig({ LINKPREVIEW_API_KEY_HASHES: 'nothex' })).toThrow(/LINKPREVIEW_API_KEY_HASHES/);
  expect(loadConfig({ LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true', LINKPREVIEW_API_KEYS: 'a,b', LINKPREVIEW_ALLOWED_PORTS: '8080' })).toMatchObject({
    allowPrivateNetworks: true,
    apiKeys: ['a', 'b'],
    allowedPorts: [8080],
  });
  expect(loadConfig({}).allowPrivateNetworks).toBe(false);
  // HOST and PORT are settings too: a port that is not one stops the local server before it listens.
  expect(loadConfig({ HOST: '0.0.0.0', PORT: '8080' })).toMatchObject({ host: '0.0.0.0', port: 8080 });
  await expect(startLocalServer({ env: { PORT: 'eighty' }, log: silentLog })).rejects.toThrow(/PORT must be a whole number/);
  await expect(startLocalServer({ env: { PORT: '70000' }, log: silentLog })).rejects.toThrow(ConfigError);
});
