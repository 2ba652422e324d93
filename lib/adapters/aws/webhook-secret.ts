/**
 * The webhooks' signer on AWS: its secrets read from a Secrets Manager secret
 * (LINKPREVIEW_WEBHOOK_SECRET_ID, which the CDK stack generates) with Powertools' provider, cached
 * for `maxAgeSeconds`, so a rotation (the new secret and the old one, both in the value) reaches
 * every webhook function within that time without a deploy.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { WebhookSigner, webhookSecretsIn } from '../../batch/webhooks.js';

/** How long a read secret is used before it is read again. */
export const WEBHOOK_SECRET_CACHE_S = 300;

export function secretWebhookSigner(options: { name: string; client?: SecretsManagerClient; maxAgeSeconds?: number }): () => Promise<WebhookSigner> {
  const provider = new SecretsProvider({ awsSdkV3Client: options.client });
  let last: { value: string; signer: WebhookSigner } | undefined;
  return async () => {
    const value = await provider.get(options.name, { maxAge: options.maxAgeSeconds ?? WEBHOOK_SECRET_CACHE_S });
    if (typeof value !== 'string') throw new Error(`The webhook secret ${options.name} holds no string`);
    if (last?.value !== value) last = { value, signer: new WebhookSigner(webhookSecretsIn(value)) };
    return last.signer;
  };
}
