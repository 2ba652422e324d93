/**
 * `npm run bench -- hostile`: how long the caps and deadlines take to stop hostile input. The
 * tests assert only outcomes and ordering (a cap, not the budget, stopped it; the record came while
 * the stalled upstream was still open); the elapsed times they used to bound are printed here:
 *  - the extraction parse of a page nested 100,000 deep (stopped at PAGE_LIMITS.maxDepth), and of
 *    the same page with the nesting cap lifted (what the time check alone gave: seconds);
 *  - whole previews of hostile upstream pages (test/hardening/hostile-upstream.test.ts) and of
 *    hostile media files (test/hardening/hostile-media.test.ts), through the real handler;
 *  - a stalled page and a stalled image under a 1.5 s time budget (test/http/time-budget.test.ts,
 *    test/media/hosted-images.test.ts): the answer's time against the budget;
 *  - a decoder killed at its 300 ms cap and on an abort after 200 ms (test/media-types/caps.test.ts);
 *  - the inline job runner: two 150 ms jobs side by side, and a job cut at a 200 ms deadline
 *    (test/jobs/inline-job-runner.test.ts).
 * Loopback only: the fixture server and the handler run in this process.
 */

import type http from 'node:http';
import zlib from 'node:zlib';
import { buildLocalDeps } from '../../functions/wiring.js';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner.js';
import type { Config } from '../../lib/config.js';
import { PAGE_LIMITS } from '../../lib/extract/page-data.js';
import { parsePage } from '../../lib/extract/parse-page.js';
import { createApiHandler } from '../../lib/http/api-handler.js';
import { ffmpegBinary, runTool } from '../../lib/media/run-tool.js';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server.js';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../helpers/service.js';
import { pngChunk } from '../media/fixtures';
import { median, timeRuns } from './bench.js';

const MB = 1024 * 1024;
const fmt = (times: number[]) => `median ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)})`;

function handlerFor(overrides: Partial<Config>) {
  const config = testConfig(overrides);
  const handler = createApiHandler(buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' }));
  const preview = async (link: string) => {
    const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link })));
    return (await handler(event, { awsRequestId: 'bench' })) as { statusCode: number; body: string };
  };
  return { preview, cleanup: () => config.cleanup() };
}

function greyPng(width: number, height: number, idat: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}

async function parseFigures(runs: number): Promise<void> {
  const nested = `<html><head><title>Nested</title></head><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`;
  const unclosed = `<html><head><title>Unclosed</title></head><body>${'<div><span><b>'.repeat(60_000)}</body></html>`;
  for (const [name, page] of [
    ['nested 100,000 deep', nested],
    ['unclosed 180,000 deep', unclosed],
  ] as const) {
    const capped = await timeRuns(runs, async () => parsePage(page));
    const maxDepth = PAGE_LIMITS.maxDepth;
    PAGE_LIMITS.maxDepth = Number.POSITIVE_INFINITY;
    let uncapped: number[];
    try {
      uncapped = await timeRuns(1, async () => parsePage(page), 0);
    } finally {
      PAGE_LIMITS.maxDepth = maxDepth;
    }
    process.stdout.write(
      `parse, ${name}: at the nesting cap ${fmt(capped)}; without it (time check only, parseMs ${PAGE_LIMITS.parseMs}) ${uncapped[0].toFixed(0)} ms\n`,
    );
  }
}

async function upstreamFigures(runs: number): Promise<void> {
  const bomb = Buffer.alloc(50 * MB, 0x20);
  const site = await startFixtureServer({
    '/trickle': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><head><title>Trickled</title>');
      const t = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(t));
    },
    '/gzip-bomb': {
      headers: { 'content-encoding': 'gzip' },
      body: zlib.gzipSync(Buffer.concat([Buffer.from('<html><head><title>Gzip bomb</title></head><body>'), bomb])),
    },
    '/html-20mb': { body: `<html><head><title>Twenty</title></head><body>${'<p>lorem ipsum dolor</p>'.repeat(Math.ceil((20 * MB) / 24))}</body></html>` },
    '/nested': { body: `<html><head><title>Nested</title></head><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>` },
    '/nested-unclosed': { body: `<html><head><title>Unclosed</title></head><body>${'<div><span><b>'.repeat(60_000)}</body></html>` },
    '/meta-flood': { body: `<html><head><title>Metas</title>${'<meta name="keywords" content="a,b,c">'.repeat(200_000)}</head></html>` },
    '/loop': { status: 302, headers: { location: '/loop' } },
  });
  const h = handlerFor({ fetchTimeoutMs: 1500, maxPageBytes: 2 * MB });
  try {
    for (const route of ['/nested', '/nested-unclosed', '/html-20mb', '/meta-flood', '/gzip-bomb', '/loop', '/trickle']) {
      const times = await timeRuns(route === '/trickle' ? 1 : runs, () => h.preview(site.url(route)));
      process.stdout.write(`upstream ${route}: ${fmt(times)}${route === '/trickle' ? ' (the 1.5 s fetch timeout)' : ''}\n`);
    }
  } finally {
    h.cleanup();
    await site.close();
  }
}

