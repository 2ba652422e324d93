/**
 * `npm run bench -- herd`: what a loopback origin sees when a herd of previews arrives, through
 * the handler as the local server wires it (in-process jobs, assets on disk), every name mapped to
 * the origin. It counts every request by path and the most connections open at once, and gives the
 * answers' p50/p99:
 *  - 100 and 1,000 previews of one link at once;
 *  - 100 previews of 50 pages on one host at once;
 *  - 20 previews, one after another, of a host answering `429 Retry-After: 60`.
 * The origin answers each page after 40 ms (a distant site), so a herd has time to gather.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { buildLocalDeps } from '../../functions/wiring.js';
import { loadConfig } from '../../lib/config.js';
import { createApiHandler } from '../../lib/http/api-handler.js';
import type { Log } from '../../lib/log.js';

const KEY = 'bench-key-0123456789';
const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

interface Origin {
  port: number;
  asked: Map<string, number>;
  open: number;
  mostOpen: number;
  reset(): void;
  close(): Promise<void>;
}

async function startOrigin(): Promise<Origin> {
  const image = await sharp({ create: { width: 800, height: 420, channels: 3, background: { r: 200, g: 90, b: 40 } } })
    .png()
    .toBuffer();
  const origin = {
    port: 0,
    asked: new Map<string, number>(),
    open: 0,
    mostOpen: 0,
    reset() {
      this.asked.clear();
      this.mostOpen = this.open;
    },
  } as Origin;
  const server = http.createServer(async (req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    origin.asked.set(p, (origin.asked.get(p) ?? 0) + 1);
    if (p.startsWith('/busy')) {
      res.writeHead(429, { 'retry-after': '60', 'content-type': 'text/plain' });
      res.end('slow down');
      return;
    }
    if (p.startsWith('/img/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(image);
      return;
    }
    await new Promise((r) => setTimeout(r, 40));
    const n = p.replace(/\D/g, '') || '0';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>Story ${n}</title><meta name="description" content="What story ${n} says."><meta property="og:image" content="http://news.test:${origin.port}/img/${n}.png"></head><body><article><h1>Story ${n}</h1><p>${'Words of the story. '.repeat(60)}</p></article></body></html>`,
    );
  });
  server.on('connection', (s) => {
    origin.open++;
    origin.mostOpen = Math.max(origin.mostOpen, origin.open);
    s.on('close', () => {
      origin.open--;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin.port = (server.address() as AddressInfo).port;
  origin.close = () => new Promise<void>((r) => server.close(() => r()));
  return origin;
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export async function run(): Promise<void> {
  const origin = await startOrigin();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-herd-'));
  const config = { ...loadConfig({ LINKPREVIEW_API_KEYS: KEY, LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true' }), dataDir };
  const deps = buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test', resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
  const handler = createApiHandler(deps);
  let n = 0;
  const preview = async (link: string) => {
    const t0 = performance.now();
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/',
      rawQueryString: '',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      requestContext: { http: { method: 'POST', path: '/' }, requestId: `herd-${n++}`, stage: '$default' },
      body: JSON.stringify({ link }),
      isBase64Encoded: false,
    };
    const out = (await handler(event, { awsRequestId: `herd-${n}` })) as { statusCode: number; body: string };
    return { ms: performance.now() - t0, status: out.statusCode, record: JSON.parse(out.body) };
  };
  const at = (p: string) => `http://news.test:${origin.port}${p}`;
  // One preview first: the process's one-time loads (the language model, sharp) are not the herd's.
  await preview(at('/story/0'));
  const herds: [string, () => Promise<{ ms: number }[]>][] = [
    ['100 previews of one link at once', () => Promise.all(Array.from({ length: 100 }, () => preview(at('/story/1'))))],
    ['1,000 previews of one link at once', () => Promise.all(Array.from({ length: 1000 }, () => preview(at('/story/2'))))],
    ['100 previews of 50 pages on one host at once', () => Promise.all(Array.from({ length: 100 }, (_, i) => preview(at(`/story/${100 + (i % 50)}`))))],
    [
      '20 previews, one after another, of a host answering 429 Retry-After: 60',
      async () => {
        const out = [];
        for (let i = 0; i < 20; i++) out.push(await preview(at('/busy/1')));
        return out;
      },
    ],
  ];
  process.stdout.write('| herd | page GETs | image GETs | connections at once | other GETs (icons) | p50 | p99 |\n|---|---|---|---|---|---|---|\n');
  for (const [name, herd] of herds) {
    origin.reset();
    const answers = await herd();
    let pages = 0;
    let images = 0;
    let other = 0;
    for (const [p, count] of origin.asked) {
      if (p.startsWith('/img/')) images += count;
      else if (p.startsWith('/story/') || p.startsWith('/busy/')) pages += count;
      else other += count;
    }
    const ms = answers.map((a) => a.ms);
    process.stdout.write(
      `| ${name} | ${pages} | ${images} | ${origin.mostOpen} | ${other} | ${percentile(ms, 50).toFixed(0)} ms | ${percentile(ms, 99).toFixed(0)} ms |\n`,
    );
  }
  await origin.close();
  rmSync(dataDir, { recursive: true, force: true });
}
