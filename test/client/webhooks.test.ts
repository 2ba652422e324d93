/**
 * @linklens/client's verifyWebhook (Web Crypto, no dependency) against the `standardwebhooks`
 * package both ways, and the server's signer (lib/batch/webhooks.ts) against both; then the
 * client's submit and batch against the local server.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookSigner } from '../../lib/batch/webhooks';
import { createHttpClient, verifyWebhook, WebhookVerificationError } from '../../lib/client/index';
import { startReceiver } from '../batch/receiver';
import { html, startFixtureServer } from '../helpers/fixture-server';
import { startTestServer, TEST_KEY } from '../helpers/service';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({
  type: 'preview.completed',
  timestamp: '2026-11-29T12:00:00.000Z',
  data: { batchId: 'bat_x', item: { id: 'bat_x.0', index: 0, link: 'https://example.com/', state: 'done' } },
});

test('a delivery signed by standardwebhooks verifies, with either of two secrets while they rotate', async () => {
  const [a, b] = [secret(), secret()];
  const at = new Date();
  const id = 'msg_bat_x_0';
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(a).sign(id, at, body) };
  expect(await verifyWebhook(headers, body, a)).toMatchObject({ type: 'preview.completed' });
  expect(await verifyWebhook(new Headers(headers), body, [b, a])).toMatchObject({ data: { batchId: 'bat_x' } });
  await expect(verifyWebhook(headers, body, b)).rejects.toThrow(WebhookVerificationError);
});

test('a tampered body, id or timestamp, a timestamp 5 minutes off, or missing headers do not verify', async () => {
  const s = secret();
  const at = new Date();
  const id = 'msg_bat_x_0';
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(s).sign(id, at, body) };
  await expect(verifyWebhook(headers, body.replace('done', 'failed'), s)).rejects.toThrow('No matching signature');
  await expect(verifyWebhook({ ...headers, 'webhook-id': 'msg_other' }, body, s)).rejects.toThrow('No matching signature');
  await expect(verifyWebhook({ ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }, body, s)).rejects.toThrow(
    'No matching signature',
  );
  await expect(verifyWebhook(headers, body, s, at.getTime() + 301_000)).rejects.toThrow('5 minutes');
  await expect(verifyWebhook({ 'webhook-id': id }, body, s)).rejects.toThrow('Missing');
});

test("the server's signatures (two secrets) verify with standardwebhooks and with the client, with each secret", async () => {
  const [current, previous] = [secret(), secret()];
  const at = new Date();
  const headers = new WebhookSigner([current, previous]).headers('msg_bat_y_batch', at, body);
  expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
  for (const s of [current, previous]) {
    expect(new Webhook(s).verify(body, headers)).toMatchObject({ type: 'preview.completed' });
    expect(await verifyWebhook(headers, body, s)).toMatchObject({ type: 'preview.completed' });
  }
  expect(() => new Webhook(secret()).verify(body, headers)).toThrow();
});

test("the client's submit and batch: a batch queued, read back done, and its webhooks verified by verifyWebhook", async () => {
  const s = secret();
  const site = await startFixtureServer({ '/a': { body: html('<title>Client batch</title><meta name="description" content="Submitted by the client.">') } });
  const receiver = await startReceiver(s);
  const server = await startTestServer({ webhookSecrets: [s] });
  try {
    const client = createHttpClient({ baseUrl: server.url, apiKey: TEST_KEY });
    const accepted = await client.submit([site.url('/a'), { link: 'not a link at all' }], { callbackUrl: receiver.url });
    expect(accepted).toMatchObject({ state: 'queued', counts: { queued: 1, failed: 1 } });
    let batch = await client.batch(accepted.batchId);
    while (batch.state !== 'done') {
      await new Promise((r) => setTimeout(r, 25));
      batch = await client.batch(accepted.batchId);
    }
    expect(batch.items[0].record).toMatchObject({ ok: true, title: 'Client batch' });
    await receiver.until((d) => d.some((x) => x.event?.type === 'batch.completed'));
    for (const d of receiver.deliveries) {
      const event = await verifyWebhook({ 'webhook-id': d.id, 'webhook-timestamp': d.timestamp, 'webhook-signature': d.signature }, d.body, s);
      expect(['preview.completed', 'batch.completed']).toContain(event.type);
    }
    await expect(client.batch('bat_AAAAAAAAAAAAAAAAAAAAAA')).rejects.toMatchObject({ status: 404, errorCode: 'BATCH_NOT_FOUND' });
  } finally {
    await Promise.all([site.close(), receiver.close()]);
    await server.close();
    server.cleanup();
  }
});
