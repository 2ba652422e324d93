/**
 * The stack, checked with aws-cdk-lib/assertions, without bundling (context
 * aws:cdk:bundling-stacks = [], CDK_VALIDATION=false, tiny layer folders).
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Alarms, DURATION_ALARM_RATIO } from '../../cdk/constructs/alarms';
import { ApiKeys } from '../../cdk/constructs/api-keys';
import { DEFAULT_BATCH_CONCURRENCY, ITEM_MAX_RECEIVES, WEBHOOK_VISIBILITY } from '../../cdk/constructs/batches';
import { BROWSER_WORKER_MEMORY_MB, LAMBDA_SCREENSHOT_TIMEOUT } from '../../cdk/constructs/browser-worker-function';
import { OutboundProxy } from '../../cdk/constructs/outbound-proxy';
import { LAMBDA_FETCH_TIMEOUT, LAMBDA_JOB_WAIT, PreviewFunction } from '../../cdk/constructs/preview-function';
import { WORKER_MEMORY_MB } from '../../cdk/constructs/worker-function';
import { dropDigest, keygenText, newKey } from '../../cdk/keygen';
import { LinkPreviewStack, type LinkPreviewStackProps } from '../../cdk/link-preview-stack';
import { ASSET_CONTENT_SECURITY_POLICY, VERSION_ORIGIN } from '../../lib/asset-metadata';
import { AWS_BROWSER_LANES, BROWSER_BASE_MB, browserLanes } from '../../lib/browser/lanes';
import { DEFAULTS, loadConfig } from '../../lib/config';
import { LAMBDA_MB_PER_VCPU } from '../../lib/core-settings';
import { imageRenderMb, WORKER_BASE_MB, WORKER_HEADROOM_MB, workerMemoryBudgetMb } from '../../lib/jobs/memory';
import { JOB_SPECS, jobMemoryMb, worstCaseMb } from '../../lib/jobs/specs';
import { VERSION_GRACE_MS } from '../../lib/page/page-versions';

process.env.CDK_VALIDATION = 'false';

const HASH = 'a'.repeat(64);

function tinyLayer(name: string): lambda.Code {
  const dir = mkdtempSync(path.join(tmpdir(), `linklens-layer-${name}-`));
  writeFileSync(path.join(dir, 'README'), name);
  return lambda.Code.fromAsset(dir);
}

let lastStack: LinkPreviewStack | undefined;

function synth(props: Partial<LinkPreviewStackProps> = {}, context: Record<string, unknown> = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new LinkPreviewStack(app, 'Test', {
    env: { account: '123456789012', region: 'eu-west-1' },
    apiKeys: ApiKeys.fromHashes([HASH]),
    layerCode: { ffmpeg: tinyLayer('ffmpeg'), sharp: tinyLayer('sharp'), chromium: tinyLayer('chromium') },
    ...props,
  });
  lastStack = stack;
  return Template.fromStack(stack);
}

const template = synth({ workerReservedConcurrency: 7 });
const mainStack = lastStack!;
const res = (type: string) => template.findResources(type);
const one = (type: string, pred: (r: any) => boolean = () => true): [string, any] => {
  const found = Object.entries(res(type)).filter(([, r]) => pred(r));
  expect(found).toHaveLength(1);
  return found[0];
};
const fnBy = (service: string) => one('AWS::Lambda::Function', (r) => r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === service);
const [previewId, preview] = fnBy('linklens-preview');
const [workerId, worker] = fnBy('linklens-worker');
const queueBy = (prefix: string): [string, any] => {
  const found = Object.entries(res('AWS::SQS::Queue')).filter(([id, r]: [string, any]) => id.startsWith(prefix) && r.Properties.RedrivePolicy !== undefined);
  expect(found).toHaveLength(1);
  return found[0];
};
const [queueId, queue] = queueBy('JobsQueue');
const [dlqId] = queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'];
const [bucketId, bucket] = one('AWS::S3::Bucket');
const ref = (id: string) => ({ Ref: id });
const roleOf = (fn: any) => fn.Properties.Role['Fn::GetAtt'][0];
const statementsOf = (roleId: string) =>
  Object.values(res('AWS::IAM::Policy'))
    .filter((p: any) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p: any) => p.Properties.PolicyDocument.Statement);
const actions = (s: any): string[] => [].concat(s.Action);

test('playground: false leaves its routes out and turns it off in the preview function', () => {
  const off = synth({ playground: false });
  const keys = Object.values(off.findResources('AWS::ApiGatewayV2::Route')).map((r: any) => r.Properties.RouteKey);
  expect(keys.sort()).toEqual(['GET /oembed', 'GET /openapi.json', 'GET /previews/{batchId}', 'GET /status', 'POST /', 'POST /previews']);
  const preview = Object.values(off.findResources('AWS::Lambda::Function')).find((f: any) => f.Properties.Environment?.Variables?.LINKPREVIEW_PLAYGROUND);
  expect((preview as any)?.Properties.Environment.Variables.LINKPREVIEW_PLAYGROUND).toBe('false');
});

test("embeds: the players' settings reach the preview function, checked at synth", () => {
  const t = synth({ embeds: { enabled: false, origins: ['https://player.example.com'], parents: ['app.example.com'] } });
  const preview = Object.values(t.findResources('AWS::Lambda::Function')).find((f: any) => f.Properties.Environment?.Variables?.LINKPREVIEW_EMBEDS) as any;
  expect(preview.Properties.Environment.Variables).toMatchObject({
    LINKPREVIEW_EMBEDS: 'off',
    LINKPREVIEW_EMBED_ORIGINS: 'https://player.example.com',
    LINKPREVIEW_EMBED_PARENTS: 'app.example.com',
  });
  // None given: nothing set, the service's defaults hold.
  const plain = Object.values(synth().findResources('AWS::Lambda::Function')).map((f: any) => Object.keys(f.Properties.Environment?.Variables ?? {}));
  expect(plain.flat().filter((k) => k.startsWith('LINKPREVIEW_EMBED'))).toEqual([]);
  expect(() => synth({ embeds: { origins: ['http://player.example.com'] } })).toThrow(/embeds: .*LINKPREVIEW_EMBED_ORIGINS/);
});

describe('resources and wiring', () => {
  test('POST / on an HTTP API goes to the preview function (payload v2, 29 s), with throttling and JSON access logs', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP', CorsConfiguration: Match.absent() });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'GET /oembed' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'GET /status' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'GET /openapi.json' });
    // The playground (on by default): the page and its two files.
    for (const key of ['GET /', 'GET /playground.js', 'GET /playground.css']) template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key });
    // Batches (on by default): POST /previews and GET /previews/{batchId}.
    for (const key of ['POST /previews', 'GET /previews/{batchId}']) template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key });
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 9);
    // Every route, GET /oembed and the playground's included, goes to the one integration: the preview function.
    for (const route of Object.values(res('AWS::ApiGatewayV2::Route')) as any[])
      expect(route.Properties.Target).toEqual({ 'Fn::Join': ['', ['integrations/', { Ref: one('AWS::ApiGatewayV2::Integration')[0] }]] });
    const [, integration] = one('AWS::ApiGatewayV2::Integration');
    expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0', TimeoutInMillis: 29000 });
    expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(previewId);
    const [, stage] = one('AWS::ApiGatewayV2::Stage');
    expect(stage.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
    const format = JSON.parse(stage.Properties.AccessLogSettings.Format);
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status' });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'apigateway.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [previewId, 'Arn'] },
    });
  });

  test('the access log: the route key, never the path or the query string (GET /oembed may carry the key in its query); the event is never logged', () => {
    const [, stage] = one('AWS::ApiGatewayV2::Stage');
    const format: string = stage.Properties.AccessLogSettings.Format;
    const variables = [...format.matchAll(/\$context\.[A-Za-z.]+/g)].map((m) => m[0]).sort();
    // The HTTP API's variables (docs: "Customize HTTP API access logs"): none of these holds the
    // query string; $context.path would hold the path, $context.routeKey is the route's template.
    expect(variables).toEqual(
      [
        '$context.httpMethod',
        '$context.identity.sourceIp',
        '$context.integration.latency',
        '$context.integrationErrorMessage',
        '$context.protocol',
        '$context.requestId',
        '$context.requestTime',
        '$context.responseLatency',
        '$context.responseLength',
        '$context.routeKey',
        '$context.status',
      ].sort(),
    );
    expect(format).not.toContain('$context.path');
    // Powertools logs the invocation's event (headers and query) only when told to: never here.
    const [, preview] = fnBy('linklens-preview');
    expect(preview.Properties.Environment.Variables.POWERTOOLS_LOGGER_LOG_EVENT).toBeUndefined();
  });

  test('CORS and throttling are configurable (cdk/app.ts maps context to these props)', () => {
    const t = synth({ corsOrigins: ['https://app.example'], throttle: { rateLimit: 5, burstLimit: 9 } });
    t.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: { AllowOrigins: ['https://app.example'], AllowMethods: Match.arrayWith(['POST', 'GET']) },
    });
    t.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 9 } });
    // Either left out keeps its default.
    synth({ throttle: { rateLimit: 5 } }).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 40 },
    });
  });

  test('every function (LinklensFunction) is nodejs24.x x86_64 with active tracing, its own log group kept a month, and its Powertools names', () => {
    const fns = Object.values(res('AWS::Lambda::Function')) as any[];
    expect(fns.map((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual([
      'linklens-browser-worker',
      'linklens-preview',
      'linklens-version-origin',
      'linklens-webhooks',
      'linklens-worker',
    ]);
    const logGroups = res('AWS::Logs::LogGroup');
    for (const fn of fns) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Handler: 'index.handler', Architectures: ['x86_64'], TracingConfig: { Mode: 'Active' } });
      expect(logGroups[fn.Properties.LoggingConfig.LogGroup.Ref].Properties.RetentionInDays).toBe(30);
      expect(fn.Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: expect.stringMatching(/^linklens-/),
        POWERTOOLS_METRICS_NAMESPACE: 'linklens',
      });
    }
    expect(new Set(fns.map((fn) => fn.Properties.LoggingConfig.LogGroup.Ref)).size).toBe(fns.length);
  });

  test('the worker has the two media layers, the preview none; every layer is for nodejs24.x x86_64; the worker reserved concurrency is a prop', () => {
    expect(preview.Properties.Layers).toBeUndefined();
    expect(worker.Properties.Layers).toHaveLength(2);
    const layers = res('AWS::Lambda::LayerVersion');
    expect(
      Object.values(layers)
        .map((l: any) => l.Properties.Description)
        .sort(),
    ).toEqual([
      expect.stringMatching(/^ffprobe \+ ffmpeg static builds in \/opt\/bin/),
      expect.stringMatching(/^headless Chromium for Lambda: @sparticuz\/chromium [\d.]+ in \/opt\/nodejs\/node_modules$/),
      expect.stringMatching(/^sharp \+ libvips for linux-x64 glibc/),
    ]);
    for (const l of Object.values(layers) as any[]) {
      expect(l.Properties).toMatchObject({ CompatibleRuntimes: ['nodejs24.x'], CompatibleArchitectures: ['x86_64'] });
    }
    expect(worker.Properties.ReservedConcurrentExecutions).toBe(7);
    expect(synth().findResources('AWS::Lambda::Function', { Properties: { ReservedConcurrentExecutions: Match.anyValue() } })).toEqual({});
  });

  test('the queue feeds the worker with partial batch failures; a DLQ after maxReceiveCount', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: ref(workerId),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 4,
    });
    expect(queue.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 });
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
  });

  test('the bucket is private and encrypted; jobs/ expire after a day', () => {
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.Properties.LifecycleConfiguration.Rules).toContainEqual(expect.objectContaining({ Prefix: 'jobs/', ExpirationInDays: 1, Status: 'Enabled' }));
    expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
  });

  test('CloudFront reads the bucket through Origin Access Control, assets/* only, with an immutable cache policy', () => {
    const [oacId, oac] = one('AWS::CloudFront::OriginAccessControl', (r) => r.Properties.OriginAccessControlConfig.OriginAccessControlOriginType === 's3');
    expect(oac.Properties.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    const [distId, dist] = one('AWS::CloudFront::Distribution');
    const origin = dist.Properties.DistributionConfig.Origins[0];
    expect(origin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oacId, 'Id'] });
    expect(origin.DomainName).toEqual({ 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] });
    expect(origin.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
    const [policyId, policy] = one('AWS::CloudFront::CachePolicy');
    // A year unless the object says less: every asset is stored immutable for a year, a page version's stand-in no-cache.
    expect(policy.Properties.CachePolicyConfig).toMatchObject({ DefaultTTL: 31536000, MinTTL: 0, MaxTTL: 31536000 });
    expect(dist.Properties.DistributionConfig.DefaultCacheBehavior).toMatchObject({ CachePolicyId: ref(policyId), ViewerProtocolPolicy: 'redirect-to-https' });
    // The assets' CSP (the local server's too) and the security headers; the S3 metadata kept from viewers.
    const [headersId, headers] = one('AWS::CloudFront::ResponseHeadersPolicy');
    expect(dist.Properties.DistributionConfig.DefaultCacheBehavior.ResponseHeadersPolicyId).toEqual(ref(headersId));
    const config = headers.Properties.ResponseHeadersPolicyConfig;
    expect(config.SecurityHeadersConfig.ContentSecurityPolicy).toEqual({ ContentSecurityPolicy: ASSET_CONTENT_SECURITY_POLICY, Override: true });
    expect(config.SecurityHeadersConfig).toMatchObject({
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: 'SAMEORIGIN' },
      StrictTransportSecurity: { AccessControlMaxAgeSec: 31536000 },
    });
    expect(ASSET_CONTENT_SECURITY_POLICY).toMatch(/default-src 'none'.*img-src 'self'.*sandbox/);
    expect(config.RemoveHeadersConfig.Items.map((h: { Header: string }) => h.Header).sort()).toEqual(
      ['x-amz-meta-images', 'x-amz-meta-manifest', 'x-amz-meta-size', 'x-amz-meta-versions'].sort(),
    );
    const [, bp] = one('AWS::S3::BucketPolicy');
    const allows = bp.Properties.PolicyDocument.Statement.filter((s: any) => s.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(JSON.stringify(allows[0].Resource)).toContain('/assets/*');
    expect(JSON.stringify(allows[0].Condition)).toContain(distId);
  });

  test('the page versions: S3 first, then (on its 403 or 404) their origin, a function URL only this distribution may call; no error is cached', () => {
    const [distId, dist] = one('AWS::CloudFront::Distribution');
    const config = dist.Properties.DistributionConfig;
    const [policyId] = one('AWS::CloudFront::CachePolicy');
    // The versions' addresses (assets/<digest>/page.html|page.md|page.txt) go to an origin group ...
    expect(config.CacheBehaviors).toHaveLength(1);
    const [versions] = config.CacheBehaviors;
    expect(versions).toMatchObject({
      PathPattern: 'assets/*/page.*',
      AllowedMethods: ['GET', 'HEAD'],
      CachePolicyId: ref(policyId),
      ResponseHeadersPolicyId: config.DefaultCacheBehavior.ResponseHeadersPolicyId,
      ViewerProtocolPolicy: 'redirect-to-https',
    });
    const group = config.OriginGroups.Items.find((g: any) => g.Id === versions.TargetOriginId);
    expect(group.FailoverCriteria.StatusCodes).toEqual({ Items: [403, 404], Quantity: 2 });
    const [first, second] = group.Members.Items.map((m: any) => config.Origins.find((o: any) => o.Id === m.OriginId));
    // ... S3 first, as every other asset ...
    const [s3OacId] = one('AWS::CloudFront::OriginAccessControl', (r) => r.Properties.OriginAccessControlConfig.OriginAccessControlOriginType === 's3');
    expect(first).toMatchObject({ DomainName: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] }, OriginAccessControlId: { 'Fn::GetAtt': [s3OacId, 'Id'] } });
    // ... then the versions' origin: the function's URL, IAM auth, signed by CloudFront (OAC), given the function's time to answer.
    const [fnId, fn] = fnBy('linklens-version-origin');
    const [urlId, url] = one('AWS::Lambda::Url');
    expect(url.Properties).toMatchObject({ AuthType: 'AWS_IAM', TargetFunctionArn: { 'Fn::GetAtt': [fnId, 'Arn'] } });
    expect(JSON.stringify(second.DomainName)).toContain(urlId);
    const [lambdaOacId, lambdaOac] = one(
      'AWS::CloudFront::OriginAccessControl',
      (r) => r.Properties.OriginAccessControlConfig.OriginAccessControlOriginType === 'lambda',
    );
    expect(lambdaOac.Properties.OriginAccessControlConfig).toMatchObject({ SigningBehavior: 'always', SigningProtocol: 'sigv4' });
    expect(second).toMatchObject({
      OriginAccessControlId: { 'Fn::GetAtt': [lambdaOacId, 'Id'] },
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginReadTimeout: VERSION_ORIGIN.timeoutS },
    });
    expect(fn.Properties.Timeout).toBe(VERSION_ORIGIN.timeoutS);
    expect(VERSION_ORIGIN.holdMs).toBeLessThan(VERSION_ORIGIN.timeoutS * 1000);
    // Past the latest a job can end (the request budget's cap, and the grace a version may be missing after it).
    expect(VERSION_ORIGIN.holdMs).toBeGreaterThan(28_000 + VERSION_GRACE_MS);
    // Only this distribution may call it, by its URL.
    const calls = Object.values(res('AWS::Lambda::Permission')).filter((p: any) => p.Properties.Principal === 'cloudfront.amazonaws.com') as any[];
    expect(calls.map((p) => p.Properties.Action).sort()).toEqual(['lambda:InvokeFunction', 'lambda:InvokeFunctionUrl']);
    for (const p of calls) expect(JSON.stringify(p.Properties.SourceArn)).toContain(distId);
    expect(calls.find((p) => p.Properties.Action === 'lambda:InvokeFunction').Properties.InvokedViaFunctionUrl).toBe(true);
    // No error is cached: an address asked for too early never stays a 403 or 404 at the edge.
    expect(config.CustomErrorResponses.map((e: any) => [e.ErrorCode, e.ErrorCachingMinTTL])).toEqual([403, 404, 500, 502, 503, 504].map((code) => [code, 0]));
    expect(config.CustomErrorResponses.some((e: any) => e.ResponsePagePath || e.ResponseCode)).toBe(false);
    // Its bucket: its own name only (not the distribution's, which names it), the memos and the versions to read and write, nothing else.
    expect(Object.keys(fn.Properties.Environment.Variables).sort()).toEqual(['LINKPREVIEW_BUCKET', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME']);
    const statements = statementsOf(roleOf(fn)).filter((s: any) => actions(s).some((a) => a.startsWith('s3:')));
    const objects = statements.find((s: any) => actions(s).includes('s3:GetObject'));
    expect(actions(objects).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(JSON.stringify(objects.Resource)).toMatch(/\/assets\/\*.*\/jobs\/page\/\*.*\/jobs\/page-content\/\*/);
    const list = statements.find((s: any) => actions(s).includes('s3:ListBucket'));
    expect(list.Condition).toEqual({ StringLike: { 's3:prefix': ['assets/*', 'jobs/page/*', 'jobs/page-content/*'] } });
    expect(statements).toHaveLength(2);
  });
});

