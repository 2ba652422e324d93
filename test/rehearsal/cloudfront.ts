/**
 * The deploy rehearsal's CloudFront: the synthesized distribution played on loopback, as far as
 * the assets need it. From the template alone:
 *
 * - a request's cache behaviour: the first `CacheBehaviors` path pattern it matches (`*` any
 *   characters, `?` one), else the default;
 * - its origin: the bucket through Origin Access Control (GetObject on the emulated S3, allowed
 *   for the keys the bucket policy opens to CloudFront; a key that is not there is a 403, as S3
 *   answers a caller that may not list the bucket), a Lambda function URL (the hosted function
 *   invoked with the function URL's payload 2.0 event), or an origin group: the first origin, then
 *   the second when the first answers one of the group's failover status codes;
 * - its cache, by path (GET and HEAD alike): an answer kept for its `Cache-Control` max-age within
 *   the cache policy's minimum and maximum TTL (a `no-cache`, `no-store` or `private` one only for
 *   the minimum), the default TTL without one; an error for its `CustomErrorResponses` caching TTL,
 *   else CloudFront's 10 s.
 *
 * Not played: edge locations and their regional caches, the response headers policy, compression,
 * signed requests (OAC's signature is trusted here, and the function URL's IAM auth), request
 * collapsing, origin timeouts and connection failover.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface CdnAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Where it came from: the edge's cache, or which origin. */
  from: 'cache' | 's3' | 'function';
}

interface Template {
  Resources: Record<string, { Type: string; Properties?: any }>;
}

export interface CloudFrontDeps {
  template: Template;
  s3: S3Client;
  /** The emulated bucket of a template bucket's logical id. */
  bucketName(logicalId: string): string;
  /** Invokes a hosted function (by logical id) with an event; its value, or a failure. */
  invoke(logicalId: string, event: unknown): Promise<{ ok: boolean; value?: unknown }>;
  now?: () => number;
}

/** CloudFront caches these error codes (its developer guide: "HTTP 4xx and 5xx status codes that CloudFront caches"). */
const CACHED_ERRORS = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504];
const DEFAULT_ERROR_TTL_S = 10;

export class CloudFront {
  /** Each request sent to a function origin, by path, when it is sent (before its answer). */
  readonly toFunction: string[] = [];
  private readonly config: any;
  private readonly cache = new Map<string, { answer: CdnAnswer; until: number }>();
  private readonly now: () => number;

  constructor(private readonly deps: CloudFrontDeps) {
    const dists = Object.values(deps.template.Resources).filter((r) => r.Type === 'AWS::CloudFront::Distribution');
    if (dists.length !== 1) throw new Error(`rehearsal CloudFront: ${dists.length} distributions`);
    this.config = dists[0].Properties.DistributionConfig;
    this.now = deps.now ?? Date.now;
  }

  /** A viewer's GET or HEAD of `path` (`/assets/...`). */
  async request(path: string, method: 'GET' | 'HEAD' = 'GET'): Promise<CdnAnswer> {
    const kept = this.cache.get(path);
    if (kept && kept.until > this.now()) return withMethod({ ...kept.answer, from: 'cache' }, method);
    const behavior = this.behavior(path);
    const answer = await this.fromTarget(behavior.TargetOriginId, path, method);
    if (method === 'GET') {
      const ttl = this.ttl(answer, behavior);
      if (ttl > 0) this.cache.set(path, { answer, until: this.now() + ttl * 1000 });
      else this.cache.delete(path);
    }
    return withMethod(answer, method);
  }

