/**
 * The page versions' origin on AWS: the second origin of the CloudFront distribution's
 * `assets/*\/page.*` behaviour (cdk/constructs/asset-store.ts), a Lambda function URL reached
 * through Origin Access Control only when S3, the first origin, answers 403 or 404: a viewer asked
 * for a version a record named before its job stored it. It holds the request until the version
 * is stored and answers it as S3 would (lib/page/page-versions.ts `awaitVersion`: the page memo
 * says a record named it and until when its job runs; past that, the stand-in), so an address in
 * a record never answers 404. An address no record named is a 404 that CloudFront does not keep
 * (`no-store`, and the distribution caches no error).
 *
 * No configuration beyond the bucket (LINKPREVIEW_BUCKET): it reads and writes the page memos
 * (`jobs/page/`) and the versions (`assets/`), nothing else.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { S3BlobStore } from '../lib/adapters/aws/s3-blob-store.js';
import { VERSION_ORIGIN } from '../lib/asset-metadata.js';
import { ENV } from '../lib/core-settings.js';
import { awaitVersion } from '../lib/page/page-versions.js';

type Store = Pick<S3BlobStore, 'has' | 'head' | 'get' | 'put' | 'publicUrl' | 'read'>;

/** The handler over a store (tests give theirs). */
export function createVersionOrigin(store: () => Store, options: { capMs?: number } = {}) {
  return async (event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> => {
    const method = event.requestContext?.http?.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return answer(405, 'Only GET and HEAD.', { allow: 'GET, HEAD' });
    const key = decodeKey(event.rawPath ?? '');
    const blobs = store();
    const found = key !== undefined && (await awaitVersion(blobs, key, { capMs: options.capMs ?? VERSION_ORIGIN.holdMs })) === 'stored';
    const object = found ? await blobs.read(key) : undefined;
    if (!object) return answer(404, 'No such asset.');
    const headers: Record<string, string> = {
      'content-type': object.contentType ?? 'application/octet-stream',
      ...(object.cacheControl ? { 'cache-control': object.cacheControl } : {}),
      ...(object.etag ? { etag: object.etag } : {}),
    };
    return { statusCode: 200, headers, body: method === 'HEAD' ? '' : object.body.toString('base64'), isBase64Encoded: method !== 'HEAD' };
  };
}

/** The blob key of a request path (`/assets/...`, each segment decoded once), or undefined. */
function decodeKey(rawPath: string): string | undefined {
  try {
    const key = rawPath.replace(/^\/+/, '').split('/').map(decodeURIComponent).join('/');
    return key.startsWith('assets/') ? key : undefined;
  } catch {
    return undefined;
  }
}

/** An answer no cache keeps. */
function answer(statusCode: number, message: string, headers: Record<string, string> = {}): LambdaFunctionURLResult {
  return { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers }, body: message };
}

let blobs: S3BlobStore | undefined;

export const handler = createVersionOrigin(() => {
  const bucket = process.env[ENV.bucket];
  if (!bucket) throw new Error(`${ENV.bucket} is not set`);
  blobs ??= new S3BlobStore({ client: new S3Client({}), bucket, publicBaseUrl: process.env[ENV.publicUrl] ?? '' });
  return blobs;
});
