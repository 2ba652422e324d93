/**
 * The SSRF guard as a caller sees it through POST / (issue items: internal DNS disclosed, the
 * metadata service one setting away). No socket leaves loopback: names are mapped by test
 * resolvers, and the Jest safety net refuses any other connection.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config';
import type { Resolver } from '../../lib/fetch/address-guard';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, recordingLog, type TestHandler } from '../helpers/service';

const ANSWERS: Record<string, string> = {
  'private.test': '10.0.0.5',
  'metadata.test': '169.254.169.254',
  'metadata6.test': 'fd00:ec2::254',
  'alibaba.test': '100.100.100.200',
};
const resolver: Resolver = async (host) => {
  if (host === 'public.test') return [{ address: '127.0.0.1', family: 4 }];
  const address = ANSWERS[host];
  if (address) return [{ address, family: address.includes(':') ? 6 : 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer({
    '/page': { body: '<html><head><title>Local page</title></head></html>' },
    '/to-metadata-name': { status: 302, headers: { location: 'http://metadata.test/latest/meta-data/' } },
    '/to-unknown-name': { status: 302, headers: { location: 'http://nowhere.test/latest/meta-data/' } },
    '/to-metadata': { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
  });
});
afterAll(() => site.close());

const post = (svc: TestHandler, link: string) => svc.post(JSON.stringify({ link }));
/** What a caller sees, with the names it asked for replaced (and the record's own id and time left out). */
const seen = (res: Awaited<ReturnType<typeof post>>, ...names: string[]) => {
  const { id: _id, updatedAt: _at, ...body } = JSON.parse(names.reduce((text, name) => text.split(name).join('NAME'), res.body));
  return { statusCode: res.statusCode, upstreamError: res.headers['x-linklens-upstream-error'], body };
};

describe('internal DNS is not disclosed', () => {
  let svc: TestHandler;
  const log = recordingLog();
  beforeAll(() => {
    // The production guard, with the fixture playing a public host (trusted in code).
    const fetch = createFetcher({
      allowPrivateNetworks: false,
      allowedPorts: [site.port],
      userAgent: 'linklens-test',
      maxRedirects: 10,
      trustedAddresses: ['127.0.0.1'],
      resolver,
      log,
    });
    svc = createTestHandler({ config: { allowPrivateNetworks: false, allowedPorts: [site.port] }, fetch, log });
  });
  afterAll(() => svc.cleanup());

  test.each(Object.keys(ANSWERS))('POST / {"link":"http://%s/"}: the same answer as an unknown name, and no address', async (host) => {
    const unknown = await post(svc, 'http://nowhere.test/');
    const forbidden = await post(svc, `http://${host}/`);
    expect(seen(unknown, 'nowhere.test')).toMatchObject({ statusCode: 200, upstreamError: 'DNS_FAILURE', body: { ok: false, status: 0 } });
    expect(seen(forbidden, host)).toEqual(seen(unknown, 'nowhere.test'));
    expect(forbidden.body).not.toContain(ANSWERS[host]);
    expect(JSON.stringify(forbidden.headers)).not.toContain(ANSWERS[host]);
    // The operator still sees it.
    expect(log.lines.some((l) => l.level === 'warn' && l.extra?.host === host && l.extra?.address === ANSWERS[host])).toBe(true);
  });

  test('through a redirect: the same answer as a redirect to an unknown name, and no address', async () => {
    const unknown = await post(svc, `http://public.test:${site.port}/to-unknown-name`);
    const forbidden = await post(svc, `http://public.test:${site.port}/to-metadata-name`);
    const a = seen(unknown, 'nowhere.test', 'to-unknown-name');
    const b = seen(forbidden, 'metadata.test', 'to-metadata-name');
    expect(a).toMatchObject({ statusCode: 200, upstreamError: 'DNS_FAILURE', body: { ok: false, status: 302, redirectionCount: 1 } });
    expect(b).toEqual(a);
    expect(forbidden.body).not.toContain('169.254.169.254');
  });

  test('a literal address is refused on its face (400 LINK_NOT_ALLOWED); the details name the URL, nothing DNS said', async () => {
    const res = await post(svc, `http://public.test:${site.port}/to-metadata`);
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ errorCode: 'LINK_NOT_ALLOWED', details: { url: 'http://169.254.169.254/latest/meta-data/', hop: 1 } });
    expect(Object.keys(res.json.details).sort()).toEqual(['hop', 'url']);
  });
});

