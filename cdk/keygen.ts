/**
 * `npm run keygen`: prints a new random bearer key, its SHA-256 hex digest, and the commands that
 * give the digest to the stack: as context (a redeploy), or in the SSM parameter or the Secrets
 * Manager secret the stack reads at run time (`-c apiKeyParameter=` / `-c apiKeySecret=`), with
 * the commands that revoke it later. Give the key to the caller; only the digest goes to AWS.
 *
 *   npm run keygen [-- --parameter /linklens/api-key-hashes] [--secret linklens/api-key-hashes]
 */
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

export const DEFAULT_KEY_PARAMETER = '/linklens/api-key-hashes';
export const DEFAULT_KEY_SECRET = 'linklens/api-key-hashes';

export function newKey(): { key: string; hash: string } {
  const key = `llk_${randomBytes(32).toString('base64url')}`;
  return { key, hash: createHash('sha256').update(key, 'utf8').digest('hex') };
}

/** The shell filter that drops one digest from a comma-separated list on stdin (the revoke commands use it). */
export const dropDigest = (hash: string): string => `tr ',' '\\n' | grep -vxF ${hash} | paste -sd, -`;

/** What keygen prints for a key, with the parameter's and the secret's names. */
export function keygenText(key: string, hash: string, names: { parameter?: string; secret?: string } = {}): string {
  const p = names.parameter ?? DEFAULT_KEY_PARAMETER;
  const s = names.secret ?? DEFAULT_KEY_SECRET;
  const getParameter = `aws ssm get-parameter --name ${p} --with-decryption --query Parameter.Value --output text`;
  const getSecret = `aws secretsmanager get-secret-value --secret-id ${s} --query SecretString --output text`;
  return `key:    ${key}
sha256: ${hash}

Give the key to the caller ("Authorization: Bearer ${key.slice(0, 8)}..."). Only the digest goes to AWS.

Keys as stack context (a change is a redeploy):
  npx cdk deploy -c apiKeyHashes=${hash}[,<existing digests>]

Keys in an SSM parameter (deploy once with -c apiKeyParameter=${p}; a change takes effect
within the function's cache time, 5 minutes by default):
  # the first key
  aws ssm put-parameter --name ${p} --type SecureString --value ${hash}
  # add this key to the others
  aws ssm put-parameter --name ${p} --type SecureString --overwrite --value "$(${getParameter}),${hash}"
  # revoke this key (the list without its digest)
  aws ssm put-parameter --name ${p} --type SecureString --overwrite --value "$(${getParameter} | ${dropDigest(hash)})"

Keys in a Secrets Manager secret (deploy once with -c apiKeySecret=${s}):
  # the first key
  aws secretsmanager create-secret --name ${s} --secret-string ${hash}
  # add this key to the others
  aws secretsmanager put-secret-value --secret-id ${s} --secret-string "$(${getSecret}),${hash}"
  # revoke this key
  aws secretsmanager put-secret-value --secret-id ${s} --secret-string "$(${getSecret} | ${dropDigest(hash)})"
`;
}

if (process.argv[1] && /keygen\.[cm]?[jt]s$/.test(process.argv[1])) {
  const { values } = parseArgs({ options: { parameter: { type: 'string' }, secret: { type: 'string' } } });
  const { key, hash } = newKey();
  process.stdout.write(keygenText(key, hash, values));
}
