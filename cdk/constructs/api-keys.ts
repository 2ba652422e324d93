import { ArnFormat, Duration, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { ENV } from '../../lib/core-settings.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** How long the preview function caches the digests of a parameter or a secret (an added or revoked key takes effect within it). */
export const DEFAULT_KEY_CACHE = Duration.minutes(5);

export interface RemoteKeysOptions {
  /** How long the function caches the digests before reading them again (whole seconds, at most a day). Default 5 minutes. */
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
  const seconds = (options.cacheTtl ?? DEFAULT_KEY_CACHE).toSeconds({ integral: false });
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 86_400) throw new Error(`apiKeys cacheTtl: whole seconds from 0 to 86400 (got ${seconds})`);
  return String(seconds);
}

class ParameterKeys extends ApiKeys {
  constructor(
    private readonly parameter: string | ssm.IParameter,
    private readonly options: ParameterKeysOptions,
  ) {
    super();
    if (
      typeof parameter === 'string' &&
      !Token.isUnresolved(parameter) &&
      !/^(arn:aws[a-z-]*:ssm:[^:]*:\d{12}:parameter)?\/?[A-Za-z0-9_.\-/]{1,2011}$/.test(parameter)
    ) {
      throw new Error(`apiKeyParameter: "${parameter}" is not an SSM parameter name or ARN`);
    }
  }

  bind(fn: lambda.Function): void {
    const stack = Stack.of(fn);
    const p = this.parameter;
    const { name, arn } =
      typeof p !== 'string'
        ? { name: p.parameterName, arn: p.parameterArn }
        : p.startsWith('arn:')
          ? { name: p, arn: p }
          : {
              name: p,
              arn: stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: p.replace(/^\//, ''), arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
            };
    fn.addEnvironment(ENV.apiKeyParameter, name);
    fn.addEnvironment(ENV.apiKeyCacheSeconds, cacheSeconds(this.options));
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [arn] }));
    // A customer managed key: decrypt through SSM only. The AWS managed key (aws/ssm) lets every
    // principal of the account decrypt through SSM, so it needs no statement.
    const key = this.options.encryptionKey;
    if (key !== undefined) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [typeof key === 'string' ? key : key.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `ssm.${stack.region}.${stack.urlSuffix}` } },
        }),
      );
    }
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
    const s = this.secret;
    const secret =
      typeof s !== 'string'
        ? s
        : s.startsWith('arn:')
          ? secretsmanager.Secret.fromSecretCompleteArn(fn, 'ApiKeySecret', s)
          : secretsmanager.Secret.fromSecretNameV2(fn, 'ApiKeySecret', s);
    fn.addEnvironment(ENV.apiKeySecret, secret.secretFullArn ?? secret.secretName);
    fn.addEnvironment(ENV.apiKeyCacheSeconds, cacheSeconds(this.options));
    // GetSecretValue and DescribeSecret on this secret, and kms:Decrypt (through Secrets Manager) when it has its own key.
    secret.grantRead(fn);
  }
}