describe('least privilege', () => {
  const allAllows = () =>
    Object.values(res('AWS::IAM::Policy'))
      .flatMap((p: any) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => s.Effect === 'Allow');

  test('no Allow statement has a wildcard action, and object resources are scoped to assets/ or jobs/', () => {
    const statements = allAllows();
    expect(statements.length).toBeGreaterThan(3);
    for (const s of statements) {
      for (const a of actions(s)) expect(a).not.toContain('*');
      const resources = [].concat(s.Resource).map((r) => JSON.stringify(r));
      for (const r of resources) {
        if (r.includes(bucketId) && r.includes('/')) expect(r).toMatch(/\/(assets|jobs|jobs\/page|jobs\/page-content|batches)\/\*/);
      }
    }
  });

  test('the preview function may send jobs, read and write jobs/ only; the worker reads and writes assets/ and jobs/', () => {
    const p = statementsOf(roleOf(preview));
    const w = statementsOf(roleOf(worker));
    const flat = (ss: any[]) => ss.map((s) => ({ actions: actions(s).sort(), resources: JSON.stringify(s.Resource) }));
    const pf = flat(p);
    expect(pf.find((s) => s.actions.includes('sqs:SendMessage'))!.resources).toContain(queueId);
    expect(pf.filter((s) => s.resources.includes('assets/'))).toEqual([]);
    expect(pf.filter((s) => s.actions.includes('s3:DeleteObject')).map((s) => s.resources)).toEqual([expect.stringContaining('/batches/*')]);
    expect(pf.find((s) => s.actions.includes('s3:GetObject'))!.resources).toContain('/jobs/*');
    expect(pf.find((s) => s.actions.includes('s3:PutObject'))!.resources).toContain('/jobs/*');
    // It receives only from its own reply queues (named by the prefix in its environment), which it makes and sweeps.
    const prefix = preview.Properties.Environment.Variables.LINKPREVIEW_REPLY_QUEUE_PREFIX;
    expect(prefix).toMatch(/^linklens-reply-[0-9a-f]{10}-$/);
    // (and from the batch items' queue, as its event source: 'batches' below)
    const receive = pf.filter((s) => s.actions.some((a: string) => a.startsWith('sqs:Receive')) && s.resources.includes(prefix));
    expect(receive).toHaveLength(1);
    expect(receive[0].actions).toEqual(['sqs:CreateQueue', 'sqs:DeleteQueue', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage', 'sqs:TagQueue']);
    expect(receive[0].resources).toContain(`:${prefix}*`);
    const wf = flat(w);
    expect(wf.find((s) => s.actions.includes('sqs:ReceiveMessage'))).toBeDefined();
    // The worker sends only replies, to queues of that prefix.
    expect(wf.filter((s) => s.actions.includes('sqs:SendMessage')).map((s) => s.resources)).toEqual([expect.stringContaining(`:${prefix}*`)]);
    expect(worker.Properties.Environment.Variables.LINKPREVIEW_REPLY_QUEUE_PREFIX).toBe(prefix);
    for (const action of ['s3:GetObject', 's3:PutObject']) {
      const r = wf
        .filter((s) => s.actions.includes(action))
        .map((s) => s.resources)
        .join(' ');
      expect(r).toContain('/assets/*');
      expect(r).toContain('/jobs/*');
    }
    const list = [...p, ...w].filter((s) => actions(s).includes('s3:ListBucket'));
    expect(list.length).toBe(3);
    for (const s of list) expect(s.Condition.StringLike['s3:prefix'].every((x: string) => /^(assets|jobs|batches)\/\*$/.test(x))).toBe(true);
  });
});

describe('settings', () => {
  test('each function gets the env vars its grants go with', () => {
    const pv = preview.Properties.Environment.Variables;
    expect(pv).toMatchObject({
      LINKPREVIEW_API_KEY_HASHES: HASH,
      LINKPREVIEW_BUCKET: ref(bucketId),
      LINKPREVIEW_JOB_QUEUE_URL: ref(queueId),
      LINKPREVIEW_PUBLIC_URL: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [expect.any(String), 'DomainName'] }]] },
      LINKPREVIEW_REQUEST_BUDGET_MS: '25000',
      POWERTOOLS_METRICS_NAMESPACE: 'linklens',
    });
    expect(pv.LINKPREVIEW_API_KEYS).toBeUndefined(); // never plain keys
    const wv = worker.Properties.Environment.Variables;
    expect(wv).toMatchObject({ LINKPREVIEW_BUCKET: ref(bucketId), LINKPREVIEW_FFPROBE_PATH: '/opt/bin/ffprobe', LINKPREVIEW_FFMPEG_PATH: '/opt/bin/ffmpeg' });
    expect(wv.LINKPREVIEW_JOB_QUEUE_URL).toBeUndefined();
    expect(wv.LINKPREVIEW_API_KEY_HASHES).toBeUndefined();
    // The values are valid for the service's own config loader.
    const env = Object.fromEntries(
      Object.entries(pv).map(([k, v]) => [
        k,
        typeof v === 'string'
          ? v
          : k === 'LINKPREVIEW_PUBLIC_URL'
            ? 'https://d1.cloudfront.net'
            : /_QUEUE_URL$/.test(k)
              ? 'https://sqs.eu-west-1.amazonaws.com/1/q'
              : 'bucket-name',
      ]),
    ) as Record<string, string>;
    expect(loadConfig(env)).toMatchObject({ requestBudgetMs: 25000, apiKeyHashes: [HASH], bucket: 'bucket-name' });
  });

  test('hostRules reaches every function that fetches (preview, worker, browser worker, webhooks) as LINKPREVIEW_HOST_RULES; a malformed rule fails synth, named', () => {
    const rules = 'intranet.example=deny;photos.example=metadata-only;*.shop.example=proxy,render';
    const t = synth({ hostRules: rules });
    // Every function that fetches: not the page versions' origin, which only reads and writes the bucket.
    const fns = Object.values(t.findResources('AWS::Lambda::Function')).filter((f: any) =>
      /^linklens-(?!version-origin)/.test(f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME ?? ''),
    );
    const services = fns.map((f: any) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort();
    expect(services).toEqual(['linklens-browser-worker', 'linklens-preview', 'linklens-webhooks', 'linklens-worker']);
    for (const f of fns as any[]) expect(f.Properties.Environment.Variables.LINKPREVIEW_HOST_RULES).toBe(rules);
    // The functions' own loader reads it as the same rules.
    expect(loadConfig({ LINKPREVIEW_HOST_RULES: rules }).hostRules.map((r) => r.pattern)).toEqual(['intranet.example', 'photos.example', '*.shop.example']);
    // None given: the variable is not set.
    expect(preview.Properties.Environment.Variables.LINKPREVIEW_HOST_RULES).toBeUndefined();
    expect(worker.Properties.Environment.Variables.LINKPREVIEW_HOST_RULES).toBeUndefined();
    expect(() => synth({ hostRules: 'intranet.example=block' })).toThrow('hostRules: rule "intranet.example=block": unknown action "block"');
  });

  test('the proxy hosts (the proxyHosts context, which cdk/app.ts gives the proxy) are host rules after hostRules: no function gets LINKPREVIEW_PROXY_HOSTS', () => {
    const t = synth({ hostRules: 'intranet.example=deny', proxy: OutboundProxy.fromSecret('linklens/proxy-url', { hosts: ['amazon.com', '*.reddit.com'] }) });
    const fns = Object.values(t.findResources('AWS::Lambda::Function'))
      .map((f: any) => f.Properties.Environment.Variables)
      .filter((env) => env.POWERTOOLS_SERVICE_NAME !== 'linklens-version-origin');
    expect(fns).toHaveLength(4);
    for (const env of fns) {
      expect(env.LINKPREVIEW_HOST_RULES).toBe('intranet.example=deny;amazon.com=proxy;reddit.com=proxy');
      expect(env.LINKPREVIEW_PROXY_HOSTS).toBeUndefined();
    }
  });

  test('timeouts are ordered: job wait < preview timeout < 29 s API limit; record deadline + fetch fit; queue visibility > worker timeout', () => {
    const pv = preview.Properties.Environment.Variables;
    const jobDeadline = Number(pv.LINKPREVIEW_REQUEST_BUDGET_MS);
    const previewTimeout = preview.Properties.Timeout * 1000;
    const apiLimit = one('AWS::ApiGatewayV2::Integration')[1].Properties.TimeoutInMillis;
    expect(jobDeadline).toBeLessThan(previewTimeout);
    expect(previewTimeout).toBeLessThan(apiLimit);
    expect(apiLimit).toBeLessThanOrEqual(29000);
    expect(Number(pv.LINKPREVIEW_FETCH_TIMEOUT_MS) + Number(pv.LINKPREVIEW_JOB_WAIT_MS)).toBeLessThanOrEqual(jobDeadline);
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThan(worker.Properties.Timeout);
    expect(queue.Properties.VisibilityTimeout).toBe(worker.Properties.Timeout * 6);
    expect(queue.Properties.MessageRetentionPeriod).toBeGreaterThan(queue.Properties.VisibilityTimeout * 3);
  });

  test("the preview's budget is the setting's default; its fetch timeout and job wait are its own, on purpose: they fit in the budget together, the defaults do not", () => {
    const pv = preview.Properties.Environment.Variables;
    const budget = Number(pv.LINKPREVIEW_REQUEST_BUDGET_MS);
    expect(budget).toBe(DEFAULTS.requestBudgetMs);
    expect(Number(pv.LINKPREVIEW_FETCH_TIMEOUT_MS)).toBe(LAMBDA_FETCH_TIMEOUT.toMilliseconds());
    expect(Number(pv.LINKPREVIEW_JOB_WAIT_MS)).toBe(LAMBDA_JOB_WAIT.toMilliseconds());
    // A page that takes its whole fetch timeout still leaves the jobs their whole wait before the budget ends.
    expect(LAMBDA_FETCH_TIMEOUT.toMilliseconds() + LAMBDA_JOB_WAIT.toMilliseconds()).toBeLessThanOrEqual(budget);
    // The defaults do not fit: were they to, the preview would take them instead of its own.
    expect(DEFAULTS.fetchTimeoutMs + DEFAULTS.jobWaitMs).toBeGreaterThan(DEFAULTS.requestBudgetMs);
    expect(pv.POWERTOOLS_METRICS_NAMESPACE).toBe(DEFAULTS.metricsNamespace);
  });

  test("worker memory: 1769 MB (one vCPU), 4 jobs at once from batches of 4, and every job kind's worst case fits the job budget alone", () => {
    expect(worker.Properties.MemorySize).toBe(WORKER_MEMORY_MB);
    expect(WORKER_MEMORY_MB).toBe(1769);
    const wv = worker.Properties.Environment.Variables;
    expect(wv.LINKPREVIEW_JOB_CONCURRENCY).toBe('4');
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: ref(workerId), BatchSize: 4 });
    // What the worker sees on Lambda: its env, with the memory Lambda sets (AWS_LAMBDA_FUNCTION_MEMORY_SIZE).
    const env = Object.fromEntries(Object.entries(wv).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    const config = loadConfig({ ...env, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(worker.Properties.MemorySize) });
    const budget = workerMemoryBudgetMb(config)!;
    expect(budget).toBe(WORKER_MEMORY_MB - WORKER_BASE_MB - WORKER_HEADROOM_MB);
    // Four 50 MP JPEGs render together; two pdf.js threads do not (they take turns).
    const jpeg50 = jobMemoryMb('image', config) + imageRenderMb({ width: 8660, height: 5773, format: 'jpeg', hasAlpha: false });
    expect(4 * jpeg50).toBeLessThanOrEqual(budget);
    expect(2 * worstCaseMb('document', config)).toBeGreaterThan(budget);
    // Every kind in JOB_SPECS, alone, fits its worker's budget: the job worker's, or the browser
    // worker's for a Chromium kind (one page at a time).
    const [, browser] = fnBy('linklens-browser-worker');
    const budgets = { default: budget, browser: workerMemoryBudgetMb({ functionMemoryMb: browser.Properties.MemorySize })! };
    const kinds = Object.entries(JOB_SPECS);
    expect(kinds.filter(([kind, spec]) => worstCaseMb(kind, config) > budgets[spec.worker]).map(([kind]) => kind)).toEqual([]);
  });

  test('the stack refuses plain keys in place of hashes', () => {
    expect(() => synth({ apiKeys: ApiKeys.fromHashes(['my-secret-key']) })).toThrow(/not a SHA-256 hex digest/);
  });

  test('keygen makes a key whose hash the service accepts', () => {
    const { key, hash } = newKey();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.length).toBeGreaterThan(40);
    const t = synth({ apiKeys: ApiKeys.fromHashes([hash]) });
    t.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ LINKPREVIEW_API_KEY_HASHES: hash }) } });
  });

  test('keygen prints the commands that add the digest to the SSM parameter or the secret, and that revoke it', () => {
    const { key, hash } = newKey();
    const text = keygenText(key, hash, { parameter: '/team/keys' });
    expect(text).toContain(`npx cdk deploy -c apiKeyHashes=${hash}`);
    expect(text).toContain(`aws ssm put-parameter --name /team/keys --type SecureString --value ${hash}\n`);
    expect(text).toContain(`--with-decryption --query Parameter.Value --output text),${hash}"`);
    expect(text).toContain(`aws secretsmanager create-secret --name linklens/api-key-hashes --secret-string ${hash}\n`);
    expect(text.match(new RegExp(`\\| ${dropDigest(hash).replace(/[|\\]/g, '\\$&')}\\)"`, 'g'))).toHaveLength(2);
    expect(text.split(key)).toHaveLength(2); // the key is printed once, at the top
    // The revoke filter drops exactly that digest from a comma-separated list.
    const [a, b] = [newKey().hash, newKey().hash];
    const filtered = execFileSync('sh', ['-c', `printf %s '${a},${hash},${b}' | ${dropDigest(hash)}`], { encoding: 'utf8' }).trim();
    expect(filtered).toBe(`${a},${b}`);
  });
});