  private behavior(path: string): any {
    const key = path.replace(/^\//, '');
    const glob = (pattern: string) =>
      new RegExp(
        `^${pattern
          .replace(/^\//, '')
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      );
    return (this.config.CacheBehaviors ?? []).find((b: any) => glob(b.PathPattern).test(key)) ?? this.config.DefaultCacheBehavior;
  }

  private async fromTarget(id: string, path: string, method: string): Promise<CdnAnswer> {
    const group = (this.config.OriginGroups?.Items ?? []).find((g: any) => g.Id === id);
    if (!group) return this.fromOrigin(id, path, method);
    const [first, second] = group.Members.Items.map((m: any) => m.OriginId as string);
    const answer = await this.fromOrigin(first, path, method);
    return group.FailoverCriteria.StatusCodes.Items.includes(answer.status) ? this.fromOrigin(second, path, method) : answer;
  }

  private async fromOrigin(id: string, path: string, method: string): Promise<CdnAnswer> {
    const origin = (this.config.Origins as any[]).find((o) => o.Id === id);
    if (!origin) throw new Error(`rehearsal CloudFront: no origin ${id}`);
    if (origin.S3OriginConfig) return this.fromBucket(origin.DomainName['Fn::GetAtt'][0], path);
    const url = /"Fn::GetAtt":\["([^"]+)","FunctionUrl"\]/.exec(JSON.stringify(origin.DomainName))?.[1];
    const fnId = url && this.deps.template.Resources[url]?.Properties?.TargetFunctionArn?.['Fn::GetAtt']?.[0];
    if (!fnId) throw new Error(`rehearsal CloudFront: origin ${id} is neither the bucket nor a function URL`);
    return this.fromFunction(fnId, path, method);
  }

  /** GetObject through OAC: only keys under the prefixes the bucket policy opens to CloudFront; a missing key is a 403. */
  private async fromBucket(bucketId: string, path: string): Promise<CdnAnswer> {
    const key = decodeURIComponent(path.replace(/^\//, ''));
    const denied = {
      status: 403,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<Error><Code>AccessDenied</Code></Error>'),
      from: 's3' as const,
    };
    if (!this.openPrefixes(bucketId).some((p) => key.startsWith(p))) return denied;
    try {
      const out = await this.deps.s3.send(new GetObjectCommand({ Bucket: this.deps.bucketName(bucketId), Key: key }));
      const headers: Record<string, string> = { 'content-type': out.ContentType ?? 'application/octet-stream' };
      if (out.CacheControl) headers['cache-control'] = out.CacheControl;
      if (out.ETag) headers.etag = out.ETag;
      return { status: 200, headers, body: Buffer.from((await out.Body?.transformToByteArray()) ?? []), from: 's3' };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || status === 403) return denied;
      throw err;
    }
  }

  /** The key prefixes the bucket's policy lets cloudfront.amazonaws.com read (`<bucket ARN>/assets/*` -> `assets/`). */
  private openPrefixes(bucketId: string): string[] {
    const policies = Object.values(this.deps.template.Resources).filter((r) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties?.Bucket?.Ref === bucketId);
    return policies.flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as any[])
        .filter((s) => s.Effect === 'Allow' && s.Principal?.Service === 'cloudfront.amazonaws.com' && [].concat(s.Action).includes('s3:GetObject' as never))
        .flatMap((s) => [].concat(s.Resource).map((r) => /"\/([^"*]*)\*"/.exec(JSON.stringify(r))?.[1] ?? '')),
    );
  }

  private async fromFunction(fnId: string, path: string, method: string): Promise<CdnAnswer> {
    this.toFunction.push(path);
    const out = await this.deps.invoke(fnId, functionUrlEvent(path, method));
    const v = out.value as { statusCode?: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean } | undefined;
    if (!out.ok || !v) return { status: 502, headers: {}, body: Buffer.alloc(0), from: 'function' };
    const body = Buffer.from(v.body ?? '', v.isBase64Encoded ? 'base64' : 'utf8');
    return { status: v.statusCode ?? 200, headers: lower(v.headers ?? {}), body, from: 'function' };
  }

  /** Seconds the edge keeps an answer. */
  private ttl(answer: CdnAnswer, behavior: any): number {
    if (answer.status >= 400) {
      if (!CACHED_ERRORS.includes(answer.status)) return 0;
      const custom = (this.config.CustomErrorResponses ?? []).find((e: any) => e.ErrorCode === answer.status);
      return custom?.ErrorCachingMinTTL ?? DEFAULT_ERROR_TTL_S;
    }
    const policyId = behavior.CachePolicyId?.Ref;
    const policy = this.deps.template.Resources[policyId]?.Properties?.CachePolicyConfig ?? { MinTTL: 0, DefaultTTL: 86400, MaxTTL: 31536000 };
    const cc = answer.headers['cache-control'] ?? '';
    if (/\b(no-cache|no-store|private)\b/.test(cc)) return policy.MinTTL;
    const maxAge = /\bmax-age=(\d+)/.exec(cc)?.[1];
    if (maxAge === undefined) return policy.DefaultTTL;
    return Math.min(Math.max(Number(maxAge), policy.MinTTL), policy.MaxTTL);
  }
}

function withMethod(answer: CdnAnswer, method: string): CdnAnswer {
  return method === 'HEAD' ? { ...answer, body: Buffer.alloc(0) } : answer;
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The event Lambda gives a function for a request to its function URL (payload 2.0), as CloudFront makes it. */
function functionUrlEvent(path: string, method: string) {
  const domain = 'rehearsal.lambda-url.us-east-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: domain, 'user-agent': 'Amazon CloudFront', via: '2.0 rehearsal.cloudfront.net (CloudFront)' },
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'rehearsal',
      domainName: domain,
      domainPrefix: 'rehearsal',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '130.176.0.1', userAgent: 'Amazon CloudFront' },
      requestId: `cf-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
  };
}
