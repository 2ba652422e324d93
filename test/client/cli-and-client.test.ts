import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { main, summary } from '../../functions/cli';
import { createHttpClient, LinkPreviewClientError } from '../../lib/client/index';
import { createLambdaClient, type LambdaClientOptions } from '../../lib/client/lambda';
import type { LinkRecord } from '../../lib/contract/link';
import { assertConforms } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, startTestServer, TEST_KEY } from '../helpers/service';
import { png } from '../media/fixtures';

const root = path.resolve(__dirname, '../..');
let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer({
    '/post': { body: html('<title>CLI page</title><meta name="description" content="Seen by the CLI">', '', 'fr') },
    '/article': {
      body: html(
        '<title>CLI article</title>',
        `<article><h1>CLI article</h1><p>${'Words about rivers and the stones they carry. '.repeat(40)}</p><p><img src="/river.png" alt="River"></p></article>`,
        'en',
      ),
    },
  });
  // Slow to come (the versions are built after the record, with it): a CLI that printed the record
  // and returned at once would leave the version files to a build still waiting for it.
  const river = await png(320, 200);
  site.route('/river.png', (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(river);
    }, 500);
  });
});
afterAll(() => site.close());

describe('the CLI (npx linklens <url>)', () => {
  const env = { LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true', LINKPREVIEW_DATA_DIR: '/tmp/linklens-cli-test' };

  test('the bin entry prints the Link record as JSON', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(root, 'bin/linklens.mjs'), site.url('/post')], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    const record = JSON.parse(stdout);
    assertConforms(record);
    expect(record).toMatchObject({ ok: true, type: 'PAGE', title: 'CLI page', description: 'Seen by the CLI', language: 'fr' });
    expect(stderr).toContain(`previewing ${site.url('/post')}`);
  }, 30_000);

  test('--pretty prints a short summary', async () => {
    let out = '';
    const code = await main([site.url('/post'), '--pretty'], {
      out: (s) => {
        out += s;
      },
      err: () => {},
      env,
    });
    expect(code).toBe(0);
    expect(out).toContain('OK  PAGE  HTTP 200');
    expect(out).toContain('title:       CLI page');
  });

  test("--pretty prints the size of the large image beside its URL, not the original's", () => {
    const asset = (w: number, h: number, name: string) => ({ width: w, height: h, url: `file:///data/img/${name}.webp` });
    const record = {
      ok: true,
      type: 'PAGE',
      status: 200,
      url: 'https://example.test/a',
      title: 'A',
      image: {
        thumbnail: asset(200, 113, 'thumbnail'),
        medium: asset(600, 338, 'medium'),
        large: asset(1200, 675, 'large'),
        original: asset(1600, 900, 'original'),
      },
    } as unknown as LinkRecord;
    const out = summary(record);
    expect(out).toContain('image:       1200x675 file:///data/img/large.webp');
    expect(out).not.toContain('1600x900');
  });

  test('the page versions the record names are files by the time it returns (built after the record, in its process, which exits then)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-cli-versions-'));
    try {
      let out = '';
      const code = await main([site.url('/article')], {
        out: (s) => {
          out += s;
        },
        err: () => {},
        env: { ...env, LINKPREVIEW_DATA_DIR: dataDir },
      });
      expect(code).toBe(0);
      const page = JSON.parse(out).page;
      for (const u of [page.htmlUrl, page.markdownUrl, page.rawTextUrl]) {
        expect(u).toMatch(/^file:\/\//);
        expect(existsSync(fileURLToPath(u))).toBe(true);
      }
      // With the article's image in it, on the same store.
      expect(readFileSync(fileURLToPath(page.htmlUrl), 'utf8')).toMatch(/<img [^>]*src="file:\/\/[^"]+\/assets\/[0-9a-f]{64}\/medium\.webp"/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('invalid input exits non-zero with the error body', async () => {
    let out = '';
    const code = await main(['ftp://example.com/'], {
      out: (s) => {
        out += s;
      },
      err: () => {},
      env,
    });
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({ ok: false, status: 400, errorCode: 'LINK_INVALID' });
  });

  test('the guard stays closed unless opened', async () => {
    let out = '';
    const code = await main([site.url('/post')], {
      out: (s) => {
        out += s;
      },
      err: () => {},
      env: {},
    });
    expect(code).toBe(1);
    expect(JSON.parse(out).errorCode).toBe('LINK_NOT_ALLOWED');
  });

  test("batch: every link of a file, as NDJSON in the file's order, a refused link as its error body (exit 1), and a progress bar", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'linklens-cli-batch-'));
    try {
      const file = path.join(dir, 'links.txt');
      writeFileSync(file, `# three links\n${site.url('/post')}\n\nftp://example.com/\n${site.url('/article')}\n`);
      let out = '';
      let err = '';
      const code = await main(['batch', file, '--concurrency', '2'], {
        out: (s) => {
          out += s;
        },
        err: (s) => {
          err += s;
        },
        env,
      });
      expect(code).toBe(1);
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatchObject({ ok: true, title: 'CLI page' });
      expect(lines[1]).toMatchObject({ ok: false, status: 400, errorCode: 'LINK_INVALID' });
      expect(lines[2]).toMatchObject({ ok: true, title: 'CLI article' });
      assertConforms(lines[0]);
      expect(err).toContain('3/3 (1 refused)');
      expect(err).toMatch(/\[#{30}\]/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test('batch: the bin entry reads the links from stdin; a bad --concurrency is a usage error', async () => {
    const child = execFile(process.execPath, [path.join(root, 'bin/linklens.mjs'), 'batch', '-'], { cwd: root, env: { ...process.env, ...env } });
    child.stdin?.end(`${site.url('/post')}\n`);
    const stdout = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout?.on('data', (d) => {
        text += d;
      });
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
    });
    expect(JSON.parse(stdout.trim())).toMatchObject({ ok: true, title: 'CLI page' });
    let err = '';
    const code = await main(['batch', 'links.txt', '--concurrency', 'lots'], { out: () => {}, err: (s) => (err += s), env });
    expect(code).toBe(2);
    expect(err).toContain('usage: linklens batch');
  }, 30_000);

  test('usage errors exit 2', async () => {
    let err = '';
    expect(
      await main([], {
        out: () => {},
        err: (s) => {
          err += s;
        },
        env,
      }),
    ).toBe(2);
    expect(err).toContain('usage: linklens <url>');
  });

  test("the bin entry loads only what a link's type needs: no sharp for a text page, sharp for an image; never the browser or pdf.js", async () => {
    const image = await png(300, 200);
    site.route('/photo.png', { headers: { 'content-type': 'image/png' }, body: image });
    const loaded = async (link: string) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-cli-loads-')); // no memo: the image is rendered
      try {
        const { stderr } = await promisify(execFile)(
          process.execPath,
          ['--require', path.join(root, 'test/helpers/loaded-packages.cjs'), path.join(root, 'bin/linklens.mjs'), link],
          { cwd: root, env: { ...process.env, ...env, LINKPREVIEW_DATA_DIR: dataDir, LINKPREVIEW_SCREENSHOTS: 'off', LINKPREVIEW_RENDER: 'off' } },
        );
        const specifiers = [...stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]);
        return new Set(specifiers.map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0])));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const heavy = ['sharp', 'pdf-parse', 'pdfjs-dist', '@napi-rs/canvas', 'playwright-core', '@sparticuz/chromium', '@aws-sdk/client-s3'];
    const page = await loaded(site.url('/post'));
    expect(page.has('cld3-asm')).toBe(true); // the hook saw the page's language detection load
    expect(heavy.filter((p) => page.has(p))).toEqual([]);
    const photo = await loaded(site.url('/photo.png'));
    expect(photo.has('sharp')).toBe(true);
    expect(heavy.filter((p) => p !== 'sharp' && photo.has(p))).toEqual([]);
  }, 60_000);
});

