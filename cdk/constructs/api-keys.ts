import { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { DEFAULTS, ENV } from '../../lib/core-settings.js';
import { bindParameterRead, bindSecretRead, checkParameterName, wholeSeconds } from './readable-values.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** How long the preview function caches the digests of a parameter or a secret (an added or revoked key takes effect within it). */
export const DEFAULT_KEY_CACHE = Duration.seconds(DEFAULTS.apiKeyCacheSeconds);

export interface RemoteKeysOptions {
  /** How long the function caches the digests before reading them again (whole seconds, at most a day). Default: the setting's (LINKPREVIEW_API_KEY_CACHE_S), 5 minutes. */
  cacheTtl?: Duration;
}

export interface ParameterKeysOptions extends RemoteKeysOptions {
  /**
   * The customer managed KMS key (or its ARN) of a SecureString: the function may then decrypt
   * with it, through SSM only. Not needed with the AWS managed key `aws/ssm`.
   */
  encryptionKey?: kms.IKey | string;
}

/**
 * Where the preview function finds the SHA-256 digests of the bearer keys (`npm run keygen`):
 * fixed in its environment (a change is a redeploy), or in an SSM parameter or a Secrets Manager
 * secret that it reads and caches (a change takes effect within the cache time). The function's
 * role may read that one parameter or secret and nothing else.
 */
export abstract class ApiKeys {
  /** Digests in the function's environment (LINKPREVIEW_API_KEY_HASHES). None: every API call is refused. */
  static fromHashes(hashes: string[]): ApiKeys {
    const normal = hashes.map((h) => h.trim().toLowerCase()).filter(Boolean);
    for (const h of normal) {
      if (!SHA256_HEX.test(h)) throw new Error(`apiKeyHashes: "${h.slice(0, 12)}..." is not a SHA-256 hex digest (use npm run keygen; never pass a plain key)`);
    }
    return new FixedKeys(normal);
  }

  /**
   * Digests in an SSM parameter (a name such as `/linklens/api-key-hashes`, an ARN, or an
   * IParameter): a SecureString or String of comma-separated digests, or a StringList.
   */
  static fromParameter(parameter: string | ssm.IParameter, options: ParameterKeysOptions = {}): ApiKeys {
    return new ParameterKeys(parameter, options);
  }

  /**
   * Digests in a Secrets Manager secret (its name, its complete ARN, or an ISecret): comma-separated,
   * or a JSON array of strings.
   */
  static fromSecret(secret: string | secretsmanager.ISecret, options: RemoteKeysOptions = {}): ApiKeys {
    return new SecretKeys(secret, options);
  }

  /** Sets the function's key variables and grants it what reading them needs. */
  abstract bind(fn: lambda.Function): void;
}

class FixedKeys extends ApiKeys {
  constructor(private readonly hashes: string[]) {
    super();
  }

  bind(fn: lambda.Function): void {
    fn.addEnvironment(ENV.apiKeyHashes, this.hashes.join(','));
  }
}

function cacheSeconds(options: RemoteKeysOptions): string {
  return wholeSeconds(options.cacheTtl ?? DEFAULT_KEY_CACHE, 'apiKeys cacheTtl');
}

class ParameterKeys extends ApiKeys {
  constructor(
    private readonly parameter: string | ssm.IParameter,
    private readonly options: ParameterKeysOptions,
  ) {
    super();
    checkParameterName(parameter, 'apiKeyParameter');
  }

  bind(fn: lambda.Function): void {
    bindParameterRead(fn, this.parameter, { env: ENV.apiKeyParameter, encryptionKey: this.options.encryptionKey });
    fn.addEnvironment(ENV.apiKeyCacheSeconds, cacheSeconds(this.options));
  }
}

class SecretKeys extends ApiKeys {
  constructor(
    private readonly secret: string | secretsmanager.ISecret,
    private readonly options: RemoteKeysOptions,
  ) {
    super();
  }

  bind(fn: lambda.Function): void {
    bindSecretRead(fn, this.secret, { env: ENV.apiKeySecret, id: 'ApiKeySecret' });
    fn.addEnvironment(ENV.apiKeyCacheSeconds, cacheSeconds(this.options));
  }
}
