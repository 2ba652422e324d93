/**
 * The deploy rehearsal's meter (test/rehearsal/stack-rehearsal.ts): what the stack would be billed
 * for on AWS, counted where the bill counts it.
 *
 * - AWS requests: each function talks plain HTTP to the endpoint in its environment
 *   (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_SQS), which is a counting proxy of its own in front of
 *   s3rver or fauxqs (startCountingProxy below). The proxy forwards every byte unchanged (the Host
 *   header too, so SigV4 signatures still match) and records the request once its answer ends: S3
 *   by operation (PUT, COPY, POST, LIST, GET, HEAD, DELETE) and key prefix (`jobs`, `assets`), SQS
 *   by action (X-Amz-Target) and queue, queues the functions create at run time included. The
 *   event source mapping's pollers (the rehearsal's stand-in for Lambda's) have a proxy of their
 *   own: on AWS their ReceiveMessage and DeleteMessageBatch are billed to the account too, and
 *   they are counted apart (caller EVENT_SOURCE_MAPPING). The rehearsal's own requests (setup,
 *   `drained()`, `objectExists()`) go straight to the emulators and are not counted.
 * - Invocations: each function's run with its billed duration (the handler's time rounded up to
 *   1 ms), its memory size and architecture, and whether it started a new environment.
 * - HTTP API requests, with their request and response sizes.
 *
 * All of it is kept as append-only logs: `snapshot()` is a position in them and `since(snapshot)`
 * sums what came after, so a test or the cost report takes the usage of one preview.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type AwsService = 's3' | 'sqs';

/** The caller of the requests the event source mapping's pollers make (ReceiveMessage, DeleteMessageBatch). */
export const EVENT_SOURCE_MAPPING = 'event-source-mapping';

/** A ReceiveMessage that returned no message (an empty long poll): billed, but it depends on time, not on previews. */
export const EMPTY_RECEIVE = 'ReceiveMessage (empty)';

/** S3 operations as S3 prices them: PUT, COPY, POST and LIST in one class; GET, HEAD and the rest in another; DELETE free. */
export const S3_OPS = ['PUT', 'COPY', 'POST', 'LIST', 'GET', 'HEAD', 'DELETE'] as const;
export type S3Op = (typeof S3_OPS)[number];

export interface AwsRequest {
  service: AwsService;
  /** A function's logical id, or EVENT_SOURCE_MAPPING. */
  caller: string;
  /** S3: one of S3_OPS (OTHER for anything else); SQS: the action (SendMessageBatch, ...), or EMPTY_RECEIVE. */
  op: string;
  /** S3: the key's first segment (`jobs`, `assets`; a LIST's prefix); SQS: the queue's name. */
  scope: string;
  /** S3: the key's shape (`jobs/<request>/<job>.json`, `jobs/image-url/*`, `assets/*\/large.webp`); SQS: empty. */
  detail: string;
  /** Billed requests: SQS bills each 64 KiB chunk of a request's payload as one request; S3 one. */
  units: number;
  status: number;
  /** Body bytes sent and received. */
  bytesIn: number;
  bytesOut: number;
}

export interface Invocation {
  /** The function's logical id. */
  fn: string;
  /** `url`: a request to its function URL (the page versions' origin, from the rehearsal's CloudFront). */
  trigger: 'http' | 'sqs' | 'invoke' | 'url';
  memoryMb: number;
  architecture: string;
  /** The handler's run as the function's process timed it (ms). */
  durationMs: number;
  /** What Lambda bills: the duration rounded up to 1 ms; a timed-out invocation, its whole timeout. */
  billedMs: number;
  /** It started a new execution environment. */
  cold: boolean;
  /** That environment's init (the handler module's import, ms): billed too since 2025-08-01; 0 when warm. */
  initMs: number;
  ok: boolean;
}

export interface ApiRequest {
  method: string;
  path: string;
  status: number;
  requestBytes: number;
  responseBytes: number;
  /** Billed requests: HTTP APIs are metered in 512 KB increments. */
  units: number;
}

export interface Tally {
  service: AwsService;
  caller: string;
  op: string;
  scope: string;
  detail: string;
  requests: number;
  units: number;
  bytesIn: number;
  bytesOut: number;
}

export interface Usage {
  /** AWS requests summed by service, caller, operation, scope and detail. */
  requests: Tally[];
  invocations: Invocation[];
  api: ApiRequest[];
  /** Bytes each function wrote to its log (stdout and stderr: what CloudWatch Logs ingests, without Lambda's own START/END/REPORT lines). */
  logBytes: Record<string, number>;
}

export interface MeterSnapshot {
  readonly requests: number;
  readonly invocations: number;
  readonly api: number;
  readonly logBytes: Readonly<Record<string, number>>;
}