describe('the typed client', () => {
  test('acceptLanguage: its valid entries are sent, a malformed value is dropped, never a fetch error', async () => {
    const sent: (string | null)[] = [];
    const recording: typeof fetch = async (_url, init) => {
      sent.push(new Headers(init?.headers).get('accept-language'));
      return new Response(JSON.stringify({ ok: true }), { headers: { 'content-type': 'application/json' } });
    };
    const client = createHttpClient({ baseUrl: 'http://linklens.test', apiKey: TEST_KEY, fetch: recording });
    for (const acceptLanguage of ['fr\r\nX-Injected: 1, de;q=0.5', '\u2028', 'español', 'nb']) await client.preview('https://example.com/', { acceptLanguage });
    expect(sent).toEqual(['de;q=0.5', null, null, 'nb']);
  });

  test('over HTTP against the local server: typed records and typed errors', async () => {
    const server = await startTestServer();
    try {
      const client = createHttpClient({ baseUrl: server.url, apiKey: TEST_KEY });
      const record = await client.preview(site.url('/post'), { acceptLanguage: 'fr' });
      expect(record.title).toBe('CLI page');
      expect(record.ok).toBe(true);
      const invalid = await client.preview('notaurl://x').catch((e) => e);
      expect(invalid).toBeInstanceOf(LinkPreviewClientError);
      expect(invalid).toMatchObject({ status: 400, errorCode: 'LINK_INVALID' });
      expect(invalid.requestId).toMatch(/^[0-9a-f-]{36}$/);
      const wrongKey = await createHttpClient({ baseUrl: server.url, apiKey: 'nope' })
        .preview(site.url('/post'))
        .catch((e) => e);
      expect(wrongKey).toMatchObject({ status: 401, errorCode: 'UNAUTHORIZED' });
    } finally {
      await server.close();
      server.cleanup();
    }
    const down = await createHttpClient({ baseUrl: server.url, apiKey: TEST_KEY, timeoutMs: 1000 })
      .preview(site.url('/post'))
      .catch((e) => e);
    expect(down).toMatchObject({ status: 0, errorCode: 'TRANSPORT_ERROR' });
  });

  test('through Lambda Invoke: the payload is the body, the result the record', async () => {
    const svc = createTestHandler();
    const sent: unknown[] = [];
    // A stand-in for LambdaClient.send that runs the real handler the way Lambda would (JSON in, JSON out).
    const lambda = {
      send: async (cmd: { input: { FunctionName?: string; Payload?: Uint8Array } }) => {
        sent.push(cmd.input.FunctionName);
        const payload = JSON.parse(Buffer.from(cmd.input.Payload!).toString());
        const result = await svc.invoke(payload);
        return { StatusCode: 200, Payload: Buffer.from(JSON.stringify(result)) };
      },
    };
    const client = createLambdaClient({ functionName: 'linklens-preview', lambda: lambda as never });
    // The SDK's own LambdaClient fits the option as it is, though the client's types do not name the SDK.
    const fits: LambdaClient extends NonNullable<LambdaClientOptions['lambda']> ? true : false = true;
    expect(fits).toBe(true);
    const record = await client.preview(site.url('/post'));
    expect(record).toMatchObject({ ok: true, title: 'CLI page' });
    expect(sent).toEqual(['linklens-preview']);
    const err = await client.preview('').catch((e) => e);
    expect(err).toMatchObject({ status: 400, errorCode: 'LINK_REQUIRED' });
    const crashed = createLambdaClient({
      functionName: 'f',
      lambda: { send: async () => ({ FunctionError: 'Unhandled', Payload: Buffer.from('{"errorMessage":"boom"}') }) } as never,
    });
    expect(await crashed.preview('https://example.com').catch((e) => e)).toMatchObject({ status: 500, errorCode: 'FUNCTION_ERROR' });
    svc.cleanup();
  });
});