async function mediaFigures(runs: number): Promise<void> {
  const site = await startFixtureServer({
    '/pixel-bomb.png': { headers: { 'content-type': 'image/png' }, body: greyPng(100_000, 100_000, zlib.deflateSync(Buffer.alloc(1000))) },
    '/decompression-bomb.png': { headers: { 'content-type': 'image/png' }, body: greyPng(12_000, 12_000, zlib.deflateSync(Buffer.alloc(12_001 * 12_000))) },
    '/laughs.svg': {
      headers: { 'content-type': 'image/svg+xml' },
      body: '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&b;</text></svg>',
    },
  });
  const h = handlerFor({ jobWaitMs: 8000, mediaDecodeTimeoutMs: 4000 });
  try {
    for (const route of ['/pixel-bomb.png', '/decompression-bomb.png', '/laughs.svg']) {
      process.stdout.write(`media ${route}: ${fmt(await timeRuns(runs, () => h.preview(site.url(route))))}\n`);
    }
  } finally {
    h.cleanup();
    await site.close();
  }
}

async function budgetFigures(): Promise<void> {
  const open: http.ServerResponse[] = [];
  const site: FixtureServer = await startFixtureServer({
    '/page-stalls': (_req, res) => {
      open.push(res);
    },
    '/with-image': { body: html('<title>Page with a slow image</title><meta property="og:image" content="/slow.png">') },
    '/slow.png': (_req, res) => {
      open.push(res);
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    },
  });
  const budgetMs = 1500;
  const h = handlerFor({ requestBudgetMs: budgetMs, fetchTimeoutMs: 20_000, jobWaitMs: 20_000 });
  const deadline = handlerFor({ fetchTimeoutMs: 10_000, jobWaitMs: 1500 });
  try {
    for (const route of ['/page-stalls', '/with-image']) {
      const times = await timeRuns(1, () => h.preview(site.url(route)), 0);
      process.stdout.write(`budget ${budgetMs} ms, ${route} stalls: answered after ${times[0].toFixed(0)} ms (phase timeouts 20 s)\n`);
    }
    const times = await timeRuns(1, () => deadline.preview(site.url('/with-image')), 0);
    process.stdout.write(`record deadline 1500 ms, the og:image stalls: answered after ${times[0].toFixed(0)} ms (fetch timeout 10 s)\n`);
  } finally {
    for (const res of open) res.destroy();
    h.cleanup();
    deadline.cleanup();
    await site.close();
  }
}

async function decoderFigures(runs: number): Promise<void> {
  const ffmpeg = await ffmpegBinary();
  const endless = ['-v', 'error', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440', '-f', 'null', '-'];
  const capped = await timeRuns(runs, () => runTool(ffmpeg, endless, { timeoutMs: 300 }).catch(() => undefined));
  process.stdout.write(`decoder killed at a 300 ms cap: ${fmt(capped)}\n`);
  const aborted = await timeRuns(runs, () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    return runTool(ffmpeg, endless, { timeoutMs: 10_000, signal: controller.signal }).catch(() => undefined);
  });
  process.stdout.write(`decoder killed on an abort after 200 ms: ${fmt(aborted)}\n`);
}

async function jobFigures(runs: number): Promise<void> {
  const config = testConfig();
  const ctx = {
    fetch: async () => {
      throw new Error('no fetch');
    },
    blobs: {} as never,
    config,
  };
  try {
    const side = await timeRuns(runs, () =>
      new InlineJobRunner(ctx as never, 4).run(
        [
          { id: 'a', kind: 'echo', input: { value: 1, delayMs: 150 } },
          { id: 'b', kind: 'echo', input: { value: 2, delayMs: 150 } },
        ],
        { requestId: 'bench', deadline: Date.now() + 5000 },
      ),
    );
    process.stdout.write(`inline runner, two 150 ms jobs side by side: ${fmt(side)}\n`);
    const cut = await timeRuns(runs, () =>
      new InlineJobRunner(ctx as never, 2).run([{ id: 'slow', kind: 'echo', input: { value: 1, delayMs: 10_000 } }], {
        requestId: 'bench',
        deadline: Date.now() + 200,
      }),
    );
    process.stdout.write(`inline runner, a 10 s job cut at a 200 ms deadline: ${fmt(cut)}\n`);
  } finally {
    config.cleanup();
  }
}

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  process.stdout.write(`runs = ${runs}\n`);
  await parseFigures(runs);
  await upstreamFigures(runs);
  await mediaFigures(runs);
  await budgetFigures();
  await decoderFigures(runs);
  await jobFigures(runs);
}
