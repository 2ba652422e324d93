import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type BlobHead, type BlobStore, IMMUTABLE_CACHE, type PutOptions } from '../../ports.js';
import { isAssetKey } from '../../storage-keys.js';

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** The public base URL of the bucket's `assets/` keys: the CloudFront distribution (`https://dxxxx.cloudfront.net`). */
  publicBaseUrl: string;
}

/**
 * Blobs as objects in one private S3 bucket. `assets/...` are public only through CloudFront
 * (Origin Access Control); `jobs/...` hold job inputs and results and expire after a day.
 *
 * A missing key is `false`/`undefined`. S3 answers 404 for a missing key only to a caller that may
 * list the bucket and 403 otherwise, so a 403 on a read is treated as "not there (yet)" as well:
 * the preview polls for results that do not exist yet, and a real permission error then shows
 * up as a job that never finishes (and in the logs of the worker that could not write it).
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly client: S3Client;
  private readonly base: string;

  constructor(options: S3BlobStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.base = options.publicBaseUrl.replace(/\/+$/, '');
  }

  async put(key: string, body: Buffer | string, options: PutOptions): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: checkKey(key),
        Body: body,
        ContentType: options.contentType,
        CacheControl: options.cacheControl ?? (isAssetKey(key) ? IMMUTABLE_CACHE : undefined),
        ...(options.metadata ? { Metadata: options.metadata } : {}),
      }),
    );
  }

  async has(key: string): Promise<boolean> {
    return (await this.head(key)) !== undefined;
  }

  async head(key: string): Promise<BlobHead | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      return { metadata: out.Metadata ?? {} };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      if (!out.Body) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** The object with what it is served with (its Content-Type, Cache-Control, ETag), or undefined when there is none: for the page versions' origin (functions/version-origin.ts). */
  async read(key: string): Promise<StoredObject | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      const body = out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
      return { body, contentType: out.ContentType, cacheControl: out.CacheControl, etag: out.ETag };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** The objects directly under the folder `prefix` names (it ends with `/`): ListObjectsV2 with the `/` delimiter, a page per 1,000. */
  async list(prefix: string): Promise<string[]> {
    if (!prefix.endsWith('/')) throw new Error(`A list names a folder (ending with /): ${prefix}`);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: checkKey(`${prefix}x`).slice(0, -1), Delimiter: '/', ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  publicUrl(key: string): string {
    return `${this.base}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }
}

/** An object as S3 serves it. */
export interface StoredObject {
  body: Buffer;
  contentType?: string;
  cacheControl?: string;
  etag?: string;
}

function checkKey(key: string): string {
  if (!key || key.startsWith('/') || key.split('/').some((p) => p === '' || p === '.' || p === '..')) throw new Error(`Invalid blob key: ${key}`);
  return key;
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.Code === 'NoSuchKey' || status === 404 || status === 403;
}
