/**
 * The forward proxy's URL from AWS, read with Powertools' parameter providers (each value cached
 * for `maxAgeSeconds`): an SSM SecureString or a Secrets Manager secret, as the key digests are
 * (key-hash-source.ts). The value is the URL itself, or a JSON object with a `url` field. It holds
 * the proxy's credentials, so no message here repeats it.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { type ProxyEndpoint, parseProxyUrl } from '../../fetch/proxy-url.js';
import type { Log } from '../../log.js';

export interface AwsProxySourceOptions {
  /** An SSM parameter's name or ARN (a SecureString, decrypted). */
  parameter?: string;
  /** Or a Secrets Manager secret's name or ARN. */
  secret?: string;
  /** How long a read value is used before it is read again. */
  maxAgeSeconds: number;
  log: Pick<Log, 'error'>;
  ssm?: SSMClient;
  secrets?: SecretsManagerClient;
}

/** The URL in a parameter's or secret's value: the text itself, or `{"url": "..."}`. */
export function proxyUrlOf(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text.startsWith('{')) {
    const url = (JSON.parse(text) as { url?: unknown }).url;
    if (typeof url === 'string') return url;
    throw new TypeError('the proxy secret is JSON without a url field');
  }
  return text;
}

/**
 * The proxy endpoint as the parameter or the secret holds it. A failed read keeps the last
 * endpoint read; with none, the read fails (the proxied request then fails as PROXY_FAILURE).
 */
export function awsProxyEndpoint(options: AwsProxySourceOptions): () => Promise<ProxyEndpoint | undefined> {
  const { parameter, secret } = options;
  const where = parameter ? `SSM parameter ${parameter}` : `secret ${secret}`;
  const read: () => Promise<unknown> = parameter
    ? (() => {
        const provider = new SSMProvider({ awsSdkV3Client: options.ssm });
        return () => provider.get(parameter, { maxAge: options.maxAgeSeconds, decrypt: true });
      })()
    : (() => {
        const provider = new SecretsProvider({ awsSdkV3Client: options.secrets });
        return () => provider.get(secret ?? '', { maxAge: options.maxAgeSeconds });
      })();
  let last: { text: string; endpoint: ProxyEndpoint } | undefined;
  return async () => {
    try {
      const text = proxyUrlOf(await read());
      if (!text) return undefined;
      if (last?.text !== text) last = { text, endpoint: parseProxyUrl(text) };
      return last.endpoint;
    } catch (err) {
      // The error's own message may quote the value (a JSON parse error): only its name is logged.
      options.log.error('the proxy URL could not be read', { source: where, error: (err as Error).name });
      if (last) return last.endpoint;
      throw new Error(`the proxy URL could not be read from the ${where}`);
    }
  };
}
