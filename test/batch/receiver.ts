/**
 * A webhook receiver on loopback for the batch tests: it verifies every delivery with the
 * `standardwebhooks` package (a delivery that does not verify is recorded as such and answered
 * 400), and answers each webhook-id as its `answer` says (fail the first N attempts, 410, a redirect).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  verified: boolean;
  /** The parsed event, when verified. */
  event?: { type: string; timestamp: string; data: any };
  answered: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Verified deliveries by webhook-id, in order. */
  byId(): Map<string, Delivery[]>;
  close(): Promise<void>;
  /** Resolves once `predicate` holds for the deliveries (checked at each delivery). */
  until(predicate: (deliveries: Delivery[]) => boolean): Promise<void>;
}

/** `answer(id, attempt)`: the status to answer the attempt-th delivery of `id` with (default 204). */
export async function startReceiver(secret: string, answer: (id: string, attempt: number, event: Delivery['event']) => number = () => 204): Promise<Receiver> {
  const wh = new Webhook(secret);
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  const waiters: { predicate: (d: Delivery[]) => boolean; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let event: Delivery['event'];
      let verified = false;
      try {
        event = wh.verify(body, headers) as Delivery['event'];
        verified = true;
      } catch {
        verified = false;
      }
      const n = (attempts.get(headers['webhook-id']) ?? 0) + 1;
      attempts.set(headers['webhook-id'], n);
      const status = verified ? answer(headers['webhook-id'], n, event) : 400;
      deliveries.push({
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        verified,
        event,
        answered: status,
      });
      if (status >= 300 && status < 400) res.writeHead(status, { location: 'http://127.0.0.1:9/elsewhere' });
      else res.writeHead(status);
      res.end();
      for (const w of waiters.splice(0)) {
        if (w.predicate(deliveries)) w.resolve();
        else waiters.push(w);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    byId() {
      const map = new Map<string, Delivery[]>();
      for (const d of deliveries) if (d.verified) map.set(d.id, [...(map.get(d.id) ?? []), d]);
      return map;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    until(predicate) {
      if (predicate(deliveries)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}
