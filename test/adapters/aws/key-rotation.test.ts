/**
 * Keys without a redeploy: the preview function's key store reads the digests from an SSM
 * parameter or a Secrets Manager secret through Powertools' providers and the real SDK clients,
 * over HTTP, against the loopback Parameter Store / Secrets Manager of test/helpers (only the
 * endpoint is overridden). A key added there is accepted once the cached value expires and is
 * read again; a revoked one is refused the same way. The waits are driven by the server's count
 * of reads, never by elapsed time.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { buildAwsDeps } from '../../../functions/aws-deps';
import { parseKeyHashes, sha256Hex } from '../../../lib/auth/key-store';
import { type Config, ConfigError } from '../../../lib/config';
import { createApiHandler } from '../../../lib/http/api-handler';
import type { HttpResponse } from '../../../lib/http/preview-handler';
import type { Log } from '../../../lib/log';
import { type ParameterStoreServer, startParameterStoreServer } from '../../helpers/parameter-store-server';
import { httpApiEvent, recordingLog, silentLog, testConfig } from '../../helpers/service';

const PARAMETER = '/linklens/api-key-hashes';
const SECRET = 'linklens/api-key-hashes';
const KEY_A = 'llk_key-a-0123456789abcdef';
const KEY_B = 'llk_key-b-0123456789abcdef';
const [HASH_A, HASH_B] = [sha256Hex(KEY_A), sha256Hex(KEY_B)];

let store: ParameterStoreServer;
const configs: (Config & { cleanup(): void })[] = [];
beforeEach(async () => {
  store = await startParameterStoreServer();
});
afterEach(async () => {
  await store.close();
});
afterAll(() => {
  for (const c of configs) c.cleanup();
});

const clientConfig = () => ({ endpoint: store.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });

/** The preview's API handler as the Lambda wires it (functions/aws-deps.ts), its keys from the loopback store. */
function service(overrides: Partial<Config>, log: Log = silentLog) {
  const config = testConfig({
    apiKeys: [],
    bucket: 'linklens-keys',
    jobQueueUrl: 'http://127.0.0.1:9/000000000000/jobs',
    publicUrl: 'https://d1.cloudfront.net',
    ...overrides,
  });
  configs.push(config);
  const deps = buildAwsDeps({
    config,
    log,
    // Never called here: the requests end at the key check or at the body's validation.
    s3: new S3Client(clientConfig()),
    sqs: new SQSClient(clientConfig()),
    ssm: new SSMClient(clientConfig()),
    secrets: new SecretsManagerClient(clientConfig()),
  });
  const handler = createApiHandler(deps);
  /** POST / with the key and a body that is not a request: 400 once the key is accepted, 401 when it is refused. */
  return async (key: string): Promise<number> => {
    const out = (await handler(httpApiEvent({ authorization: `Bearer ${key}`, 'content-type': 'application/json' }, Buffer.from('{}')), {
      awsRequestId: 'req',
    })) as HttpResponse;
    expect([400, 401, 500]).toContain(out.statusCode);
    return out.statusCode;
  };
}
const ACCEPTED = 400;
const REFUSED = 401;

/**
 * Calls with `key` until the store has been read again (the cached value expired), and returns
 * the statuses answered before that read and the one answered by the call that made it.
 */