export const HTTP_API_CHUNK = 512 * 1024;
export const SQS_CHUNK = 64 * 1024;

export class AwsMeter {
  private readonly requestLog: AwsRequest[] = [];
  private readonly invocationLog: Invocation[] = [];
  private readonly apiLog: ApiRequest[] = [];
  private readonly logBytes: Record<string, number> = {};

  request(r: AwsRequest): void {
    this.requestLog.push(r);
  }

  invocation(i: Invocation): void {
    this.invocationLog.push(i);
  }

  api(a: Omit<ApiRequest, 'units'>): void {
    this.apiLog.push({ ...a, units: Math.max(1, Math.ceil(Math.max(a.requestBytes, a.responseBytes) / HTTP_API_CHUNK)) });
  }

  log(fn: string, bytes: number): void {
    this.logBytes[fn] = (this.logBytes[fn] ?? 0) + bytes;
  }

  snapshot(): MeterSnapshot {
    return { requests: this.requestLog.length, invocations: this.invocationLog.length, api: this.apiLog.length, logBytes: { ...this.logBytes } };
  }

  /** What was used after `from` (up to `to`, default now). */
  since(from: MeterSnapshot, to: MeterSnapshot = this.snapshot()): Usage {
    const tallies = new Map<string, Tally>();
    for (const r of this.requestLog.slice(from.requests, to.requests)) {
      const key = [r.service, r.caller, r.op, r.scope, r.detail].join('\u0000');
      let t = tallies.get(key);
      if (!t) {
        t = { service: r.service, caller: r.caller, op: r.op, scope: r.scope, detail: r.detail, requests: 0, units: 0, bytesIn: 0, bytesOut: 0 };
        tallies.set(key, t);
      }
      t.requests++;
      t.units += r.units;
      t.bytesIn += r.bytesIn;
      t.bytesOut += r.bytesOut;
    }
    const logBytes: Record<string, number> = {};
    for (const [fn, n] of Object.entries(to.logBytes)) if (n - (from.logBytes[fn] ?? 0) > 0) logBytes[fn] = n - (from.logBytes[fn] ?? 0);
    return {
      requests: [...tallies.values()],
      invocations: this.invocationLog.slice(from.invocations, to.invocations),
      api: this.apiLog.slice(from.api, to.api),
      logBytes,
    };
  }
}

/** The requests of a usage that match every given field (e.g. `{ service: 's3', op: 'PUT', scope: 'assets' }`). */
export function requestsOf(usage: Usage, where: Partial<Pick<Tally, 'service' | 'caller' | 'op' | 'scope' | 'detail'>>): number {
  return usage.requests.filter((t) => Object.entries(where).every(([k, v]) => t[k as keyof Tally] === v)).reduce((n, t) => n + t.requests, 0);
}

// ---------------------------------------------------------------------------------------------
// Classification.

const MEMO_SEGMENT = /^[a-z]+(?:-[a-z]+)*$/;

/** The shape of a key, for the detail column: ids and hashes replaced by placeholders. */
export function keyShape(key: string): string {
  const parts = key.split('/');
  if (parts[0] === 'assets' && parts.length >= 3) return `assets/*/${parts.slice(2).join('/')}`;
  if (parts[0] === 'jobs' && parts.length >= 3) {
    // jobs/<kind>/<hash>.json are the memos (lib/jobs/memo.ts and the like); jobs/<requestId>/<jobId>[.input].json the job objects.
    if (MEMO_SEGMENT.test(parts[1])) return `jobs/${parts[1]}/*`;
    return parts[parts.length - 1].endsWith('.input.json') ? 'jobs/<request>/<job>.input.json' : 'jobs/<request>/<job>.json';
  }
  return key;
}

/** An S3 request (path style: /bucket/key) by operation, key prefix and key shape. */
export function classifyS3(method: string, rawUrl: string, headers: http.IncomingHttpHeaders): { op: string; scope: string; detail: string } {
  const url = new URL(rawUrl, 'http://s3.local');
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const q = url.searchParams;
  const scopeOf = (k: string) => k.split('/')[0] ?? '';
  const m = method.toUpperCase();
  if (!bucket) return { op: m === 'GET' ? 'LIST' : 'OTHER', scope: '', detail: 'buckets' };
  if (m === 'PUT') return { op: headers['x-amz-copy-source'] ? 'COPY' : 'PUT', scope: scopeOf(key), detail: key ? keyShape(key) : 'bucket' };
  if (m === 'POST') return { op: 'POST', scope: scopeOf(key), detail: key ? keyShape(key) : [...q.keys()].join('&') };
  if (m === 'DELETE') return { op: 'DELETE', scope: scopeOf(key), detail: key ? keyShape(key) : 'bucket' };
  if (m === 'HEAD') return { op: 'HEAD', scope: scopeOf(key), detail: key ? keyShape(key) : 'bucket' };
  if (m === 'GET') {
    // A GET on the bucket itself lists it (ListObjects, ListObjectsV2, ListObjectVersions, ListMultipartUploads);
    // other bucket subresources (?location, ?acl, ...) are GETs.
    if (!key) {
      const listing = q.size === 0 || ['list-type', 'prefix', 'delimiter', 'versions', 'uploads', 'marker', 'max-keys'].some((p) => q.has(p));
      const prefix = q.get('prefix') ?? '';
      return listing
        ? { op: 'LIST', scope: scopeOf(prefix), detail: prefix ? `list ${keyShape(prefix)}` : 'list' }
        : { op: 'GET', scope: '', detail: [...q.keys()].join('&') };
    }
    return { op: 'GET', scope: scopeOf(key), detail: keyShape(key) };
  }
  return { op: 'OTHER', scope: scopeOf(key), detail: m };
}

