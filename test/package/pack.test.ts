/**
 * The repository's package (the CLI and the local server; the client is a package of its own,
 * test/package/client.test.ts) as a user installs it: `npm pack` (after the build), the tarball
 * unpacked into node_modules/linklens of an empty project, and the compiled local server
 * (dist/start-local.js) run from there, outside the repository, previewing links over HTTP.
 *
 * The previews are chosen to reach every file the compiled server loads beside its modules or
 * packages: cld3's WebAssembly (a page without a declared language), the CPU pool's thread module
 * (the page's text versions), sharp (an image), the pdf.js worker script and pdf-parse (a PDF), the
 * ffprobe binary (a video), and openapi.yaml.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertConforms } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { cleanEnv, npmPack, type Packed, root, run } from '../helpers/packing';
import { png } from '../media/fixtures';
import { makePdf, mp4, proseDocument, serveBytes } from '../media-types/fixtures';

const KEY = 'pack-test-key-0123456789';

let work: string;
let project: string;
let site: FixtureServer;
let server: ChildProcess | undefined;
let serverUrl: string;
let packed: Packed;
const records: Record<string, Record<string, any>> = {};

/** The compiled local server, started from the temporary project (not the repository). */
function startCompiledServer(cwd: string): Promise<string> {
  const child = spawn(process.execPath, [path.join(root, 'dist/start-local.js')], {
    cwd,
    env: cleanEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      LINKPREVIEW_API_KEYS: KEY,
      LINKPREVIEW_ALLOW_LOOPBACK: 'true',
      LINKPREVIEW_SCREENSHOTS: 'off',
      LINKPREVIEW_DATA_DIR: path.join(cwd, 'data'),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the compiled server exited (${code}):\n${out}`)));
  });
}

/** POST / of the compiled server: the Link record (or error body) as JSON. */
async function preview(link: string): Promise<Record<string, any>> {
  const res = await fetch(`${serverUrl}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  });
  return (await res.json()) as Record<string, any>;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'linklens-pack-'));
  project = path.join(work, 'project');

  // The server's build when dist/ is missing or stale, then the tarball as it is.
  await run(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root });
  packed = await npmPack(root, work);

  // An empty project: the tarball in node_modules/linklens, nothing else.
  const pkg = path.join(project, 'node_modules', 'linklens');
  mkdirSync(pkg, { recursive: true });
  await run('tar', ['-xzf', packed.tarball, '-C', pkg, '--strip-components=1']);

  const p = (name: string) => `/${name}`;
  site = await startFixtureServer({
    // No declared language: cld3 (WebAssembly loaded beside its package) tells it.
    [p('page')]: {
      body: html(
        '<title>Une page</title>',
        `<p>${'Le service lit la page entière et en donne un résumé clair pour chaque lien partagé dans la conversation. '.repeat(6)}</p>`,
      ),
    },
    [p('image.png')]: serveBytes(await png(640, 360), 'image/png'),
    [p('report.pdf')]: serveBytes(makePdf({ pages: proseDocument(2), title: 'Packed Report' }), 'application/pdf'),
    [p('clip.mp4')]: serveBytes(await mp4({ seconds: 2 }), 'video/mp4'),
  });
  serverUrl = await startCompiledServer(project);
  for (const n of ['page', 'image.png', 'report.pdf', 'clip.mp4']) records[n] = await preview(site.url(p(n)));
}, 180_000);

afterAll(async () => {
  // A stopping server makes the page content it parked and finishes its writes (up to 5 s): its data dir goes once it has exited.
  const exited = server && server.exitCode === null ? new Promise((resolve) => server?.once('exit', resolve)) : undefined;
  server?.kill('SIGTERM');
  await Promise.all([exited, site?.close()]);
  if (work) rmSync(work, { recursive: true, force: true });
}, 30_000);

test("the tarball holds the server's build, the bin, openapi.yaml and the README: no sources, tests, build stamp or client", () => {
  const files = packed.files.map((f) => f.path).sort();
  for (const f of files) expect(f).toMatch(/^(dist\/|bin\/linklens\.mjs$|openapi\.yaml$|package\.json$|README\.md$|LICENSE$)/);
  expect(files).toEqual(
    expect.arrayContaining([
      'LICENSE',
      'bin/linklens.mjs',
      'dist/cli.js',
      'dist/start-local.js',
      'dist/pdf-worker.cjs',
      'dist/openapi.yaml',
      'dist/package.json',
    ]),
  );
  expect(files).not.toContain('dist/build-stamp.json');
  // The client is @linklens/client, a package of its own (dist/packages/client).
  expect(files.filter((f) => /^dist\/(packages|client|types)\//.test(f))).toEqual([]);
  expect(files.filter((f) => /\.ts$/.test(f))).toEqual([]);
});

test('the package install script runs in the installed package (no file it names is missing); it exports no client', async () => {
  const installed = JSON.parse(readFileSync(path.join(project, 'node_modules/linklens/package.json'), 'utf8'));
  expect(installed.scripts.postinstall).toBeDefined();
  await expect(run('sh', ['-c', installed.scripts.postinstall], { cwd: path.join(project, 'node_modules/linklens') })).resolves.toBeDefined();
  expect(installed.dependencies.tsx).toBeUndefined();
  expect(installed.bin).toEqual({ linklens: 'bin/linklens.mjs' });
  expect(installed.exports).toEqual({ './package.json': './package.json' });
  expect(installed.peerDependencies).toBeUndefined();
});

test('the compiled server previews a page, an image, a PDF and a video from outside the repository', () => {
  const { page, 'image.png': image, 'report.pdf': pdf, 'clip.mp4': video } = records;
  for (const r of [page, image, pdf, video]) assertConforms(r);
  expect(page).toMatchObject({ ok: true, type: 'PAGE', title: 'Une page', language: 'fr' });
  // Written by a thread of the CPU pool (dist/cpu-worker.mjs).
  expect(page.page).toMatchObject({
    htmlUrl: expect.stringMatching(/page\.html$/),
    markdownUrl: expect.stringMatching(/page\.md$/),
    rawTextUrl: expect.stringMatching(/page\.txt$/),
  });
  expect(image).toMatchObject({ ok: true, type: 'IMAGE', image: { large: { width: expect.any(Number) } } });
  expect(pdf).toMatchObject({ ok: true, type: 'DOCUMENT', document: { title: 'Packed Report', pageCount: 2, language: 'en' } });
  expect(video).toMatchObject({ ok: true, type: 'VIDEO', video: { videoCodec: 'h264', width: 320, height: 240 } });
});

test('the compiled server serves the OpenAPI document and stored assets from outside the repository', async () => {
  const doc = await fetch(`${serverUrl}/openapi.json`);
  expect(doc.status).toBe(200);
  expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\./);
  const asset = await fetch(records['image.png'].image.large.url);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/^image\//);
});
