/**
 * LinkPreviewService embedded in someone else's stack, as docs/deploy-aws.md shows it: a caller
 * Lambda of theirs gets lambda:InvokeFunction on the preview function, and the outputs they add
 * point at the service's API and CloudFront domain. The keys come from an SSM parameter (or a
 * secret) that the preview role alone may read, exactly that one. Synthesized without bundling
 * (context aws:cdk:bundling-stacks = [], tiny layer folders).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { ApiKeys, LinkPreviewService, type LinkPreviewServiceProps, OutboundProxy } from '../../cdk/link-preview-service';
import { configWarnings, loadConfig } from '../../lib/config';
import { hostRulesOf } from '../../lib/fetch/host-rules';

process.env.CDK_VALIDATION = 'false';

const ENV = { account: '123456789012', region: 'eu-west-1' };
const PARAMETER = '/linklens/api-key-hashes';
/** An ARN as CDK writes it for the stack's own account and region: the partition stays a reference. */
const arn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] });
const PARAMETER_ARN = arn(`:ssm:eu-west-1:123456789012:parameter${PARAMETER}`);

function tinyLayer(name: string): lambda.Code {
  const dir = mkdtempSync(path.join(tmpdir(), `linklens-layer-${name}-`));
  writeFileSync(path.join(dir, 'README'), name);
  return lambda.Code.fromAsset(dir);
}
/** New Code instances for each stack (CDK binds an asset to one stack). */
const layerCode = () => ({ ffmpeg: tinyLayer('ffmpeg'), sharp: tinyLayer('sharp'), chromium: tinyLayer('chromium') });

/** The user's app: their own stack, their function, the service, the grant and two outputs. */
function userApp(props: Partial<LinkPreviewServiceProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'MyApp', { env: ENV });
  const caller = new lambda.Function(stack, 'Caller', {
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => ({ ok: true });'),
  });
  const links = new LinkPreviewService(stack, 'Links', { apiKeys: ApiKeys.fromParameter(PARAMETER), layerCode: layerCode(), ...props });
  links.grantInvoke(caller);
  caller.addEnvironment('LINKLENS_FUNCTION', links.previewFunction.functionName);
  new CfnOutput(stack, 'LinkPreviewApiUrl', { value: links.api.url });
  new CfnOutput(stack, 'LinkPreviewAssetsDomain', { value: links.assetsDomain });
  return { stack, links, caller, template: Template.fromStack(stack) };
}

const { template, stack } = userApp();
const functions = template.findResources('AWS::Lambda::Function');
const idOf = (pred: (r: any) => boolean) => {
  const ids = Object.entries(functions)
    .filter(([, r]) => pred(r))
    .map(([id]) => id);
  expect(ids).toHaveLength(1);
  return ids[0];
};
const previewId = idOf((r) => r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'linklens-preview');
const callerId = idOf((r) => r.Properties.Code?.ZipFile !== undefined);
const roleOf = (id: string) => functions[id].Properties.Role['Fn::GetAtt'][0];
const statementsOf = (t: Template, roleId: string) =>
  Object.values(t.findResources('AWS::IAM::Policy'))
    .filter((p: any) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p: any) => p.Properties.PolicyDocument.Statement);
const actions = (s: any): string[] => [].concat(s.Action);
const resources = (s: any): unknown[] => [].concat(s.Resource);

test('the caller may invoke the preview function, and only that', () => {
  const statements = statementsOf(template, roleOf(callerId));
  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'lambda:InvokeFunction' });
  expect(resources(statements[0])).toEqual([{ 'Fn::GetAtt': [previewId, 'Arn'] }, { 'Fn::Join': ['', [{ 'Fn::GetAtt': [previewId, 'Arn'] }, ':*']] }]);
  // The preview function's name reaches the caller for @linklens/client/lambda's createLambdaClient.
  expect(functions[callerId].Properties.Environment.Variables.LINKLENS_FUNCTION).toEqual({ Ref: previewId });
});