async function untilReadAgain(call: (key: string) => Promise<number>, key: string, name: string): Promise<{ before: number[]; after: number }> {
  const reads = store.reads(name);
  const before: number[] = [];
  for (let i = 0; i < 200; i++) {
    const status = await call(key);
    if (store.reads(name) > reads) return { before, after: status };
    before.push(status);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} was not read again`);
}

test('SSM SecureString: a key added to the parameter is accepted after the cache time, a revoked one is refused', async () => {
  store.putParameter(PARAMETER, HASH_A, 'SecureString');
  const call = service({ apiKeyParameter: PARAMETER, apiKeyCacheSeconds: 1 });

  expect(await call(KEY_A)).toBe(ACCEPTED);
  expect(await call(KEY_B)).toBe(REFUSED);
  expect(store.reads(PARAMETER)).toBe(1);
  // The SDK's own request: JSON 1.1, signed, decrypting the SecureString.
  expect(store.requests[0]).toEqual({ target: 'AmazonSSM.GetParameter', body: { Name: PARAMETER, WithDecryption: true }, signed: true });

  // Add B: refused while the cached value lasts, accepted by the call that reads the parameter again.
  store.putParameter(PARAMETER, `${HASH_A},${HASH_B}`, 'SecureString');
  const added = await untilReadAgain(call, KEY_B, PARAMETER);
  expect(added.before.every((s) => s === REFUSED)).toBe(true);
  expect(added.after).toBe(ACCEPTED);
  expect(await call(KEY_A)).toBe(ACCEPTED);

  // Revoke A: accepted while the cached value lasts, refused from the next read on.
  store.putParameter(PARAMETER, HASH_B, 'SecureString');
  const revoked = await untilReadAgain(call, KEY_A, PARAMETER);
  expect(revoked.before.every((s) => s === ACCEPTED)).toBe(true);
  expect(revoked.after).toBe(REFUSED);
  expect(await call(KEY_B)).toBe(ACCEPTED);
});

test('within the cache time the parameter is not read again: a change waits for it (default cache, 300 s)', async () => {
  store.putParameter(PARAMETER, HASH_A, 'StringList');
  const config = testConfig();
  expect(config.apiKeyCacheSeconds).toBe(300);
  config.cleanup();
  const call = service({ apiKeyParameter: PARAMETER });
  expect(await call(KEY_A)).toBe(ACCEPTED);
  store.putParameter(PARAMETER, HASH_B, 'StringList');
  for (let i = 0; i < 5; i++) {
    expect(await call(KEY_A)).toBe(ACCEPTED);
    expect(await call(KEY_B)).toBe(REFUSED);
  }
  expect(store.reads(PARAMETER)).toBe(1);
});

test('an SSM StringList of digests works like the comma-separated SecureString', async () => {
  store.putParameter(PARAMETER, `${HASH_A},${HASH_B}`, 'StringList');
  const call = service({ apiKeyParameter: PARAMETER, apiKeyCacheSeconds: 60 });
  expect(await call(KEY_A)).toBe(ACCEPTED);
  expect(await call(KEY_B)).toBe(ACCEPTED);
  expect(await call('llk_other')).toBe(REFUSED);
});

test('Secrets Manager: a JSON array of digests; a key added is accepted after the cache time, a revoked one refused', async () => {
  store.putSecret(SECRET, JSON.stringify([HASH_A]));
  const call = service({ apiKeySecret: SECRET, apiKeyCacheSeconds: 1 });
  expect(await call(KEY_A)).toBe(ACCEPTED);
  expect(await call(KEY_B)).toBe(REFUSED);
  expect(store.requests[0]).toEqual({ target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET }, signed: true });

  store.putSecret(SECRET, JSON.stringify([HASH_B]));
  const rotated = await untilReadAgain(call, KEY_B, SECRET);
  expect(rotated.before.every((s) => s === REFUSED)).toBe(true);
  expect(rotated.after).toBe(ACCEPTED);
  expect(await call(KEY_A)).toBe(REFUSED);
});

test('the digests of the parameter add to LINKPREVIEW_API_KEY_HASHES', async () => {
  store.putParameter(PARAMETER, HASH_B);
  const call = service({ apiKeyHashes: [HASH_A], apiKeyParameter: PARAMETER });
  expect(await call(KEY_A)).toBe(ACCEPTED);
  expect(await call(KEY_B)).toBe(ACCEPTED);
});

test('an outage keeps the last digests in use (logged); with none read yet the request fails', async () => {
  store.putParameter(PARAMETER, HASH_A);
  const log = recordingLog();
  const call = service({ apiKeyParameter: PARAMETER, apiKeyCacheSeconds: 1 }, log);
  expect(await call(KEY_A)).toBe(ACCEPTED);
  store.failing = true;
  const during = await untilReadAgain(call, KEY_A, PARAMETER);
  expect(during.after).toBe(ACCEPTED);
  // The one failed read so far, logged.
  expect(log.lines.filter((l) => l.level === 'error' && l.message.startsWith('api keys: read failed'))).toHaveLength(1);
  expect(log.lines.find((l) => l.level === 'error')?.extra).toMatchObject({ source: `SSM parameter ${PARAMETER}` });
  expect(await call(KEY_B)).toBe(REFUSED);

  const cold = service({ apiKeyParameter: PARAMETER, apiKeyCacheSeconds: 1 });
  expect(await cold(KEY_A)).toBe(500);
});

test('entries that are not digests are ignored and logged without their value; a missing parameter fails the request', async () => {
  store.putParameter(PARAMETER, `${KEY_B}, ${HASH_A.toUpperCase()}`);
  const log = recordingLog();
  const call = service({ apiKeyParameter: PARAMETER }, log);
  expect(await call(KEY_A)).toBe(ACCEPTED);
  expect(await call(KEY_B)).toBe(REFUSED); // a plain key pasted into the parameter is never a key
  const warning = log.lines.find((l) => l.level === 'warn');
  expect(warning?.extra).toMatchObject({ invalid: 1, keys: 1 });
  expect(JSON.stringify(log.lines)).not.toContain(KEY_B);

  const missing = service({ apiKeyParameter: '/linklens/missing' });
  expect(await missing(KEY_A)).toBe(500);
});

test('a parameter and a secret at once are refused at start', () => {
  expect(() => service({ apiKeyParameter: PARAMETER, apiKeySecret: SECRET })).toThrow(ConfigError);
  expect(() => service({ apiKeyParameter: PARAMETER, apiKeySecret: SECRET })).toThrow(/LINKPREVIEW_API_KEY_PARAMETER and LINKPREVIEW_API_KEY_SECRET/);
});

test('parseKeyHashes: comma or white space separated, or a JSON array; anything else is counted, never kept', () => {
  expect(parseKeyHashes(` ${HASH_A},\n${HASH_B} `)).toEqual({ hashes: [HASH_A, HASH_B], invalid: 0 });
  expect(parseKeyHashes(JSON.stringify([HASH_A, 42, 'short']))).toEqual({ hashes: [HASH_A], invalid: 2 });
  expect(parseKeyHashes('[not json')).toEqual({ hashes: [], invalid: 1 });
  expect(parseKeyHashes('')).toEqual({ hashes: [], invalid: 0 });
});
