/**
 * The package as a user installs it: `npm pack` (after the build), the tarball unpacked into
 * node_modules/linklens of an empty project where only @aws-sdk/client-lambda is resolvable beside
 * it (a symlink into this repository's node_modules), and a small strict TypeScript program there
 * that imports linklens/client and linklens/lambda. tsc (node16 resolution, through the package's
 * `exports` and its type declarations) must accept it, and the compiled program must preview links
 * against the compiled local server (dist/start-local.js, run from outside the repository), over
 * HTTP and through Lambda Invoke against a loopback stand-in of the Invoke API.
 *
 * The previews are chosen to reach every file the compiled server loads beside its modules or
 * packages: cld3's WebAssembly (a page without a declared language), the CPU pool's thread module
 * (the page's text versions), sharp (an image), the pdf.js worker script and pdf-parse (a PDF), the
 * ffprobe binary (a video), and openapi.yaml.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { assertConforms } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { png } from '../media/fixtures';
import { makePdf, mp4, proseDocument, serveBytes } from '../media-types/fixtures';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const KEY = 'pack-test-key-0123456789';

let work: string;
let project: string;
let site: FixtureServer;
let server: ChildProcess | undefined;
let serverUrl: string;
let lambdaStub: http.Server;
const invoked: string[] = [];
let packed: { filename: string; size: number; unpackedSize: number; files: { path: string }[] };

/** The environment of a child: this one's, without any LINKPREVIEW_ setting. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LINKPREVIEW_')) env[k] = v;
  return { ...env, ...extra };
}

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

/** The Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations) played by the local server: the payload is its request body, the result its answer. */
function startLambdaStub(): Promise<string> {
  lambdaStub = http.createServer(async (req, res) => {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"message":"no such route"}');
      return;
    }
    invoked.push(decodeURIComponent(m[1]));
    const answer = await fetch(`${serverUrl}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
    res.end(await answer.text());
  });
  return new Promise((resolve) => lambdaStub.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(lambdaStub.address() as AddressInfo).port}`)));
}

/** The user's program: strict TypeScript importing both entry points; prints what it got as JSON. */
const PROGRAM = `
import { LambdaClient } from '@aws-sdk/client-lambda';
import { createHttpClient, LinkPreviewClientError, type ErrorBody, type ImageSet, type LinkRecord, type LinkType } from 'linklens/client';
import { createLambdaClient } from 'linklens/lambda';

// The declarations are real types, not \`any\` (an unresolved import would silently be \`any\`).
type IsAny<T> = 0 extends 1 & T ? true : false;
const notAny: [IsAny<LinkRecord>, IsAny<LinkType>, IsAny<ImageSet>, IsAny<ErrorBody>, IsAny<LinkPreviewClientError>] = [false, false, false, false, false];

const [baseUrl, apiKey, lambdaEndpoint, ...links] = process.argv.slice(2);
const client = createHttpClient({ baseUrl, apiKey });
const lambda = createLambdaClient({
  functionName: 'linklens-preview',
  lambda: new LambdaClient({ endpoint: lambdaEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'AKIDLOOPBACK', secretAccessKey: 'loopback' } }),
});

const describe = (e: unknown) => (e instanceof LinkPreviewClientError ? { status: e.status, errorCode: e.errorCode } : { unexpected: String(e) });

const records: Record<string, LinkRecord> = {};
for (const link of links) records[link] = await client.preview(link);
const first: LinkRecord = records[links[0]];
const type: LinkType = first.type;
const large: ImageSet['large'] | undefined = first.image?.large;
// @ts-expect-error a Link record has no such field
void first.noSuchField;

const viaLambda: LinkRecord = await lambda.preview(links[0]);
const httpError = await client.preview('notaurl://x').then(() => 'no error', describe);
const lambdaError = await lambda.preview('').then(() => 'no error', describe);
const wrongKey = await createHttpClient({ baseUrl, apiKey: 'wrong' }).preview(links[0]).then(() => 'no error', describe);

console.log(JSON.stringify({ notAny, type, large, records, viaLambda, httpError, lambdaError, wrongKey }));
`;

