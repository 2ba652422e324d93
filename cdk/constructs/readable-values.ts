/**
 * A value a function reads at run time from an SSM parameter or a Secrets Manager secret (the key
 * digests, the proxy URL): its name in the function's environment, and a grant to read that one
 * parameter or secret and nothing else.
 */
import { ArnFormat, type Duration, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';

/** Throws when a literal name is neither an SSM parameter name nor its ARN (`what` names the prop). */
export function checkParameterName(parameter: string | ssm.IParameter, what: string): void {
  if (
    typeof parameter === 'string' &&
    !Token.isUnresolved(parameter) &&
    !/^(arn:aws[a-z-]*:ssm:[^:]*:\d{12}:parameter)?\/?[A-Za-z0-9_.\-/]{1,2011}$/.test(parameter)
  ) {
    throw new Error(`${what}: "${parameter}" is not an SSM parameter name or ARN`);
  }
}

/** A duration as the whole seconds a cache setting takes (0 to a day). */
export function wholeSeconds(duration: Duration, what: string): string {
  const seconds = duration.toSeconds({ integral: false });
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 86_400) throw new Error(`${what}: whole seconds from 0 to 86400 (got ${seconds})`);
  return String(seconds);
}

/**
 * Names the parameter in `env` and lets the function read it (ssm:GetParameter on it alone). A
 * customer managed key: decrypt through SSM only. The AWS managed key (aws/ssm) lets every
 * principal of the account decrypt through SSM, so it needs no statement.
 */
export function bindParameterRead(fn: lambda.Function, parameter: string | ssm.IParameter, options: { env: string; encryptionKey?: kms.IKey | string }): void {
  const stack = Stack.of(fn);
  const p = parameter;
  const { name, arn } =
    typeof p !== 'string'
      ? { name: p.parameterName, arn: p.parameterArn }
      : p.startsWith('arn:')
        ? { name: p, arn: p }
        : {
            name: p,
            arn: stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: p.replace(/^\//, ''), arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
          };
  fn.addEnvironment(options.env, name);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [arn] }));
  const key = options.encryptionKey;
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

/**
 * Names the secret in `env` and lets the function read it: GetSecretValue and DescribeSecret on
 * this secret, and kms:Decrypt (through Secrets Manager) when it has its own key. `id` names the
 * imported secret under the function when the secret is given by name or ARN.
 */
export function bindSecretRead(fn: lambda.Function, secret: string | secretsmanager.ISecret, options: { env: string; id: string }): void {
  const s =
    typeof secret !== 'string'
      ? secret
      : secret.startsWith('arn:')
        ? secretsmanager.Secret.fromSecretCompleteArn(fn, options.id, secret)
        : secretsmanager.Secret.fromSecretNameV2(fn, options.id, secret);
  fn.addEnvironment(options.env, s.secretFullArn ?? s.secretName);
  s.grantRead(fn);
}