test("the outputs the user adds are the service's API URL and CloudFront domain; the service adds none of its own", () => {
  const outputs = template.findOutputs('*');
  expect(Object.keys(outputs).sort()).toEqual(['LinkPreviewApiUrl', 'LinkPreviewAssetsDomain']);
  const [apiId] = Object.keys(template.findResources('AWS::ApiGatewayV2::Api'));
  const [distributionId] = Object.keys(template.findResources('AWS::CloudFront::Distribution'));
  expect(outputs.LinkPreviewApiUrl.Value).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/']] });
  expect(outputs.LinkPreviewAssetsDomain.Value).toEqual({ 'Fn::GetAtt': [distributionId, 'DomainName'] });
});

/** The webhook function's read of the webhooks' secret (cdk/constructs/batches.ts), which every deployment with batches has. */
const isWebhookSecretRead = (s: any) => JSON.stringify(s.Resource).includes('BatchesWebhookSecret');

test('the whole service is inside the construct: its resources and alarm names carry its id', () => {
  template.resourceCountIs('AWS::Lambda::Function', 6); // preview, worker, browser worker, the page versions' origin, webhooks, the caller
  template.resourceCountIs('AWS::SQS::Queue', 7); // jobs, browser jobs, their dead letters; batch items, webhooks, a dead-letter queue each
  template.resourceCountIs('AWS::ApiGatewayV2::Route', 9); // POST /, GET /oembed, GET /status, GET /openapi.json, the playground's three, the batches' two
  expect(previewId).toMatch(/^LinksPreviewFunction/);
  const names = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties.AlarmName);
  expect(names).toHaveLength(11);
  for (const n of names) expect(n).toMatch(/^MyApp-Links-/);
  expect(stack.resolve(stack.stackName)).toBe('MyApp');
});

test('keys from SSM: the env names the parameter and the cache time; the preview role may ssm:GetParameter on exactly that ARN', () => {
  const env = functions[previewId].Properties.Environment.Variables;
  expect(env).toMatchObject({ LINKPREVIEW_API_KEY_PARAMETER: PARAMETER, LINKPREVIEW_API_KEY_CACHE_S: '300' });
  expect(env.LINKPREVIEW_API_KEY_HASHES).toBeUndefined();
  expect(env.LINKPREVIEW_API_KEY_SECRET).toBeUndefined();
  const ssmStatements = statementsOf(template, roleOf(previewId)).filter((s: any) => actions(s).some((a) => a.startsWith('ssm:') || a.startsWith('kms:')));
  expect(ssmStatements).toEqual([{ Effect: 'Allow', Action: 'ssm:GetParameter', Resource: PARAMETER_ARN }]);
  // No other role reads parameters, secrets or keys (but the webhook function, the webhooks' own secret).
  const all = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
  const reads = all.filter((s: any) => actions(s).some((a) => /^(ssm|secretsmanager|kms):/.test(a)) && !isWebhookSecretRead(s));
  expect(reads).toHaveLength(1);
});

test('a SecureString under a customer managed key: kms:Decrypt on that key through SSM only; a set cache time', () => {
  const keyArn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const { template: t } = userApp({ apiKeys: ApiKeys.fromParameter(PARAMETER, { encryptionKey: keyArn, cacheTtl: Duration.seconds(30) }) });
  const fns = t.findResources('AWS::Lambda::Function');
  const [id, preview] = Object.entries(fns).find(
    ([, r]: [string, any]) => r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'linklens-preview',
  ) as [string, any];
  expect(preview.Properties.Environment.Variables.LINKPREVIEW_API_KEY_CACHE_S).toBe('30');
  const statements = statementsOf(t, preview.Properties.Role['Fn::GetAtt'][0]).filter((s: any) => actions(s).some((a) => /^(ssm|kms):/.test(a)));
  expect(statements).toEqual([
    { Effect: 'Allow', Action: 'ssm:GetParameter', Resource: PARAMETER_ARN },
    {
      Effect: 'Allow',
      Action: 'kms:Decrypt',
      Resource: keyArn,
      Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['ssm.eu-west-1.', { Ref: 'AWS::URLSuffix' }]] } } },
    },
  ]);
  expect(id).toMatch(/^LinksPreviewFunction/);
});