let output: {
  notAny: boolean[];
  type: string;
  records: Record<string, Record<string, any>>;
  viaLambda: Record<string, any>;
  httpError: unknown;
  lambdaError: unknown;
  wrongKey: unknown;
};

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'linklens-pack-'));
  project = path.join(work, 'project');

  // The build (JavaScript and type declarations) when dist/ is missing or stale, then the tarball as
  // it is (--ignore-scripts: prepack would build everything again under tests that run dist/).
  await run(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root });
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--offline', '--pack-destination', work], { cwd: root });
  packed = JSON.parse(stdout)[0];

  // An empty project: the tarball in node_modules/linklens, @aws-sdk/client-lambda beside it, nothing else.
  const pkg = path.join(project, 'node_modules', 'linklens');
  mkdirSync(pkg, { recursive: true });
  await run('tar', ['-xzf', path.join(work, packed.filename), '-C', pkg, '--strip-components=1']);
  mkdirSync(path.join(project, 'node_modules', '@aws-sdk'));
  symlinkSync(path.join(root, 'node_modules', '@aws-sdk', 'client-lambda'), path.join(project, 'node_modules', '@aws-sdk', 'client-lambda'), 'dir');
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-linklens', private: true, type: 'module' }));
  writeFileSync(path.join(project, 'main.ts'), PROGRAM);
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        lib: ['ES2023'],
        strict: true,
        // Node's types only (the project has no @types of its own): the client needs nothing else.
        typeRoots: [path.join(root, 'node_modules', '@types')],
        types: ['node'],
        outDir: 'out',
        skipLibCheck: false,
      },
      files: ['main.ts'],
    }),
  );

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
  const lambdaUrl = await startLambdaStub();

  await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project });
  const links = ['page', 'image.png', 'report.pdf', 'clip.mp4'].map((n) => site.url(p(n)));
  const ran = await run(process.execPath, [path.join(project, 'out', 'main.js'), serverUrl, KEY, lambdaUrl, ...links], { cwd: project, env: cleanEnv({}) });
  output = JSON.parse(ran.stdout);
}, 180_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  lambdaStub?.close();
  await site?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the build, the bin, openapi.yaml and the README: no sources, tests or build stamp', () => {
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
      'dist/client/index.js',
      'dist/client/lambda.js',
      'dist/types/client/index.d.ts',
      'dist/types/client/lambda.d.ts',
      'dist/types/contract/link.d.ts',
    ]),
  );
  expect(files).not.toContain('dist/build-stamp.json');
  expect(files.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
});

test('the package install script runs in the installed package (no file it names is missing)', async () => {
  const installed = JSON.parse(readFileSync(path.join(project, 'node_modules/linklens/package.json'), 'utf8'));
  expect(installed.scripts.postinstall).toBeDefined();
  await expect(run('sh', ['-c', installed.scripts.postinstall], { cwd: path.join(project, 'node_modules/linklens') })).resolves.toBeDefined();
  expect(installed.dependencies.tsx).toBeUndefined();
  expect(installed.peerDependenciesMeta['@aws-sdk/client-lambda']).toEqual({ optional: true });
});

test('a strict program type-checks against the declarations (real types, not any) and gets typed records over HTTP', () => {
  expect(output.notAny).toEqual([false, false, false, false, false]);
  const [page, image, pdf, video] = ['page', 'image.png', 'report.pdf', 'clip.mp4'].map((n) => output.records[site.url(`/${n}`)]);
  for (const r of [page, image, pdf, video]) assertConforms(r);
  expect(output.type).toBe('PAGE');
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

test('errors come back as LinkPreviewClientError, the same class through both entry points', () => {
  expect(output.httpError).toEqual({ status: 400, errorCode: 'LINK_INVALID' });
  expect(output.wrongKey).toEqual({ status: 401, errorCode: 'UNAUTHORIZED' });
  expect(output.lambdaError).toEqual({ status: 400, errorCode: 'LINK_REQUIRED' });
});

test('linklens/lambda invokes the named function through the Invoke API and returns the record', () => {
  expect(invoked).toEqual(['linklens-preview', 'linklens-preview']);
  expect(output.viaLambda).toMatchObject({ ok: true, type: 'PAGE', title: 'Une page' });
});

test('the compiled server serves the OpenAPI document and stored assets from outside the repository', async () => {
  const doc = await fetch(`${serverUrl}/openapi.json`);
  expect(doc.status).toBe(200);
  expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\./);
  const image = output.records[site.url('/image.png')];
  const asset = await fetch(image.image.large.url);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/^image\//);
});