describe('the metadata service is not one setting away', () => {
  const metadataLinks = [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://100.100.100.200/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
  ];

  test.each([
    ['LINKPREVIEW_ALLOW_PRIVATE_NETWORKS=true', { LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true' }],
    ['LINKPREVIEW_ALLOW_LOOPBACK=true', { LINKPREVIEW_ALLOW_LOOPBACK: 'true' }],
  ])('%s: local pages preview, metadata links are refused', async (_name, env) => {
    const fromEnv = loadConfig(env);
    const svc = createTestHandler({ config: { allowPrivateNetworks: fromEnv.allowPrivateNetworks, allowLoopback: fromEnv.allowLoopback }, resolver });
    try {
      expect((await post(svc, site.url('/page'))).json).toMatchObject({ ok: true, title: 'Local page' });
      for (const link of metadataLinks) {
        const res = await post(svc, link);
        expect({ link, statusCode: res.statusCode, errorCode: res.json.errorCode }).toEqual({ link, statusCode: 400, errorCode: 'LINK_NOT_ALLOWED' });
      }
      expect((await post(svc, site.url('/to-metadata'))).json.errorCode).toBe('LINK_NOT_ALLOWED');
      for (const host of ['metadata.test', 'metadata6.test', 'alibaba.test']) {
        const res = await post(svc, `http://${host}/latest/meta-data/`);
        expect({ host, upstreamError: res.headers['x-linklens-upstream-error'] }).toEqual({ host, upstreamError: 'DNS_FAILURE' });
      }
    } finally {
      svc.cleanup();
    }
  });

  test('LINKPREVIEW_ALLOW_LOOPBACK opens loopback alone: a private name is refused', async () => {
    const svc = createTestHandler({ config: { allowPrivateNetworks: false, allowLoopback: true }, resolver });
    try {
      expect((await post(svc, 'http://10.0.0.5/')).json.errorCode).toBe('LINK_NOT_ALLOWED');
      expect((await post(svc, 'http://private.test/')).headers['x-linklens-upstream-error']).toBe('DNS_FAILURE');
    } finally {
      svc.cleanup();
    }
  });

  test('LINKPREVIEW_ALLOW_LOOPBACK is read and validated like the other switches', () => {
    expect(loadConfig({}).allowLoopback).toBe(false);
    expect(loadConfig({ LINKPREVIEW_ALLOW_LOOPBACK: 'true' })).toMatchObject({ allowLoopback: true, allowPrivateNetworks: false });
    expect(() => loadConfig({ LINKPREVIEW_ALLOW_LOOPBACK: 'maybe' })).toThrow(ConfigError);
  });

  test('`npm start` warns while the guard is open, naming what is open', async () => {
    const root = path.resolve(__dirname, '../..');
    const child = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'functions/start-local.ts'], {
      cwd: root,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        LINKPREVIEW_API_KEYS: 'k',
        LINKPREVIEW_ALLOW_LOOPBACK: 'true',
        LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'false',
        LINKPREVIEW_LOG_LEVEL: 'info',
        LINKPREVIEW_SCREENSHOTS: 'off',
        LINKPREVIEW_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'linklens-warn-')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const warning = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d) => {
          err += d;
          for (const line of err.split('\n')) {
            try {
              const entry = JSON.parse(line);
              if (entry.level === 'WARN') resolve(entry);
            } catch {
              /* a partial line */
            }
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
        setTimeout(() => reject(new Error(`no warning: ${err}`)), 60_000).unref();
      });
      expect(warning.message).toMatch(/LINKPREVIEW_ALLOW_LOOPBACK=true.*127\.0\.0\.0\/8.*any port.*metadata.*stay closed/);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }, 90_000); // tsx compiles the whole server on a busy machine
});
