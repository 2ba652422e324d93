/**
 * The operator's forward proxy for the sites that wall datacenter addresses (lib/fetch/proxy-route.ts):
 * its URL, with its credentials, stays in a Secrets Manager secret or an SSM SecureString that the
 * functions read at run time and cache (never in the template or an environment variable). Every
 * function that fetches (the preview and the workers, whose image, media and browser requests take
 * the same route) gets the settings and may read that one secret or parameter.
 */
import { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { DEFAULTS, ENV, MEMO_MAX_TTL_MS } from '../../lib/core-settings.js';
import { bindParameterRead, bindSecretRead, checkParameterName, wholeSeconds } from './readable-values.js';

export interface OutboundProxyOptions {
  /**
   * `fallback` (default): direct first, the proxy after a wall or a refused connection, and for
   * the hosts in `hosts`. `hosts`: only `hosts`. `always`: every request.
   */
  mode?: 'fallback' | 'hosts' | 'always';
  /**
   * Hosts that go to the proxy first (`fallback`) or only (`hosts`); `amazon.com` also matches its
   * subdomains. Written as `<host>=proxy` host rules (LINKPREVIEW_HOST_RULES), merged after the
   * service's own `hostRules` (`withProxyHosts`, lib/fetch/host-rules.ts), never as the former
   * LINKPREVIEW_PROXY_HOSTS.
   */
  hosts?: string[];
  /** How long a walled host is remembered, its next preview going to the proxy first. Default one hour; at most a day. */
  memoTtl?: Duration;
  /** How long the functions cache the proxy URL before reading it again. Default: the setting's (LINKPREVIEW_PROXY_CACHE_S), 5 minutes. */
  cacheTtl?: Duration;
}

export interface ParameterProxyOptions extends OutboundProxyOptions {
  /** The customer managed KMS key of the SecureString (not needed with `aws/ssm`). */
  encryptionKey?: kms.IKey | string;
}

export abstract class OutboundProxy {
  /** The URL (`http://user:password@host:port`, or JSON `{"url": "..."}`) in a Secrets Manager secret: its name, complete ARN, or an ISecret. */
  static fromSecret(secret: string | secretsmanager.ISecret, options: OutboundProxyOptions = {}): OutboundProxy {
    return new SecretProxy(secret, options);
  }

  /** The URL in an SSM SecureString parameter: its name, ARN, or an IParameter. */
  static fromParameter(parameter: string | ssm.IParameter, options: ParameterProxyOptions = {}): OutboundProxy {
    checkParameterName(parameter, 'proxy parameter');
    return new ParameterProxy(parameter, options);
  }

  protected constructor(protected readonly options: OutboundProxyOptions) {
    const memo = options.memoTtl?.toMilliseconds();
    if (memo !== undefined && (memo < 0 || memo > MEMO_MAX_TTL_MS)) throw new Error(`proxy memoTtl: from 0 to a day (got ${memo} ms)`);
  }

  /** The hosts sent to the proxy first or only: the service writes them as host rules (LinkPreviewService). */
  get hosts(): readonly string[] {
    return this.options.hosts ?? [];
  }

  /** Sets the function's proxy variables (the hosts are host rules, set by the service) and lets it read the secret or parameter. */
  bind(fn: lambda.Function): void {
    this.bindSource(fn);
    fn.addEnvironment(ENV.proxyMode, this.options.mode ?? 'fallback');
    if (this.options.memoTtl) fn.addEnvironment(ENV.proxyMemoTtlMs, String(this.options.memoTtl.toMilliseconds()));
    fn.addEnvironment(ENV.proxyCacheSeconds, wholeSeconds(this.options.cacheTtl ?? Duration.seconds(DEFAULTS.proxyCacheSeconds), 'proxy cacheTtl'));
  }

  protected abstract bindSource(fn: lambda.Function): void;
}

class SecretProxy extends OutboundProxy {
  constructor(
    private readonly secret: string | secretsmanager.ISecret,
    options: OutboundProxyOptions,
  ) {
    super(options);
  }

  protected bindSource(fn: lambda.Function): void {
    bindSecretRead(fn, this.secret, { env: ENV.proxySecret, id: 'ProxySecret' });
  }
}

class ParameterProxy extends OutboundProxy {
  constructor(
    private readonly parameter: string | ssm.IParameter,
    private readonly parameterOptions: ParameterProxyOptions,
  ) {
    super(parameterOptions);
  }

  protected bindSource(fn: lambda.Function): void {
    bindParameterRead(fn, this.parameter, { env: ENV.proxyParameter, encryptionKey: this.parameterOptions.encryptionKey });
  }
}