describe('the browser worker (screenshots)', () => {
  const [browserId, browser] = fnBy('linklens-browser-worker');
  const [browserQueueId, browserQueue] = queueBy('BrowserJobsQueue');

  test('its own Lambda: nodejs24.x x86_64, its memory from the browser figures, the sharp and browser layers, one page at a time', () => {
    expect(browser.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Handler: 'index.handler',
      MemorySize: BROWSER_WORKER_MEMORY_MB,
      Architectures: ['x86_64'],
      TracingConfig: { Mode: 'Active' },
    });
    const layerIds = browser.Properties.Layers.map((l: any) => l.Ref);
    const layers = res('AWS::Lambda::LayerVersion');
    expect(layerIds.map((id: string) => layers[id].Properties.Description).sort()).toEqual([
      expect.stringMatching(/^headless Chromium for Lambda: @sparticuz\/chromium/),
      expect.stringMatching(/^sharp \+ libvips/),
    ]);
    expect(worker.Properties.Layers.map((l: any) => l.Ref)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^BrowserChromium/)]));
    expect(browser.Properties.Environment.Variables).toMatchObject({
      LINKPREVIEW_SCREENSHOTS: 'on',
      LINKPREVIEW_JOB_CONCURRENCY: '1',
      LINKPREVIEW_BUCKET: ref(bucketId),
    });
    expect(browser.Properties.Environment.Variables.LINKPREVIEW_BROWSER_QUEUE_URL).toBeUndefined();
  });

  test('behind the same fan-out: the preview sends screenshot jobs to the browser queue, which feeds the browser worker one at a time, with the shared DLQ', () => {
    const pv = preview.Properties.Environment.Variables;
    expect(pv).toMatchObject({ LINKPREVIEW_SCREENSHOTS: 'on', LINKPREVIEW_BROWSER_QUEUE_URL: ref(browserQueueId), LINKPREVIEW_JOB_QUEUE_URL: ref(queueId) });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [browserQueueId, 'Arn'] },
      FunctionName: ref(browserId),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 1,
    });
    expect(browserQueue.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 });
    expect(browserQueue.Properties.VisibilityTimeout).toBe(browser.Properties.Timeout * 6);
    const p = statementsOf(roleOf(preview))
      .filter((st: any) => actions(st).includes('sqs:SendMessage'))
      .map((st: any) => JSON.stringify(st.Resource))
      .join(' ');
    expect(p).toContain(browserQueueId);
    const w = statementsOf(roleOf(browser));
    // It sends only replies, to the preview containers' reply queues.
    const prefix = preview.Properties.Environment.Variables.LINKPREVIEW_REPLY_QUEUE_PREFIX;
    expect(w.filter((st: any) => actions(st).includes('sqs:SendMessage')).map((st: any) => JSON.stringify(st.Resource))).toEqual([
      expect.stringContaining(`:${prefix}*`),
    ]);
    expect(JSON.stringify(w.filter((st: any) => actions(st).includes('sqs:ReceiveMessage')).map((st: any) => st.Resource))).toContain(browserQueueId);
    const puts = w
      .filter((st: any) => actions(st).includes('s3:PutObject'))
      .map((st: any) => JSON.stringify(st.Resource))
      .join(' ');
    expect(puts).toContain('/assets/*');
    expect(puts).toContain('/jobs/*');
    expect(template.findOutputs('BrowserQueueUrl').BrowserQueueUrl.Value).toEqual(ref(browserQueueId));
    // The capture's own time cap: over the setting's default on purpose, no shorter than the
    // preview's job wait (the job's deadline ends a slow capture), and within the worker's timeout.
    const cap = Number(browser.Properties.Environment.Variables.LINKPREVIEW_SCREENSHOT_TIMEOUT_MS);
    expect(cap).toBe(LAMBDA_SCREENSHOT_TIMEOUT.toMilliseconds());
    expect(cap).toBeGreaterThan(DEFAULTS.screenshotTimeoutMs);
    expect(cap).toBeGreaterThanOrEqual(Number(pv.LINKPREVIEW_JOB_WAIT_MS));
    expect(cap).toBeLessThan(browser.Properties.Timeout * 1000);
    expect(cap).toBeLessThan(Number(pv.LINKPREVIEW_REQUEST_BUDGET_MS));
  });

  test('its lanes and memory follow from the browser figures: one page a batch and at a time, and its memory holds the worker, Chromium and that page at its cap, at least a vCPU', () => {
    const bv = browser.Properties.Environment.Variables;
    expect(AWS_BROWSER_LANES).toBe(1);
    expect(bv).toMatchObject({ LINKPREVIEW_JOB_CONCURRENCY: String(AWS_BROWSER_LANES), LINKPREVIEW_BROWSER_CONCURRENCY: String(AWS_BROWSER_LANES) });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: ref(browserId), BatchSize: AWS_BROWSER_LANES });
    // What the worker sees on Lambda: its env, with the memory Lambda sets.
    const env = Object.fromEntries(Object.entries(bv).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    const config = loadConfig({ ...env, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(browser.Properties.MemorySize) });
    expect(browserLanes(config)).toBe(AWS_BROWSER_LANES);
    const parts = WORKER_BASE_MB + WORKER_HEADROOM_MB + BROWSER_BASE_MB + AWS_BROWSER_LANES * config.browserPageMb;
    expect(browser.Properties.MemorySize).toBe(Math.max(LAMBDA_MB_PER_VCPU, parts));
    expect(config.browserPageMb).toBe(DEFAULTS.browserPageMb);
    // The memory admission lets one render in at a time, never two: the lanes hold on the worker's memory too.
    const budget = workerMemoryBudgetMb(config)!;
    expect(jobMemoryMb('render', config)).toBeLessThanOrEqual(budget);
    expect(2 * jobMemoryMb('render', config)).toBeGreaterThan(budget);
  });

  test('browserWorkerReservedConcurrency caps it', () => {
    const reserved = (props: Partial<LinkPreviewStackProps>) => {
      const t = synth(props);
      const fn = Object.values(t.findResources('AWS::Lambda::Function')).find(
        (f: any) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'linklens-browser-worker',
      ) as any;
      return fn.Properties.ReservedConcurrentExecutions;
    };
    expect(browser.Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(reserved({ browserWorkerReservedConcurrency: 3 })).toBe(3);
  });

  test('screenshots: false and render: off (no job needs the browser) leave out the browser worker, its queue and layer, and tell the preview', () => {
    const t = synth({ screenshots: false, render: 'off' });
    const fns = Object.values(t.findResources('AWS::Lambda::Function')).map((f: any) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME);
    expect(fns).not.toContain('linklens-browser-worker');
    expect(Object.keys(t.findResources('AWS::SQS::Queue')).some((id) => id.startsWith('BrowserJobs'))).toBe(false);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'linklens-preview', LINKPREVIEW_SCREENSHOTS: 'off', LINKPREVIEW_RENDER: 'off' }) },
    });
  });

  test('screenshots: false with renders on (the default auto): the browser worker stays, for the renders', () => {
    const t = synth({ screenshots: false });
    const fns = Object.values(t.findResources('AWS::Lambda::Function')).map((f: any) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME);
    expect(fns).toContain('linklens-browser-worker');
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'linklens-preview', LINKPREVIEW_SCREENSHOTS: 'off', LINKPREVIEW_RENDER: 'auto' }) },
    });
  });
});

