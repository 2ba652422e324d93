/**
 * `npm run bench -- batch` (BENCH_CORPUS=<corpus dir>, one folder per case with `body.html` and a
 * `case.json` naming its `url`): the corpus's HTML pages served by a loopback origin (every name
 * resolves to it; the page at its own path, anything that looks like an image as one PNG, the rest
 * 404), previewed by the real local server (`startLocalServer`: its queues, its gate, screenshots
 * off) in four ways, each on a fresh server and data dir:
 *
 *  - `POST /` one at a time, and 10 at a time: previews per second;
 *  - the same links as batches of 100 (`POST /previews` with a callback): previews per second from
 *    the first submit to the last webhook (`batch.completed` of every batch), every delivery
 *    verified with `standardwebhooks`, and each record compared with `POST /`'s for the link
 *    (type, ok, status, title, description, language, site name, image present);
 *  - `POST /` one at a time of 40 links alone, then beside a batch of BENCH_BATCH_LINKS (1,000:
 *    the corpus repeated) of another key: their p50 and the ratio.
 *
 * BENCH_BATCH_LIMIT caps the corpus's links (default: all); BENCH_BATCH_LANES sets
 * LINKPREVIEW_BATCH_CONCURRENCY; BENCH_BATCH_ONLY=latency runs only the last part.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { startLocalServer } from '../../functions/local-server.js';
import { loadConfig } from '../../lib/config.js';
import type { Log } from '../../lib/log.js';
import { corpusPages, quantile } from './corpus.js';

const KEY = 'bench-key-0123456789';
const OTHER = 'bench-other-0123456789';
const SECRET = `whsec_${Buffer.from('linklens batch bench secret, 32b').toString('base64')}`;
const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

interface Origin {
  port: number;
  close(): Promise<void>;
}

/** The corpus's pages by `host + path + query`, at their own paths; images as one PNG. */
async function startOrigin(pages: Map<string, { body: Buffer; contentType: string }>): Promise<Origin> {
  const png = await sharp({ create: { width: 1200, height: 630, channels: 3, background: { r: 40, g: 90, b: 160 } } })
    .png()
    .toBuffer();
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const page = pages.get(`${host}${req.url ?? '/'}`);
    if (page) {
      res.writeHead(200, { 'content-type': page.contentType });
      res.end(page.body);
    } else if (/\.(png|jpe?g|gif|webp)(\?|$)|image|img|photo|media/i.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(png);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A receiver verifying every delivery with standardwebhooks; resolves `done` once `expected` batch.completed have come. */
async function startReceiver(expected: number) {
  const wh = new Webhook(SECRET);
  const records = new Map<string, Record<string, unknown>>();
  let deliveries = 0;
  let unverified = 0;
  let batches = 0;
  const finished = new Set<string>();
  let finish = () => {};
  const done = new Promise<number>((resolve) => {
    finish = () => resolve(performance.now());
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries++;
      try {
        const event = wh.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as { type: string; data: any };
        if (event.type === 'preview.completed' && event.data.item.record) records.set(event.data.item.id, event.data.item.record);
        // At least once: a batch's webhook may come twice (same webhook-id); the batches are counted once each.
        if (event.type === 'batch.completed' && !finished.has(event.data.batchId)) {
          finished.add(event.data.batchId);
          if (++batches === expected) finish();
        }
        res.writeHead(204);
      } catch {
        unverified++;
        res.writeHead(400);
      }
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    done,
    stats: () => ({ deliveries, unverified, records }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

type Server = Awaited<ReturnType<typeof startLocalServer>>;

async function server(): Promise<{ s: Server; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-batch-bench-'));
  const base = loadConfig({});
  const s = await startLocalServer({
    host: '127.0.0.1',
    port: 0,
    env: {},
    log: silentLog,
    config: {
      ...base,
      apiKeys: [KEY, OTHER],
      allowPrivateNetworks: true,
      dataDir,
      screenshots: 'off',
      webhookSecrets: [SECRET],
      batchConcurrency: Number(process.env.BENCH_BATCH_LANES) || base.batchConcurrency,
    },
    resolver: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  return { s, dataDir };
}

async function stop(x: { s: Server; dataDir: string }): Promise<void> {
  await x.s.close();
  rmSync(x.dataDir, { recursive: true, force: true });
}

async function preview(s: Server, link: string, key = KEY): Promise<{ ms: number; record: Record<string, any> }> {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  });
  const record = (await res.json()) as Record<string, any>;
  return { ms: performance.now() - t0, record };
}

/** `POST /` of every link, `width` at a time: the records by link and the previews per second. */
async function viaPost(links: string[], width: number): Promise<{ perSecond: number; records: Map<string, Record<string, any>> }> {
  const x = await server();
  await preview(x.s, links[0]); // the one-time loads (the language model, sharp) are not the run's
  const records = new Map<string, Record<string, any>>();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < links.length) {
        const link = links[next++];
        records.set(link, (await preview(x.s, link)).record);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await stop(x);
  return { perSecond: links.length / seconds, records };
}

async function submit(s: Server, links: string[], callbackUrl: string, key = KEY): Promise<{ batchId: string; items: { id: string; link: string }[] }> {
  const res = await fetch(`${s.url}/previews`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ links, callbackUrl }),
  });
  if (res.status !== 202) throw new Error(`POST /previews answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { batchId: string; items: { id: string; link: string }[] };
}

const chunks = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** What a card shows of a record: compared between a batch's record and POST /'s. */
const shown = (r: Record<string, any> | undefined) =>
  r && JSON.stringify([r.ok, r.status, r.type, r.title, r.description, r.language, r.siteName, Boolean(r.image), r.url]);

/** The links as batches of 100 with a callback: previews per second until the last webhook, and how each record compares with POST /'s. */
async function viaBatches(links: string[], direct: Map<string, Record<string, any>>) {
  const x = await server();
  await preview(x.s, links[0]);
  const batches = chunks(links, 100);
  const receiver = await startReceiver(batches.length);
  const t0 = performance.now();
  const submitted = [];
  for (const b of batches) submitted.push(await submit(x.s, b, receiver.url));
  const seconds = ((await receiver.done) - t0) / 1000;
  // Each item's record as its webhook carried it, against POST /'s record of its link.
  const { deliveries, unverified, records } = receiver.stats();
  // What became of each item's webhook when the batches' came (a retried one is still pending then).
  const states = new Map<string, number>();
  for (const b of submitted) {
    const res = await fetch(`${x.s.url}/previews/${b.batchId}`, { headers: { authorization: `Bearer ${KEY}` } });
    const batch = (await res.json()) as { items: { delivery?: { state: string; lastError?: string; lastStatus?: number } }[] };
    for (const i of batch.items) {
      const d = i.delivery;
      const key = d ? `${d.state}${d.lastError ? ` ${d.lastError}` : ''}${d.state !== 'delivered' && d.lastStatus ? ` ${d.lastStatus}` : ''}` : 'none';
      states.set(key, (states.get(key) ?? 0) + 1);
    }
  }
  let same = 0;
  const differ: string[] = [];
  for (const b of submitted)
    for (const item of b.items) {
      if (shown(records.get(item.id)) === shown(direct.get(item.link))) same++;
      else differ.push(item.link);
    }
  await receiver.close();
  await stop(x);
  return { perSecond: links.length / seconds, deliveries, unverified, same, differ, states };
}

/** 40 links one at a time by POST /, alone and beside another key's big batch: their p50s, and the batch's records as its webhooks carried them. */
async function besideBatch(probe: string[], batch: string[]) {
  const x = await server();
  await preview(x.s, probe[0]);
  const alone = [];
  for (const link of probe) alone.push((await preview(x.s, link)).ms);
  const receiver = await startReceiver(Math.ceil(batch.length / 100));
  const submitted = [];
  for (const b of chunks(batch, 100)) submitted.push(await submit(x.s, b, receiver.url, OTHER));
  const beside = [];
  for (const link of probe) beside.push((await preview(x.s, link)).ms);
  // The batch's items not finished when the probes were: it ran beside them the whole time if some are left.
  const store = x.s.batches.deps.store;
  let left = 0;
  for (const b of submitted) {
    const meta = await store.meta(b.batchId);
    if (meta) left += (await store.views(meta)).filter((i) => i.state === 'queued' || i.state === 'running').length;
  }
  await receiver.done;
  const { deliveries, unverified, records } = receiver.stats();
  const items = submitted.flatMap((b) => b.items);
  await receiver.close();
  await stop(x);
  return { alone: quantile(alone, 0.5), beside: quantile(beside, 0.5), leftWhenDone: left, deliveries, unverified, records, items };
}

export async function run(): Promise<void> {
  const dir = process.env.BENCH_CORPUS;
  if (!dir) {
    process.stdout.write('BENCH_CORPUS is not set: no corpus to batch (see the file comment)\n');
    return;
  }
  const limit = Number(process.env.BENCH_BATCH_LIMIT) || Number.POSITIVE_INFINITY;
  const found = corpusPages(dir).slice(0, limit);
  const origin = await startOrigin(new Map());
  const served = new Map<string, { body: Buffer; contentType: string }>();
  const links: string[] = [];
  for (const p of found) {
    const u = new URL(p.res.url);
    const link = `http://${u.hostname}:${origin.port}${u.pathname}${u.search}`;
    if (served.has(`${u.hostname}${u.pathname}${u.search}`)) continue;
    served.set(`${u.hostname}${u.pathname}${u.search}`, { body: p.res.body, contentType: p.contentType });
    links.push(link);
  }
  await origin.close();
  const live = await startOrigin(served);
  const at = (link: string) => link.replace(/:\d+\//, `:${live.port}/`);
  const all = links.map(at);

  process.stdout.write(`${all.length} links of the corpus; screenshots off; ${new Date().toISOString()}\n\n`);
  const direct = process.env.BENCH_BATCH_ONLY !== 'latency' ? await throughput(all) : undefined;
  await latency(all, served, direct);
  await live.close();
}

/** The three ways' previews per second, and the batches' webhooks and records; POST /'s records by link. */
async function throughput(all: string[]): Promise<Map<string, Record<string, any>>> {
  const one = await viaPost(all, 1);
  const ten = await viaPost(all, 10);
  const batched = await viaBatches(all, one.records);
  process.stdout.write('| how | previews per second |\n|---|---|\n');
  process.stdout.write(`| POST /, one at a time | ${one.perSecond.toFixed(1)} |\n`);
  process.stdout.write(`| POST /, 10 at a time | ${ten.perSecond.toFixed(1)} |\n`);
  process.stdout.write(`| POST /previews, batches of 100, until the last webhook | ${batched.perSecond.toFixed(1)} |\n\n`);
  process.stdout.write(
    `webhooks: ${batched.deliveries} delivered (items' at the end: ${[...batched.states].map(([k, n]) => `${k} ${n}`).join(', ')}), ${batched.unverified} not verified by standardwebhooks; records as POST / gives them: ${batched.same} of ${all.length}${batched.differ.length ? ` (differ: ${batched.differ.slice(0, 5).join(', ')})` : ''}\n\n`,
  );
  return one.records;
}

/** 40 links by POST / one at a time, alone and beside another key's batch of BENCH_BATCH_LINKS. */
async function latency(all: string[], served: Map<string, { body: Buffer; contentType: string }>, direct?: Map<string, Record<string, any>>): Promise<void> {
  const size = Number(process.env.BENCH_BATCH_LINKS) || 1000;
  const big = Array.from({ length: size }, (_, i) => all[i % all.length]);
  const probe = Array.from({ length: 40 }, (_, i) => `${all[(i * 7) % all.length]}${all[(i * 7) % all.length].includes('?') ? '&' : '?'}probe=${i}`);
  for (const link of probe) {
    const u = new URL(link);
    const original = served.get(`${u.hostname}${u.pathname}${u.search.replace(/[?&]probe=\d+$/, '')}`);
    if (original) served.set(`${u.hostname}${u.pathname}${u.search}`, original);
  }
  const p50s = await besideBatch(probe, big);
  process.stdout.write(`| POST / one at a time (40 links) | p50 |\n|---|---|\n`);
  process.stdout.write(`| alone | ${p50s.alone.toFixed(0)} ms |\n`);
  process.stdout.write(
    `| beside another key's batch of ${size} links | ${p50s.beside.toFixed(0)} ms (${(p50s.beside / p50s.alone).toFixed(2)}×; ${p50s.leftWhenDone} of its items still queued then) |\n`,
  );
  const delivered = p50s.items.filter((i) => p50s.records.has(i.id)).length;
  const same = direct ? p50s.items.filter((i) => shown(p50s.records.get(i.id)) === shown(direct.get(i.link))).length : undefined;
  process.stdout.write(
    `\nthe batch of ${size}: ${p50s.deliveries} webhooks, ${p50s.unverified} not verified by standardwebhooks; ${delivered} of ${p50s.items.length} items delivered with their record${same === undefined ? '' : `, ${same} as POST / gives them`}\n`,
  );
}
