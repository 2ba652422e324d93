/**
 * The page versions on AWS, as designed in the template: the synthesized distribution played by
 * the rehearsal's CloudFront (test/rehearsal/cloudfront.ts) over S3 on loopback, its second origin
 * the versions' origin handler (functions/version-origin.ts) run in-process. The URL rule end to
 * end: an address a record named answers 200 with the whole object from the first request on,
 * held while its job builds it; no error is kept at the edge; a stand-in is never kept; a built
 * version is kept and answers the same bytes later. The full stack, with the function hosted as
 * Lambda hosts it, is the deploy rehearsal's (test/cdk/rehearsal.test.ts).
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ApiKeys } from '../../cdk/constructs/api-keys';
import { LinkPreviewStack } from '../../cdk/link-preview-stack';
import { createVersionOrigin } from '../../functions/version-origin';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store';
import { pageMemoKey, rememberPage } from '../../lib/page/page-memo';
import { PAGE_ASSET_TYPES, pageVersionKeys, STAND_IN_CACHE, storeStandIns, VERSION_GRACE_MS } from '../../lib/page/page-versions';
import { IMMUTABLE_CACHE } from '../../lib/ports';
import { type Emulators, startEmulators } from '../adapters/aws/emulators';
import { rememberNamedVersions } from '../helpers/page-versions';
import { CloudFront } from '../rehearsal/cloudfront';

process.env.CDK_VALIDATION = 'false';
jest.setTimeout(60_000);

function tinyLayer(name: string): lambda.Code {
  const dir = mkdtempSync(path.join(tmpdir(), `linklens-layer-${name}-`));
  writeFileSync(path.join(dir, 'README'), name);
  return lambda.Code.fromAsset(dir);
}

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new LinkPreviewStack(app, 'Design', {
  env: { account: '123456789012', region: 'eu-west-1' },
  apiKeys: ApiKeys.fromHashes(['a'.repeat(64)]),
  layerCode: { ffmpeg: tinyLayer('ffmpeg'), sharp: tinyLayer('sharp'), chromium: tinyLayer('chromium') },
});
const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties?: any }> };
const [originFnId] = Object.entries(template.Resources).find(
  ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'linklens-version-origin',
)!;

let em: Emulators;
let blobs: S3BlobStore;
let cdn: CloudFront;
const invoked: string[] = [];
const CDN = 'https://d1.cloudfront.net';

beforeAll(async () => {
  em = await startEmulators('linklens-design');
  blobs = new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: CDN });
  const handler = createVersionOrigin(() => blobs);
  cdn = new CloudFront({
    template,
    s3: em.s3,
    bucketName: () => em.bucket,
    invoke: async (id, event) => {
      // Only the template's own versions' origin is ever called.
      expect(id).toBe(originFnId);
      invoked.push((event as { rawPath: string }).rawPath);
      return { ok: true, value: await handler(event as never) };
    },
  });
});
afterAll(() => em.close());

const named = (name: string, until: number) => rememberNamedVersions(blobs, name, until).then((n) => n.keys);

test('a version asked for while its job builds it: the second origin holds the request, answers 200 with the version, and the edge keeps it', async () => {
  const keys = await named('building', Date.now() + 20_000);
  const viewer = cdn.request(`/${keys.html}`);
  const html = '<!doctype html><p>built <img src="https://d1.cloudfront.net/assets/x/medium.webp"></p>';
  // The job stores it once the viewer's request has reached the second origin.
  while (!invoked.includes(`/${keys.html}`)) await new Promise((r) => setTimeout(r, 10));
  await blobs.put(keys.html, html, { contentType: PAGE_ASSET_TYPES.html, cacheControl: IMMUTABLE_CACHE });
  const first = await viewer;
  expect(first).toMatchObject({ status: 200, from: 'function', headers: { 'content-type': PAGE_ASSET_TYPES.html, 'cache-control': IMMUTABLE_CACHE } });
  expect(first.body.toString('utf8')).toBe(html);
  const later = await cdn.request(`/${keys.html}`);
  expect(later.from).toBe('cache');
  expect(later.body.equals(first.body)).toBe(true);
});

test('a version stored before anyone asks: S3 answers, the second origin is never called', async () => {
  const keys = await named('stored', Date.now() + 20_000);
  await blobs.put(keys.text, 'the text', { contentType: PAGE_ASSET_TYPES.text, cacheControl: IMMUTABLE_CACHE });
  const calls = invoked.length;
  expect(await cdn.request(`/${keys.text}`)).toMatchObject({ status: 200, from: 's3' });
  expect(invoked.length).toBe(calls);
});

test('no error is kept at the edge: an address no record named is a 404 each time until it exists; a missing image a 403 each time', async () => {
  const page = { url: 'https://example.com/later', contentType: 'text/html', bytes: Buffer.from('<p>later</p>') };
  const keys = pageVersionKeys(page);
  expect(await cdn.request(`/${keys.html}`)).toMatchObject({ status: 404, from: 'function', headers: { 'cache-control': 'no-store' } });
  expect((await cdn.request(`/${keys.html}`)).from).toBe('function'); // asked of the origin again, not the cache
  // The same for an image (not a version: S3 alone, no second origin).
  const image = `/assets/${'d'.repeat(64)}/medium.webp`;
  const calls = invoked.length;
  expect(await cdn.request(image)).toMatchObject({ status: 403, from: 's3' });
  await blobs.put(image.slice(1), Buffer.from('webp'), { contentType: 'image/webp', cacheControl: IMMUTABLE_CACHE });
  expect(await cdn.request(image)).toMatchObject({ status: 200, from: 's3' });
  expect(invoked.length).toBe(calls);
  // Named and built later: 200 at once.
  await rememberPage(blobs, pageMemoKey(page), { versionsUntil: Date.now() + 20_000 });
  await blobs.put(keys.html, '<p>now</p>', { contentType: PAGE_ASSET_TYPES.html, cacheControl: IMMUTABLE_CACHE });
  expect(await cdn.request(`/${keys.html}`)).toMatchObject({ status: 200, from: 's3' });
});

test('a version never built: its stand-in, 200 and never kept at the edge, so the version built over it later is what a viewer gets', async () => {
  const keys = await named('never', Date.now() - VERSION_GRACE_MS - 1);
  const first = await cdn.request(`/${keys.markdown}`);
  expect(first).toMatchObject({ status: 200, from: 'function', headers: { 'cache-control': STAND_IN_CACHE } });
  expect(first.body.length).toBe(0);
  // Stored in S3 now: the next request is S3's, and not from the cache.
  expect(await cdn.request(`/${keys.markdown}`)).toMatchObject({ status: 200, from: 's3', headers: { 'cache-control': STAND_IN_CACHE } });
  // A later preview's job builds it over the stand-in: the next viewer gets it.
  await blobs.put(keys.markdown, '# Built', { contentType: PAGE_ASSET_TYPES.markdown, cacheControl: IMMUTABLE_CACHE });
  const built = await cdn.request(`/${keys.markdown}`);
  expect(built.body.toString('utf8')).toBe('# Built');
  // storeStandIns never writes over a version that is there.
  await storeStandIns(blobs, keys.markdown.split('/')[1]);
  expect((await blobs.get(keys.markdown))?.toString('utf8')).toBe('# Built');
});