test('a parameter of the same stack (IParameter, a StringList) is named by its own name and ARN', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const own = new Stack(app, 'Own', { env: ENV });
  const parameter = new ssm.StringListParameter(own, 'KeyHashes', { stringListValue: ['a'.repeat(64)] });
  const links = new LinkPreviewService(own, 'Links', { apiKeys: ApiKeys.fromParameter(parameter), layerCode: layerCode(), screenshots: false, render: 'off' });
  const t = Template.fromStack(own);
  const [parameterId] = Object.keys(t.findResources('AWS::SSM::Parameter'));
  const preview = t.findResources('AWS::Lambda::Function')[own.getLogicalId(links.previewFunction.node.defaultChild as lambda.CfnFunction)] as any;
  expect(preview.Properties.Environment.Variables.LINKPREVIEW_API_KEY_PARAMETER).toEqual({ Ref: parameterId });
  const statements = statementsOf(t, preview.Properties.Role['Fn::GetAtt'][0]).filter((s: any) => actions(s).some((a) => a.startsWith('ssm:')));
  expect(statements).toHaveLength(1);
  expect(statements[0].Action).toBe('ssm:GetParameter');
  expect(JSON.stringify(statements[0].Resource)).toContain(parameterId);
});

test('keys from Secrets Manager: the env names the secret; the preview role may read that secret only', () => {
  const { template: t } = userApp({ apiKeys: ApiKeys.fromSecret('linklens/api-key-hashes', { cacheTtl: Duration.minutes(1) }) });
  const fns = t.findResources('AWS::Lambda::Function');
  const preview = Object.values(fns).find((r: any) => r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'linklens-preview') as any;
  expect(preview.Properties.Environment.Variables).toMatchObject({ LINKPREVIEW_API_KEY_SECRET: 'linklens/api-key-hashes', LINKPREVIEW_API_KEY_CACHE_S: '60' });
  expect(preview.Properties.Environment.Variables.LINKPREVIEW_API_KEY_PARAMETER).toBeUndefined();
  const statements = statementsOf(t, preview.Properties.Role['Fn::GetAtt'][0]).filter((s: any) => actions(s).some((a) => /^(ssm|secretsmanager|kms):/.test(a)));
  expect(statements).toHaveLength(1);
  expect(actions(statements[0]).sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
  expect(statements[0].Resource).toEqual(arn(':secretsmanager:eu-west-1:123456789012:secret:linklens/api-key-hashes-??????'));
});

test('a bad parameter name, a plain key among the hashes or a fractional cache time fail at once', () => {
  expect(() => ApiKeys.fromParameter('not a name!')).toThrow(/not an SSM parameter name or ARN/);
  expect(() => ApiKeys.fromHashes(['llk_plainkey'])).toThrow(/not a SHA-256 hex digest/);
  expect(() => userApp({ apiKeys: ApiKeys.fromParameter(PARAMETER, { cacheTtl: Duration.millis(1500) }) })).toThrow(/whole seconds/);
});

describe('the forward proxy (OutboundProxy)', () => {
  /** Each function's env and the secret/parameter reads of its role, by the service name it logs as (not the page versions' origin: it fetches nothing). */
  function fetchingFunctions(t: Template) {
    return Object.values(t.findResources('AWS::Lambda::Function'))
      .filter((r: any) => /^linklens-(?!version-origin)/.test(r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME ?? ''))
      .map((r: any) => ({
        name: r.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME as string,
        env: r.Properties.Environment.Variables as Record<string, unknown>,
        reads: statementsOf(t, r.Properties.Role['Fn::GetAtt'][0]).filter(
          (s: any) => actions(s).some((a) => /^(ssm|secretsmanager|kms):/.test(a)) && !isWebhookSecretRead(s),
        ),
      }));
  }

  test('from a secret: the preview and both workers get the settings and may read that secret only; no URL in the template', () => {
    const { template: t } = userApp({
      apiKeys: ApiKeys.fromHashes(['a'.repeat(64)]),
      proxy: OutboundProxy.fromSecret('linklens/proxy-url', { hosts: ['amazon.com', 'reddit.com'], memoTtl: Duration.minutes(30) }),
    });
    const fns = fetchingFunctions(t);
    expect(fns.map((f) => f.name).sort()).toEqual(['linklens-browser-worker', 'linklens-preview', 'linklens-webhooks', 'linklens-worker']);
    for (const f of fns) {
      expect(f.env).toMatchObject({
        LINKPREVIEW_PROXY_SECRET: 'linklens/proxy-url',
        LINKPREVIEW_PROXY_MODE: 'fallback',
        LINKPREVIEW_HOST_RULES: 'amazon.com=proxy;reddit.com=proxy',
        LINKPREVIEW_PROXY_MEMO_TTL_MS: '1800000',
        LINKPREVIEW_PROXY_CACHE_S: '300',
      });
      // The hosts are host rules: no function gets the former variable, so none warns at start.
      expect(f.env.LINKPREVIEW_PROXY_HOSTS).toBeUndefined();
      const literal = Object.fromEntries(Object.entries(f.env).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
      expect(configWarnings(literal)).toEqual([]);
      expect(f.env.LINKPREVIEW_PROXY_URL).toBeUndefined();
      expect(f.reads).toHaveLength(1);
      expect(actions(f.reads[0]).sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      expect(f.reads[0].Resource).toEqual(arn(':secretsmanager:eu-west-1:123456789012:secret:linklens/proxy-url-??????'));
    }
    expect(JSON.stringify(t.toJSON())).not.toMatch(/https?:\/\/[^"]*@/);
  });

  test('from an SSM SecureString under its own key: ssm:GetParameter on it, kms:Decrypt through SSM; mode always', () => {
    const keyArn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const { template: t } = userApp({
      apiKeys: ApiKeys.fromHashes(['a'.repeat(64)]),
      proxy: OutboundProxy.fromParameter('/linklens/proxy-url', { mode: 'always', encryptionKey: keyArn }),
      screenshots: false,
      render: 'off',
    });
    const fns = fetchingFunctions(t);
    expect(fns.map((f) => f.name).sort()).toEqual(['linklens-preview', 'linklens-webhooks', 'linklens-worker']);
    for (const f of fns) {
      expect(f.env).toMatchObject({ LINKPREVIEW_PROXY_PARAMETER: '/linklens/proxy-url', LINKPREVIEW_PROXY_MODE: 'always' });
      expect(f.reads.map((s: any) => s.Action)).toEqual(['ssm:GetParameter', 'kms:Decrypt']);
      expect(f.reads[0].Resource).toEqual(arn(':ssm:eu-west-1:123456789012:parameter/linklens/proxy-url'));
    }
  });

  test("the proxy's hosts merged after the service's own hostRules, as rules of one table; a bad host fails synth", () => {
    const { template: t } = userApp({
      apiKeys: ApiKeys.fromHashes(['a'.repeat(64)]),
      hostRules: 'intranet.example=deny;*.example=render;*=allow',
      proxy: OutboundProxy.fromSecret('linklens/proxy-url', { hosts: ['shop.example', 'amazon.com'] }),
    });
    const fns = fetchingFunctions(t);
    expect(fns).toHaveLength(4);
    const written = 'intranet.example=deny;shop.example=render,proxy;*.example=render;amazon.com=allow,proxy;*=allow';
    for (const f of fns) {
      expect(f.env.LINKPREVIEW_HOST_RULES).toBe(written);
      expect(f.env.LINKPREVIEW_PROXY_HOSTS).toBeUndefined();
      // What the functions read: the operator's rules first, and the hosts go to the proxy.
      const rules = hostRulesOf(loadConfig({ LINKPREVIEW_HOST_RULES: String(f.env.LINKPREVIEW_HOST_RULES) }));
      expect([...rules.verdict('https://www.shop.example/item').actions].sort()).toEqual(['proxy', 'render']);
      expect([...rules.verdict('https://amazon.com/dp/1').actions].sort()).toEqual(['allow', 'proxy']);
      expect([...rules.verdict('https://intranet.example/').actions]).toEqual(['deny']);
    }
    expect(() => userApp({ apiKeys: ApiKeys.fromHashes(['a'.repeat(64)]), proxy: OutboundProxy.fromSecret('s', { hosts: ['amazon.com:8443'] }) })).toThrow(
      /proxy hosts: rule "amazon.com:8443=proxy"/,
    );
  });

  test('without a proxy no function has a proxy setting; a bad name or memo time fails at once', () => {
    for (const f of fetchingFunctions(template)) expect(Object.keys(f.env).filter((k) => k.startsWith('LINKPREVIEW_PROXY_'))).toEqual([]);
    expect(() => OutboundProxy.fromParameter('not a name!')).toThrow(/not an SSM parameter name or ARN/);
    expect(() => OutboundProxy.fromSecret('s', { memoTtl: Duration.days(2) })).toThrow(/memoTtl/);
  });
});
