/**
 * Key digests from AWS, read with Powertools' parameter providers (which cache each value for
 * `maxAgeSeconds`): an SSM parameter (SecureString, String or StringList) or a Secrets Manager
 * secret. The parsing and the behaviour on a failed read are lib/auth/key-store.ts's.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { keyHashSource } from '../../auth/key-store.js';
import type { Log } from '../../log.js';
import type { KeyHashSource } from '../../ports.js';

export interface AwsKeyHashSourceOptions {
  /** The parameter's or secret's name or ARN. */
  name: string;
  /** How long a read value is used before it is read again. */
  maxAgeSeconds: number;
  log: Log;
  /** After a failed read, the last digests stay in use this long. */
  retryAfterMs?: number;
}

/** The digests in an SSM parameter: a SecureString (decrypted), String or StringList of comma-separated digests. */
export function ssmKeyHashSource(options: AwsKeyHashSourceOptions & { client?: SSMClient }): KeyHashSource {
  const provider = new SSMProvider({ awsSdkV3Client: options.client });
  return keyHashSource(() => provider.get(options.name, { maxAge: options.maxAgeSeconds, decrypt: true }), {
    name: `SSM parameter ${options.name}`,
    log: options.log,
    retryAfterMs: options.retryAfterMs,
  });
}

/** The digests in a Secrets Manager secret: comma-separated, or a JSON array of strings. */
export function secretKeyHashSource(options: AwsKeyHashSourceOptions & { client?: SecretsManagerClient }): KeyHashSource {
  const provider = new SecretsProvider({ awsSdkV3Client: options.client });
  return keyHashSource(() => provider.get(options.name, { maxAge: options.maxAgeSeconds }), {
    name: `secret ${options.name}`,
    log: options.log,
    retryAfterMs: options.retryAfterMs,
  });
}
