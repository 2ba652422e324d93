/**
 * The proxy URL on AWS (lib/adapters/aws/proxy-source.ts): read from an SSM SecureString or a
 * Secrets Manager secret on a loopback store that speaks their protocol, with the real SDK clients
 * and Powertools' providers; cached for its max age; a failed read keeps the last URL; no message
 * or log line repeats the value.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { awsProxyEndpoint, proxyUrlOf } from '../../../lib/adapters/aws/proxy-source';
import { type ParameterStoreServer, startParameterStoreServer } from '../../helpers/parameter-store-server';
import { recordingLog } from '../../helpers/service';

let store: ParameterStoreServer;
beforeEach(async () => {
  store = await startParameterStoreServer();
});
afterEach(() => store.close());

const clientConfig = () => ({ endpoint: store.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });

test('from an SSM SecureString: the endpoint with its Basic credentials, read once within the cache time', async () => {
  store.putParameter('/linklens/proxy-url', 'http://scraper:s3cret@proxy.internal:3128', 'SecureString');
  const endpoint = awsProxyEndpoint({ parameter: '/linklens/proxy-url', maxAgeSeconds: 300, log: recordingLog(), ssm: new SSMClient(clientConfig()) });
  const e = await endpoint();
  expect(e).toEqual({
    protocol: 'http:',
    host: 'proxy.internal',
    port: 3128,
    authorization: `Basic ${Buffer.from('scraper:s3cret').toString('base64')}`,
    label: 'http://proxy.internal:3128',
  });
  await endpoint();
  expect(store.reads('/linklens/proxy-url')).toBe(1);
});

test('from a secret, as JSON {"url": ...}; an outage keeps the last URL, and nothing logged holds the value', async () => {
  store.putSecret('linklens/proxy-url', JSON.stringify({ url: 'https://u:s3cret@proxy.example:8443' }));
  const log = recordingLog();
  const endpoint = awsProxyEndpoint({ secret: 'linklens/proxy-url', maxAgeSeconds: 0, log, secrets: new SecretsManagerClient(clientConfig()) });
  expect((await endpoint())?.label).toBe('https://proxy.example:8443');
  store.failing = true;
  expect((await endpoint())?.label).toBe('https://proxy.example:8443');
  expect(log.lines.map((l) => l.message)).toContain('the proxy URL could not be read');
  expect(JSON.stringify(log.lines)).not.toContain('s3cret');
});

test('no value ever read and the store failing: the read fails, naming the source only', async () => {
  store.failing = true;
  const endpoint = awsProxyEndpoint({ secret: 'linklens/proxy-url', maxAgeSeconds: 0, log: recordingLog(), secrets: new SecretsManagerClient(clientConfig()) });
  await expect(endpoint()).rejects.toThrow('the proxy URL could not be read from the secret linklens/proxy-url');
});

test('the value: the URL itself or JSON with a url', () => {
  expect(proxyUrlOf(' http://h:1 ')).toBe('http://h:1');
  expect(proxyUrlOf('{"url":"http://h:1"}')).toBe('http://h:1');
  expect(() => proxyUrlOf('{"uri":"http://h:1"}')).toThrow(/without a url field/);
});
