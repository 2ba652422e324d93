/**
 * The page versions' origin on AWS (functions/version-origin.ts), against S3 on loopback (s3rver):
 * what CloudFront's origin group asks when S3 had no object for a version's address. A version a
 * record named is held until its job stores it and answered as S3 serves it; past its job's
 * deadline, its stand-in; an address no record named is a 404 no cache keeps.
 */

import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { createVersionOrigin } from '../../../functions/version-origin';
import { S3BlobStore } from '../../../lib/adapters/aws/s3-blob-store';
import { versionsNamed } from '../../../lib/page/page-memo';
import { PAGE_ASSET_TYPES, VERSION_GRACE_MS } from '../../../lib/page/page-versions';
import { IMMUTABLE_CACHE } from '../../../lib/ports';
import { rememberNamedVersions } from '../../helpers/page-versions';
import { type Emulators, startEmulators } from './emulators';

jest.setTimeout(30_000);

let em: Emulators;
let blobs: S3BlobStore;
beforeAll(async () => {
  em = await startEmulators('linklens-versions');
  blobs = new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: 'https://d1.cloudfront.net' });
});
afterAll(() => em.close());

const origin = () => createVersionOrigin(() => blobs);

/** A Lambda function URL event (payload 2.0) as CloudFront's request through OAC makes it. */
function event(path: string, method = 'GET'): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.eu-west-1.on.aws' },
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc',
      domainName: 'abc.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '130.176.0.1', userAgent: 'Amazon CloudFront' },
      requestId: 'r1',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: Date.now(),
    },
  };
}

const named = (name: string, until: number) => rememberNamedVersions(blobs, name, until);

test('a version asked for before its job stored it: held until it is, then answered as S3 serves it; HEAD too', async () => {
  const { keys } = await named('held', Date.now() + 20_000);
  const heads = jest.spyOn(blobs, 'has');
  const get = origin()(event(`/${keys.html}`));
  const head = origin()(event(`/${keys.html}`, 'HEAD'));
  // Both look at S3 (the object, then the memo) before the job stores the version.
  while (heads.mock.calls.filter(([k]) => k === keys.html).length < 4) await new Promise((r) => setTimeout(r, 10));
  heads.mockRestore();
  await blobs.put(keys.html, '<!doctype html><p>built</p>', { contentType: PAGE_ASSET_TYPES.html, cacheControl: IMMUTABLE_CACHE });
  const answer = (await get) as { statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded: boolean };
  expect(answer.statusCode).toBe(200);
  expect(answer.headers).toMatchObject({
    'content-type': PAGE_ASSET_TYPES.html,
    'cache-control': IMMUTABLE_CACHE,
    etag: expect.stringMatching(/^"[0-9a-f]+"$/),
  });
  expect(Buffer.from(answer.body, 'base64').toString('utf8')).toBe('<!doctype html><p>built</p>');
  const h = (await head) as { statusCode: number; body: string };
  expect(h).toMatchObject({ statusCode: 200, body: '' });
});

test("a version whose job is past its deadline and the grace: its stand-in, stored in S3 (the next request is S3's), served no-cache; the memo forgets it", async () => {
  const { keys, digest } = await named('lost', Date.now() - VERSION_GRACE_MS - 1);
  const answer = (await origin()(event(`/${keys.markdown}`))) as { statusCode: number; headers: Record<string, string>; body: string };
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['cache-control']).toBe('no-cache');
  expect(Buffer.from(answer.body, 'base64').length).toBe(0);
  for (const key of Object.values(keys)) expect((await blobs.head(key))?.metadata).toEqual({ versions: 'stand-in' });
  expect(await versionsNamed(blobs, digest)).toBeUndefined();
});

test('an address no record named, or not a version: a 404 no cache keeps; only GET and HEAD', async () => {
  for (const path of [`/assets/${'c'.repeat(64)}/page.html`, `/assets/${'c'.repeat(64)}/medium.webp`, '/jobs/page/x.json', '/assets/%zz/page.html']) {
    const answer = (await origin()(event(path))) as { statusCode: number; headers: Record<string, string> };
    expect({ path, status: answer.statusCode, cache: answer.headers['cache-control'] }).toEqual({ path, status: 404, cache: 'no-store' });
  }
  expect(((await origin()(event('/assets/x/page.html', 'POST'))) as { statusCode: number }).statusCode).toBe(405);
});
