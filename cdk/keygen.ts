/**
 * `npm run keygen`: prints a new random bearer key and its SHA-256 hex digest. Give the key to
 * the caller; give only the digest to the stack (`-c apiKeyHashes=<digest>,<other digests>`).
 */
import { createHash, randomBytes } from 'node:crypto';

export function newKey(): { key: string; hash: string } {
  const key = `llk_${randomBytes(32).toString('base64url')}`;
  return { key, hash: createHash('sha256').update(key, 'utf8').digest('hex') };
}

if (process.argv[1] && /keygen\.[cm]?[jt]s$/.test(process.argv[1])) {
  const { key, hash } = newKey();
  process.stdout.write(`key:    ${key}\nsha256: ${hash}\n\nGive the key to the caller ("Authorization: Bearer ${key.slice(0, 8)}...").\nDeploy with the hash only: npx cdk deploy -c apiKeyHashes=${hash}[,<existing hashes>]\n`);
}
