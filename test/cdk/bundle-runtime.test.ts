/**
 * The built preview bundle, run as Lambda would run it (a separate Node process importing the
 * ESM file, with openapi.yaml copied beside it as the CDK bundling does): it serves
 * GET /openapi.json, and language detection (cld3-asm's WebAssembly loader, which esbuild warns
 * about) works inside the bundle.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { previewEsbuildOptions, PROJECT_ROOT } from '../../cdk/constructs/bundling';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server';

let site: FixtureServer;
let dir: string;
beforeAll(async () => {
  site = await startFixtureServer({
    '/ja': { body: '<html><head><meta charset="utf-8"><title>日本語の記事</title></head><body><p>東京都は二十日、新しい交通計画を発表した。市民の生活に大きな影響を与えると見られている。専門家は慎重な検討が必要だと指摘している。</p></body></html>' },
  });
  // Inside the project, so the bundle finds the AWS SDK in node_modules as it finds it in the Lambda runtime.
  mkdirSync(path.join(PROJECT_ROOT, 'cdk.out'), { recursive: true });
  dir = mkdtempSync(path.join(PROJECT_ROOT, 'cdk.out', 'bundle-test-'));
  await esbuild.build(previewEsbuildOptions(path.join(dir, 'index.mjs')));
  copyFileSync(path.join(PROJECT_ROOT, 'openapi.yaml'), path.join(dir, 'openapi.yaml'));
}, 60_000);
afterAll(async () => {
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runInBundle(event: unknown): Promise<any> {
  const script = path.join(dir, 'run.mjs');
  writeFileSync(script, `const { handler } = await import('./index.mjs');\nconst out = await handler(${JSON.stringify(event)}, { awsRequestId: 'bundle-1', getRemainingTimeInMillis: () => 20000 });\nprocess.stdout.write(JSON.stringify(out));\n`);
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    cwd: dir,
    env: {
      PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x',
      LINKPREVIEW_BUCKET: 'bucket', LINKPREVIEW_JOB_QUEUE_URL: 'http://127.0.0.1:9/000000000000/jobs', AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      LINKPREVIEW_PUBLIC_URL: 'https://cdn.example', LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true', LINKPREVIEW_JOB_DEADLINE_MS: '1500', LINKPREVIEW_DEADLINE_MS: '1000',
      LINKPREVIEW_LOG_LEVEL: 'silent', POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_TRACE_ENABLED: 'false', POWERTOOLS_METRICS_DISABLED: 'true',
    },
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}

test('GET /openapi.json is served from the bundle', async () => {
  const out = await runInBundle({ version: '2.0', rawPath: '/openapi.json', headers: {}, requestContext: { http: { method: 'GET', path: '/openapi.json' }, requestId: 'r1' }, isBase64Encoded: false });
  expect(out.statusCode).toBe(200);
  expect(JSON.parse(out.body).info.version).toBe('1.0.0');
}, 40_000);

test('language detection (cld3) works inside the bundle', async () => {
  const record = await runInBundle({ link: site.url('/ja') });
  expect(record).toMatchObject({ ok: true, title: '日本語の記事', language: 'ja' });
}, 40_000);