describe('batches', () => {
  const [webhooksId, webhooks] = fnBy('linklens-webhooks');
  const [itemsId, items] = queueBy('BatchesItems');
  const [deliveriesId, deliveries] = queueBy('BatchesWebhooks');
  const mappingOf = (queue: string) => one('AWS::Lambda::EventSourceMapping', (r) => r.Properties.EventSourceArn['Fn::GetAtt'][0] === queue)[1].Properties;

  test("the items' queue: the preview function sends and consumes it, one item an invocation, at most 5 at once, with partial batch failures", () => {
    expect(items.Properties.VisibilityTimeout).toBe(preview.Properties.Timeout * 6);
    expect(items.Properties.RedrivePolicy.maxReceiveCount).toBe(ITEM_MAX_RECEIVES);
    const m = mappingOf(itemsId);
    expect(m).toMatchObject({
      FunctionName: ref(previewId),
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: DEFAULT_BATCH_CONCURRENCY },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(preview.Properties.Environment.Variables).toMatchObject({
      LINKPREVIEW_BATCH_QUEUE_URL: ref(itemsId),
      LINKPREVIEW_WEBHOOK_QUEUE_URL: ref(deliveriesId),
    });
    const sends = statementsOf(roleOf(preview)).filter((st: any) => actions(st).includes('sqs:SendMessage'));
    expect(sends.map((st: any) => JSON.stringify(st.Resource)).join(' ')).toContain(itemsId);
    expect(sends.map((st: any) => JSON.stringify(st.Resource)).join(' ')).toContain(deliveriesId);
    expect(() => synth({ batches: { concurrency: 1 } })).toThrow(/batches concurrency: 1 is not a whole number from 2 to 1000/);
  });

  test("the webhooks' queue: the webhook function consumes it ten at a time; a crashed delivery is back in 40 s, parked after its tries and three crashes", () => {
    expect(deliveries.Properties.VisibilityTimeout).toBe(WEBHOOK_VISIBILITY.toSeconds());
    expect(deliveries.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(webhooks.Properties.Timeout);
    expect(deliveries.Properties.RedrivePolicy.maxReceiveCount).toBe(DEFAULTS.webhookRetries.length + 1 + 3);
    expect(mappingOf(deliveriesId)).toMatchObject({ FunctionName: ref(webhooksId), BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    // Its retries set their own wait: ChangeMessageVisibility on its queue (the event source's grant).
    const consume = statementsOf(roleOf(webhooks)).find((st: any) => actions(st).includes('sqs:ChangeMessageVisibility'));
    expect(JSON.stringify(consume.Resource)).toContain(deliveriesId);
    // It sends nothing, and reads and writes only batches/.
    expect(statementsOf(roleOf(webhooks)).filter((st: any) => actions(st).includes('sqs:SendMessage'))).toEqual([]);
    const objects = statementsOf(roleOf(webhooks))
      .filter((st: any) => actions(st).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket'))
      .map((st: any) => JSON.stringify(st.Resource));
    expect(objects.length).toBeGreaterThan(0);
    for (const r of objects) expect(r).toContain('/batches/*');
  });

  test("the webhooks' secret: generated (44 base64 characters), read by the webhook function only; or one of the operator's, by name", () => {
    const [secretId, secret] = one('AWS::SecretsManager::Secret');
    expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 44, ExcludePunctuation: true, IncludeSpace: false });
    expect(webhooks.Properties.Environment.Variables.LINKPREVIEW_WEBHOOK_SECRET_ID).toEqual(ref(secretId));
    const reads = (fn: any) => statementsOf(roleOf(fn)).filter((st: any) => actions(st).includes('secretsmanager:GetSecretValue'));
    expect(JSON.stringify(reads(webhooks))).toContain(secretId);
    expect(reads(preview)).toEqual([]);
    const own = synth({ batches: { webhookSecret: 'linklens/webhooks' } });
    own.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const fn = Object.values(own.findResources('AWS::Lambda::Function')).find(
      (f: any) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'linklens-webhooks',
    ) as any;
    expect(fn.Properties.Environment.Variables.LINKPREVIEW_WEBHOOK_SECRET_ID).toBe('linklens/webhooks');
  });

  test("the records under batches/ expire a day after the batches' time (ttlDays), which both functions are told", () => {
    const rules = bucket.Properties.LifecycleConfiguration.Rules;
    expect(rules.find((r: any) => r.Prefix === 'batches/')).toMatchObject({ ExpirationInDays: DEFAULTS.batchTtlDays + 1, Status: 'Enabled' });
    const t = synth({ batches: { ttlDays: 3, maxQueuedPerKey: 500 } });
    const [, b] = Object.entries(t.findResources('AWS::S3::Bucket'))[0] as [string, any];
    expect(b.Properties.LifecycleConfiguration.Rules.find((r: any) => r.Prefix === 'batches/').ExpirationInDays).toBe(4);
    const fns = Object.values(t.findResources('AWS::Lambda::Function')).filter((f: any) =>
      ['linklens-preview', 'linklens-webhooks'].includes(f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME),
    ) as any[];
    expect(fns).toHaveLength(2);
    for (const f of fns) expect(f.Properties.Environment.Variables).toMatchObject({ LINKPREVIEW_BATCH_TTL_DAYS: '3', LINKPREVIEW_BATCH_MAX_QUEUED: '500' });
    expect(() => synth({ batches: { ttlDays: 0 } })).toThrow(/batches: .*LINKPREVIEW_BATCH_TTL_DAYS/);
  });

  test('alarms: each dead-letter queue, the webhook function crashing, and a webhook dead after its last try', () => {
    const props = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties);
    const named = (n: string) => props.find((p: any) => p.AlarmName === `Test-${n}`);
    expect(named('webhooks-dead')).toMatchObject({
      Namespace: 'linklens',
      MetricName: 'WebhooksDead',
      Dimensions: [{ Name: 'service', Value: 'linklens-webhooks' }],
      Threshold: 1,
    });
    expect(named('webhook-errors')).toMatchObject({ MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: ref(webhooksId) }] });
    for (const [n, q] of [
      ['batch-items-dead-letter-queue', items],
      ['webhooks-dead-letter-queue', deliveries],
    ] as const)
      expect(named(n).Dimensions[0].Value).toEqual({ 'Fn::GetAtt': [q.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0], 'QueueName'] });
  });

  test('enabled: false leaves them out: no routes, queues, webhook function or secret, and POST /previews is 404 in the preview', () => {
    const t = synth({ batches: { enabled: false } });
    const keys = Object.values(t.findResources('AWS::ApiGatewayV2::Route')).map((r: any) => r.Properties.RouteKey);
    expect(keys.filter((k) => k.includes('/previews'))).toEqual([]);
    t.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const services = Object.values(t.findResources('AWS::Lambda::Function')).map((f: any) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME);
    expect(services).not.toContain('linklens-webhooks');
    const pv = (Object.values(t.findResources('AWS::Lambda::Function')) as any[]).find(
      (f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'linklens-preview',
    );
    expect(pv.Properties.Environment.Variables.LINKPREVIEW_BATCH_QUEUE_URL).toBeUndefined();
    expect(Object.keys(t.findResources('AWS::SQS::Queue')).filter((id) => id.startsWith('Batches'))).toEqual([]);
  });
});

