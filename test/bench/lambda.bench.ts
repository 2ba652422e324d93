/**
 * `npm run bench -- lambda`: the preview function as deployed.
 *  1. the size of the preview bundle (built exactly as the stack builds it; also zipped);
 *  2. its cold start: from the first import of the bundle to handler-ready, in a fresh Node
 *     process (plus the first direct invocation, which finishes the init), median of several runs;
 *  3. the overhead of the SQS round trip (SendMessageBatch -> worker -> S3 result -> poll) against
 *     the in-process runner, for the same echo jobs, on s3rver + fauxqs on loopback.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { PROJECT_ROOT, previewEsbuildOptions } from '../../cdk/constructs/bundling';
import { buildFetcher } from '../../functions/wiring';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store';
import { SqsJobRunner } from '../../lib/adapters/aws/sqs-job-runner';
import { createWorkerHandler } from '../../lib/adapters/aws/sqs-job-worker';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import { loadConfig } from '../../lib/config';
import type { Job } from '../../lib/ports';
import { startEmulators, startPoller } from '../adapters/aws/emulators';
import { median, timeRuns } from './bench';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function bundleSize(dir: string): Promise<string> {
  const outfile = path.join(dir, 'index.mjs');
  await esbuild.build(previewEsbuildOptions(outfile));
  const bytes = statSync(outfile).size;
  const gz = gzipSync(readFileSync(outfile), { level: 9 }).length;
  const importsSharp = /from"sharp"/.test(readFileSync(outfile, 'utf8'));
  process.stdout.write(
    `preview bundle: ${(bytes / 1024 / 1024).toFixed(2)} MB minified ESM (${(gz / 1024).toFixed(0)} KB gzipped)${importsSharp ? '  !! imports sharp' : ''}\n`,
  );
  return outfile;
}

function coldStart(outfile: string, runs = 7): void {
  // A fresh process per run: import the bundle (handler-ready), then one direct invocation with a
  // payload that is rejected before any network (a 400), which completes the init.
  const probe = path.join(path.dirname(outfile), 'probe.mjs');
  writeFileSync(
    probe,
    `const t0 = performance.now();
const m = await import(${JSON.stringify(outfile)});
const t1 = performance.now();
const r = await m.handler({ nolink: true }, { awsRequestId: 'bench', getRemainingTimeInMillis: () => 28000 });
const t2 = performance.now();
process.stdout.write(JSON.stringify({ ready: t1 - t0, first: t2 - t0, status: r.status }));`,
  );
  const env = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    LINKPREVIEW_BUCKET: 'bench-bucket',
    LINKPREVIEW_JOB_QUEUE_URL: 'http://127.0.0.1:9/000000000000/q',
    LINKPREVIEW_PUBLIC_URL: 'https://d1.cloudfront.net',
    LINKPREVIEW_API_KEY_HASHES: 'a'.repeat(64),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_TRACE_ENABLED: 'false',
  };
  const ready: number[] = [];
  const first: number[] = [];
  let status: unknown;
  for (let i = 0; i < runs; i++) {
    const out = JSON.parse(execFileSync(process.execPath, [probe], { env, cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    ready.push(out.ready);
    first.push(out.first);
    status = out.status;
  }
  process.stdout.write(
    `cold start (fresh node ${process.version}, ${runs} runs): import -> handler-ready median ${median(ready).toFixed(0)} ms; + first invocation (status ${status}) median ${median(first).toFixed(0)} ms\n`,
  );
}

async function roundTrip(): Promise<void> {
  const em = await startEmulators('linklens-bench');
  const config = { ...loadConfig({}), allowPrivateNetworks: true, logLevel: 'silent' as const };
  const blobs = new S3BlobStore({ client: em.s3, bucket: em.bucket, publicBaseUrl: 'https://d1.cloudfront.net' });
  const worker = createWorkerHandler({ config, fetch: buildFetcher(config), blobs, log: silent });
  const poller = startPoller(em, worker);
  const sqsRunner = new SqsJobRunner({ sqs: em.sqs, queueUrl: em.queueUrl, blobs });
  const inline = new InlineJobRunner({ fetch: buildFetcher(config), blobs, config }, 4);
  try {
    for (const n of [1, 4]) {
      let i = 0;
      const jobs = (): Job[] => Array.from({ length: n }, (_, k) => ({ id: `echo-${k}`, kind: 'echo', input: { value: k } }));
      const run = (r: SqsJobRunner | InlineJobRunner) => async () => {
        const out = await r.run(jobs(), { requestId: `bench-${i++}`, deadline: Date.now() + 10_000 });
        if ([...out.values()].some((o) => !o.ok)) throw new Error('a bench job failed');
      };
      const local = await timeRuns(20, run(inline), 3);
      const sqs = await timeRuns(20, run(sqsRunner), 3);
      process.stdout.write(
        `${n} echo job(s): in-process median ${median(local).toFixed(2)} ms; SQS + worker + S3 poll median ${median(sqs).toFixed(0)} ms -> round-trip overhead ${(median(sqs) - median(local)).toFixed(0)} ms (emulators on loopback)\n`,
      );
    }
  } finally {
    await poller.stop();
    await em.close();
  }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(PROJECT_ROOT, 'node_modules', '.linklens-bench-'));
  try {
    const outfile = await bundleSize(dir);
    coldStart(outfile);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await roundTrip();
}
