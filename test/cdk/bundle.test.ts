/**
 * The bundles as the stack builds them: the preview bundle must load without sharp (only the
 * worker has the layer); the worker bundle carries the CPU pool's thread module.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import {
  BROWSER_WORKER_BUNDLE,
  buildFunctionBundle,
  esbuildOptions,
  previewEsbuildOptions,
  RUNTIME_PROVIDED,
  VERSION_ORIGIN_BUNDLE,
  WORKER_BUNDLE,
} from '../../cdk/constructs/bundling';

const run = promisify(execFile);

test('the preview bundle has the AWS adapters only: no sharp, no local job runner, and the AWS SDK left to the runtime', async () => {
  const out = await esbuild.build({ ...previewEsbuildOptions('/tmp/linklens-preview-check.mjs'), write: false });
  const code = out.outputFiles[0].text;
  expect(code).not.toMatch(/from"sharp"/);
  expect(code).toMatch(/from"@aws-sdk\/client-sqs"/);
  expect(code).not.toContain('LINKLENS_BUNDLE_AWS_ONLY');
  expect(code).not.toContain('cpu-worker'); // no job code, so no CPU pool
  expect(out.outputFiles[0].contents.length).toBeLessThan(4 * 1024 * 1024);
});

test("the key digests of a parameter or a secret: Powertools parameters is inside the bundle, the SSM and Secrets Manager clients are the runtime's", async () => {
  const out = await esbuild.build({ ...previewEsbuildOptions('/tmp/linklens-preview-check.mjs'), write: false, metafile: true });
  const code = out.outputFiles[0].text;
  const inputs = Object.keys(out.metafile!.inputs);
  for (const file of ['parameters/lib/esm/ssm/SSMProvider.js', 'parameters/lib/esm/secrets/SecretsProvider.js', 'parameters/lib/esm/base/BaseProvider.js']) {
    expect(inputs.some((i) => i.endsWith(`@aws-lambda-powertools/${file}`))).toBe(true);
  }
  expect(code).not.toMatch(/from"@aws-lambda-powertools\/parameters/);
  expect(code).toMatch(/from"@aws-sdk\/client-ssm"/);
  expect(code).toMatch(/from"@aws-sdk\/client-secrets-manager"/);
  expect(RUNTIME_PROVIDED).toEqual(['@aws-sdk/*']);
  expect(inputs.some((i) => i.includes('node_modules/@aws-sdk/'))).toBe(false);
});

test("the page versions' origin is small and self-contained: no job code, no DOM, no image library; S3 from the runtime, and its handler loads", async () => {
  const out = await esbuild.build({ ...esbuildOptions(VERSION_ORIGIN_BUNDLE, '/tmp/linklens-version-origin-check.mjs'), write: false, metafile: true });
  const packages = new Set(Object.keys(out.metafile!.inputs).flatMap((i) => /node_modules\/((@[^/]+\/)?[^/]+)/.exec(i)?.[1] ?? []));
  expect([...packages]).toEqual(['valibot']); // the settings' names (lib/core-settings.ts)
  expect(Object.keys(out.metafile!.inputs).filter((i) => /lib\/(jobs\/registry|page\/page-content|media|browser)/.test(i))).toEqual([]);
  expect(out.outputFiles[0].text).toMatch(/from"@aws-sdk\/client-s3"/);
  expect(out.outputFiles[0].contents.length).toBeLessThan(200 * 1024);
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-version-origin-'));
  try {
    const built = buildFunctionBundle(VERSION_ORIGIN_BUNDLE, dir);
    expect(built.packages).toEqual([]);
    // Loaded as the runtime loads it, the SDK beside it (this project's, as the runtime provides one).
    symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
    writeFileSync(path.join(dir, 'load.mjs'), `import('./index.mjs').then((m) => process.stdout.write(typeof m.handler))`);
    const { stdout } = await run(process.execPath, [path.join(dir, 'load.mjs')], { cwd: dir });
    expect(stdout).toBe('function');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("the image placeholders' encoder (blurhash) is inside both workers' bundles (the image job runs in each), not a package beside them", async () => {
  for (const spec of [WORKER_BUNDLE, BROWSER_WORKER_BUNDLE]) {
    const out = await esbuild.build({ ...esbuildOptions(spec, '/tmp/linklens-worker-check.mjs'), write: false, metafile: true });
    expect(Object.keys(out.metafile!.inputs).some((i) => i.includes('node_modules/blurhash/'))).toBe(true);
    expect(out.outputFiles[0].text).not.toMatch(/from"blurhash"|require\("blurhash"\)/);
  }
}, 60_000);

test('the worker bundle ships the CPU pool: cpu-worker.mjs beside index.mjs, self-contained, and a pool thread started from the bundle loads it and runs its tasks', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-worker-bundle-'));
  try {
    buildFunctionBundle(WORKER_BUNDLE, dir);
    const index = readFileSync(path.join(dir, 'index.mjs'), 'utf8');
    const thread = readFileSync(path.join(dir, 'cpu-worker.mjs'), 'utf8');
    // index.mjs loads piscina from the shipped package (it starts threads with its own worker.js).
    expect(index).toMatch(/from"piscina"/);
    expect(existsSync(path.join(dir, 'node_modules/piscina/dist/worker.js'))).toBe(true);
    // The thread module imports nothing but Node's own modules.
    const specifiers = [...thread.matchAll(/(?:from|import\()\s*"([^"]+)"/g)].map((m) => m[1]).filter((s) => !s.startsWith(')'));
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual([]);
    // A pool as the bundle starts it (piscina resolved from the bundle's node_modules, nothing above /tmp), on the built thread module.
    const check = path.join(dir, 'pool-check.mjs');
    writeFileSync(
      check,
      [
        "import { Piscina } from 'piscina';",
        "const pool = new Piscina({ filename: new URL('./cpu-worker.mjs', import.meta.url).pathname, minThreads: 1, maxThreads: 1 });",
        "const html = '<html lang=\"en\"><head><title>T</title></head><body><article><h1>T</h1><p>' + 'word '.repeat(300) + '</p><img src=\"a.png\"></article></body></html>';",
        "const read = await pool.run({ url: 'https://x.example/', bytesBase64: Buffer.from(html).toString('base64') }, { name: 'readPageContent' });",
        "const versions = await pool.run({ content: read.images.content, hosted: {} }, { name: 'writePageVersions' });",
        'process.stdout.write(JSON.stringify({ words: read.words, urls: read.images.urls, markdown: versions.markdown.slice(0, 4) }));',
        'await pool.destroy();',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [check], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ words: 301, urls: ['https://x.example/a.png'], markdown: '# T\n' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