describe('alarms', () => {
  const [browserId] = fnBy('linklens-browser-worker');
  const alarms = (t: Template = template) => Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties);
  const alarm = (metricName: string, dimension: unknown, t: Template = template) => {
    const found = alarms(t).filter((p: any) => p.MetricName === metricName && JSON.stringify(p.Dimensions) === JSON.stringify([dimension]));
    expect(found).toHaveLength(1);
    return found[0];
  };
  const ofFunction = (id: string) => ({ Name: 'FunctionName', Value: ref(id) });
  const gte1 = { Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1, Period: 300, TreatMissingData: 'notBreaching' };

  test('the dead-letter queue (shared by the browser queue) alarms at one visible message', () => {
    expect(alarm('ApproximateNumberOfMessagesVisible', { Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } })).toMatchObject({
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      ...gte1,
    });
    expect(queueBy('BrowserJobsQueue')[1].Properties.RedrivePolicy.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [dlqId, 'Arn'] });
  });

  test('preview throttles: a sum of one in 5 minutes', () => {
    expect(alarm('Throttles', ofFunction(previewId))).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', ...gte1 });
  });

  test("preview errors: Lambda's Errors plus the 500s the handler answers itself (ServerErrors), one in 5 minutes", () => {
    const found = alarms().filter((p: any) => JSON.stringify(p.AlarmName).includes('preview-errors'));
    expect(found).toHaveLength(1);
    const p = found[0];
    expect(p).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' });
    const expr = p.Metrics.find((m: any) => m.Expression);
    expect(expr.Expression).toBe('FILL(invocationErrors, 0) + FILL(serverErrors, 0)');
    const byId = Object.fromEntries(p.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.Id, m.MetricStat]));
    expect(byId.invocationErrors).toMatchObject({
      Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [ofFunction(previewId)] },
      Stat: 'Sum',
      Period: 300,
    });
    // The namespace and dimension Powertools gives the function's own metrics (its env vars).
    const env = preview.Properties.Environment.Variables;
    expect(byId.serverErrors).toMatchObject({
      Metric: {
        Namespace: env.POWERTOOLS_METRICS_NAMESPACE,
        MetricName: 'ServerErrors',
        Dimensions: [{ Name: 'service', Value: env.POWERTOOLS_SERVICE_NAME }],
      },
      Stat: 'Sum',
      Period: 300,
    });
  });

  test('preview p95 duration above 80% of the preview timeout, in 2 of 3 periods', () => {
    const p = alarm('Duration', ofFunction(previewId));
    expect(p).toMatchObject({
      Namespace: 'AWS/Lambda',
      ExtendedStatistic: 'p95',
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      Period: 300,
      TreatMissingData: 'notBreaching',
    });
    expect(p.Statistic).toBeUndefined();
    expect(DURATION_ALARM_RATIO).toBe(0.8);
    expect(p.Threshold).toBe(preview.Properties.Timeout * 1000 * DURATION_ALARM_RATIO);
    expect(p.Threshold).toBe(mainStack.service.preview.timeout.toMilliseconds() * 0.8);
  });

  test('the threshold follows the PreviewFunction timeout', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Short');
    const fn = new PreviewFunction(stack, 'Preview', { timeout: Duration.seconds(20), requestBudget: Duration.seconds(15) });
    new Alarms(stack, 'Alarms', { deadLetterQueue: new sqs.Queue(stack, 'Dlq'), preview: fn, workers: {} });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Duration', ExtendedStatistic: 'p95', Threshold: 16000 });
    t.resourceCountIs('AWS::CloudWatch::Alarm', 4);
  });

  test('each worker alarms on its invocation errors (crashes; a failed job is a batch item failure)', () => {
    expect(alarm('Errors', ofFunction(workerId))).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', ...gte1 });
    expect(alarm('Errors', ofFunction(browserId))).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      AlarmName: 'Test-browser-worker-errors',
      ...gte1,
    });
    const t = synth({ screenshots: false, render: 'off' });
    // The worker, the webhook function and the page versions' origin (the preview's is an expression).
    expect(alarms(t).filter((p: any) => p.MetricName === 'Errors')).toHaveLength(3);
    expect(lastStack!.service.alarms.workerErrors.BrowserWorker).toBeUndefined();
  });

  test("the page versions' origin alarms on its invocation errors (a viewer's early request for a version got a 5xx)", () => {
    const [originId] = fnBy('linklens-version-origin');
    expect(alarm('Errors', ofFunction(originId))).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      AlarmName: 'Test-version-origin-errors',
      ...gte1,
    });
    expect(mainStack.service.alarms.versionOriginErrors).toBeDefined();
  });

  test('without a topic or an email the alarms have no actions and no topic is created', () => {
    expect(alarms()).toHaveLength(11);
    for (const p of alarms()) {
      expect(p.TreatMissingData).toBe('notBreaching');
      expect(p.AlarmActions).toBeUndefined();
      expect(p.OKActions).toBeUndefined();
    }
    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    expect(template.findOutputs('AlarmTopicArn')).toEqual({});
  });

  test('alarmEmail: a topic with the email subscribed; alarm and OK actions go to it', () => {
    const t = synth({ alarms: { email: 'ops@example.com' } });
    const stack = lastStack!;
    expect(stack.service.alarms.all).toHaveLength(11);
    const [topicId] = Object.keys(t.findResources('AWS::SNS::Topic'));
    t.resourceCountIs('AWS::SNS::Topic', 1);
    t.resourceCountIs('AWS::SNS::TopicPolicy', 0); // the default policy lets CloudWatch publish
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: ref(topicId) });
    for (const p of alarms(t)) {
      expect(p.AlarmActions).toEqual([ref(topicId)]);
      expect(p.OKActions).toEqual([ref(topicId)]);
    }
    expect(t.findOutputs('AlarmTopicArn').AlarmTopicArn.Value).toEqual(ref(topicId));
  });

  test('alarmTopicArn: the actions are that ARN, no topic is created', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops-alerts';
    const t = synth({ alarms: { topicArn: arn } });
    t.resourceCountIs('AWS::SNS::Topic', 0);
    t.resourceCountIs('AWS::SNS::Subscription', 0);
    expect(alarms(t)).toHaveLength(11);
    for (const p of alarms(t)) {
      expect(p.AlarmActions).toEqual([arn]);
      expect(p.OKActions).toEqual([arn]);
    }
    expect(lastStack!.service.alarms.topic!.topicArn).toBe(arn);
    Annotations.fromStack(lastStack!).hasNoWarning('*', Match.stringLikeRegexp('alarmTopicArn'));
    synth({ alarms: { topicArn: 'arn:aws:sns:us-east-1:123456789012:ops-alerts' } });
    Annotations.fromStack(lastStack!).hasWarning('*', Match.stringLikeRegexp('alarmTopicArn is in us-east-1 but the stack in eu-west-1'));
  });

  test('a bad email, a bad ARN or both fail synth with a clear message', () => {
    expect(() => synth({ alarms: { email: 'ops.example.com' } })).toThrow(/alarmEmail: "ops.example.com" is not an email address/);
    expect(() => synth({ alarms: { topicArn: 'arn:aws:sqs:eu-west-1:123456789012:ops' } })).toThrow(/alarmTopicArn: .* is not an SNS topic ARN/);
    expect(() => synth({ alarms: { topicArn: 'ops-alerts' } })).toThrow(/not an SNS topic ARN/);
    expect(() => synth({ alarms: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', email: 'ops@example.com' } })).toThrow(/give one/);
  });
});

test("outputs: API URL, CloudFront domain, preview function name and ARN, the webhooks' secret", () => {
  const outputs = template.findOutputs('*');
  expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'AssetsDomain', 'PreviewFunctionName', 'PreviewFunctionArn']));
  expect(JSON.stringify(outputs.ApiUrl.Value)).toContain('ApiEndpoint');
  expect(outputs.PreviewFunctionName.Value).toEqual(ref(previewId));
  expect(outputs.PreviewFunctionArn.Value).toEqual({ 'Fn::GetAtt': [previewId, 'Arn'] });
  expect(JSON.stringify(outputs.AssetsDomain.Value)).toContain('DomainName');
  // Batches: where the webhooks' secret is (its value is never in the template), and the deliveries that crashed again and again.
  const [secretId] = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
  expect(outputs.WebhookSecretArn.Value).toEqual(ref(secretId));
  expect(JSON.stringify(outputs.WebhookDeadLetterQueueUrl.Value)).toContain('BatchesWebhooksDeadLetterQueue');
});