const queueName = (url: unknown) => (typeof url === 'string' ? (url.split('/').filter(Boolean).pop() ?? '') : '');
const bytes = (s: unknown) => (typeof s === 'string' ? Buffer.byteLength(s) : 0);

/**
 * An SQS request (the JSON protocol: the action in X-Amz-Target; the query protocol's Action=
 * form as a fallback) by action and queue, with its billed units: each 64 KiB chunk of the
 * payload (message bodies sent, or received) is one request.
 */
export function classifySqs(headers: http.IncomingHttpHeaders, body: string, response: string): { op: string; scope: string; units: number } {
  const target = headers['x-amz-target'];
  let op = typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : '';
  let input: Record<string, any> = {};
  try {
    input = body ? JSON.parse(body) : {};
  } catch {
    const form = new URLSearchParams(body);
    op ||= form.get('Action') ?? '';
    input = Object.fromEntries(form);
  }
  let output: Record<string, any> = {};
  try {
    output = response ? JSON.parse(response) : {};
  } catch {
    /* an XML or empty answer */
  }
  const scope = input.QueueUrl ? queueName(input.QueueUrl) : (input.QueueName ?? queueName(output.QueueUrl));
  let payload = 0;
  if (op === 'SendMessage') payload = bytes(input.MessageBody);
  else if (op === 'SendMessageBatch' && Array.isArray(input.Entries)) payload = input.Entries.reduce((n: number, e: any) => n + bytes(e?.MessageBody), 0);
  else if (op === 'ReceiveMessage') {
    const messages = Array.isArray(output.Messages) ? output.Messages : [];
    if (messages.length === 0) op = EMPTY_RECEIVE;
    payload = messages.reduce((n: number, m: any) => n + bytes(m?.Body), 0);
  }
  return { op: op || 'unknown', scope: String(scope ?? ''), units: Math.max(1, Math.ceil(payload / SQS_CHUNK)) };
}

// ---------------------------------------------------------------------------------------------
// The counting proxy.

export interface CountingProxy {
  /** `http://127.0.0.1:<port>`: the endpoint a caller is given. */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of one emulator for one caller: every request is forwarded
 * unchanged (but for `Expect`, which SigV4 never signs: this proxy answers the 100-continue
 * itself) and recorded in the meter when its answer ends.
 */
export async function startCountingProxy(options: { service: AwsService; caller: string; target: string; meter: AwsMeter }): Promise<CountingProxy> {
  const target = new URL(options.target);
  const agent = new http.Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const keepBodies = options.service === 'sqs';
    const sent: Buffer[] = [];
    const received: Buffer[] = [];
    let bytesIn = 0;
    let bytesOut = 0;
    let recorded = false;
    const record = (status: number) => {
      if (recorded) return;
      recorded = true;
      const base = { service: options.service, caller: options.caller, status, bytesIn, bytesOut };
      if (options.service === 's3') options.meter.request({ ...base, ...classifyS3(req.method ?? 'GET', req.url ?? '/', req.headers), units: 1 });
      else {
        const c = classifySqs(req.headers, Buffer.concat(sent).toString('utf8'), Buffer.concat(received).toString('utf8'));
        options.meter.request({ ...base, op: c.op, scope: c.scope, detail: '', units: c.units });
      }
    };
    const headers = { ...req.headers };
    delete headers.expect;
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (answer: http.IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          bytesOut += chunk.length;
          if (keepBodies) received.push(chunk);
        });
        answer.on('end', () => record(answer.statusCode ?? 0));
        answer.on('error', () => record(0));
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      record(0);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`counting proxy: ${err.message}`);
    });
    req.on('data', (chunk: Buffer) => {
      bytesIn += chunk.length;
      if (keepBodies) sent.push(chunk);
    });
    req.pipe(upstream);
  });
  // Long polls (ReceiveMessage waits up to 20 s) must not be cut by the server's timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
