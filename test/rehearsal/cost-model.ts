/**
 * What a preview costs on AWS: the rehearsal meter's counts (test/rehearsal/aws-meter.ts) at the
 * list prices of test/rehearsal/aws-prices.ts. Pure arithmetic, no I/O: `countsOf` sums the usage
 * of some previews, `price` turns counts into dollars per preview, line by line.
 *
 * In the total (compute + requests, what issue 29's targets compare): Lambda requests and
 * duration, S3 requests, SQS requests (the functions' and the event source mapping's), HTTP API
 * requests. Not in it, as lines of their own: CloudWatch Logs ingestion of the functions' output,
 * the INIT of new environments (rare when traffic is steady), CloudFront egress ($ per MB viewed,
 * which depends on the viewers, not on the preview), and the event source mapping's empty
 * receives (its pollers long-poll around the clock: a cost per month, not per preview).
 */
import { EMPTY_RECEIVE, EVENT_SOURCE_MAPPING, S3_OPS, type S3Op, type Usage } from './aws-meter';
import { AWS_PRICES, type AwsPrices } from './aws-prices';

export interface FunctionCounts {
  fn: string;
  memoryMb: number;
  architecture: string;
  invocations: number;
  /** Sum of billed durations (ms). */
  billedMs: number;
  coldStarts: number;
  /** Sum of the INIT durations of the new environments (ms). */
  initMs: number;
}

export interface Counts {
  /** How many previews these counts are the sum of. */
  previews: number;
  lambda: FunctionCounts[];
  /** S3 requests by operation (all callers), and by `<op> <prefix>/` for the detail. */
  s3: Record<S3Op | 'OTHER', number>;
  s3ByPrefix: Record<string, number>;
  /** SQS requests by caller: the functions', and the event source mapping's (its empty receives apart). Units: 64 KiB chunks billed. */
  sqs: {
    functions: { requests: number; units: number; byAction: Record<string, number> };
    eventSourceMapping: { requests: number; units: number; byAction: Record<string, number> };
    eventSourceMappingEmptyReceives: number;
  };
  httpApi: { requests: number; units: number };
  /** What the functions wrote to their logs (bytes). */
  logBytes: number;
}

const emptyS3 = (): Counts['s3'] => Object.fromEntries([...S3_OPS, 'OTHER'].map((op) => [op, 0])) as Counts['s3'];

export function emptyCounts(): Counts {
  return {
    previews: 0,
    lambda: [],
    s3: emptyS3(),
    s3ByPrefix: {},
    sqs: {
      functions: { requests: 0, units: 0, byAction: {} },
      eventSourceMapping: { requests: 0, units: 0, byAction: {} },
      eventSourceMappingEmptyReceives: 0,
    },
    httpApi: { requests: 0, units: 0 },
    logBytes: 0,
  };
}

const add = (o: Record<string, number>, k: string, n: number) => {
  o[k] = (o[k] ?? 0) + n;
};

/** The counts of some previews: one Usage each (meter.since() around each preview). */
export function countsOf(usages: Usage[]): Counts {
  const c = emptyCounts();
  c.previews = usages.length;
  const fns = new Map<string, FunctionCounts>();
  for (const u of usages) {
    for (const t of u.requests) {
      if (t.service === 's3') {
        const op = (S3_OPS as readonly string[]).includes(t.op) ? (t.op as S3Op) : 'OTHER';
        c.s3[op] += t.requests;
        add(c.s3ByPrefix, `${t.op} ${t.scope ? `${t.scope}/` : '(bucket)'}`, t.requests);
      } else if (t.caller === EVENT_SOURCE_MAPPING) {
        if (t.op === EMPTY_RECEIVE) c.sqs.eventSourceMappingEmptyReceives += t.requests;
        else {
          c.sqs.eventSourceMapping.requests += t.requests;
          c.sqs.eventSourceMapping.units += t.units;
          add(c.sqs.eventSourceMapping.byAction, t.op, t.requests);
        }
      } else {
        // A function's own empty receive (a reply queue it long-polls) is caused by the preview: counted.
        c.sqs.functions.requests += t.requests;
        c.sqs.functions.units += t.units;
        add(c.sqs.functions.byAction, t.op, t.requests);
      }
    }
    for (const i of u.invocations) {
      let f = fns.get(i.fn);
      if (!f) {
        f = { fn: i.fn, memoryMb: i.memoryMb, architecture: i.architecture, invocations: 0, billedMs: 0, coldStarts: 0, initMs: 0 };
        fns.set(i.fn, f);
      }
      f.invocations++;
      f.billedMs += i.billedMs;
      if (i.cold) {
        f.coldStarts++;
        f.initMs += Math.ceil(i.initMs);
      }
    }
    for (const a of u.api) {
      c.httpApi.requests++;
      c.httpApi.units += a.units;
    }
    for (const n of Object.values(u.logBytes)) c.logBytes += n;
  }
  c.lambda = [...fns.values()];
  return c;
}

export interface CostLine {
  key: 'httpApi' | 'lambdaRequests' | 'lambdaCompute' | 's3PutCopyPostList' | 's3GetHead' | 's3Delete' | 'sqsFunctions' | 'sqsEventSourceMapping';
  /** Dollars per preview on x86_64 and on arm64 (they differ only for lambdaCompute: same durations at the arm64 price). */
  usd: { x86_64: number; arm64: number };
}

export interface Cost {
  /** In the total. */
  lines: CostLine[];
  /** Dollars per preview. */
  total: { x86_64: number; arm64: number };
  /** Lambda GB-seconds per preview. */
  gbSeconds: number;
  /** Not in the total (dollars per preview): log ingestion, and the INIT of new environments seen in these runs (x86_64). */
  logs: number;
  init: { gbSeconds: number; x86_64: number; arm64: number };
  /** CloudFront egress, dollars per MB viewed (not per preview). */
  egressPerMb: number;
  /** Requests per preview the bill counts (S3, SQS without the mapping's empty receives, HTTP API units). */
  s3Requests: number;
  sqsRequests: number;
}

const GB = 1024 ** 3;

/** Dollars per preview: the counts divided by their previews, at `prices`. */
export function price(c: Counts, prices: AwsPrices = AWS_PRICES): Cost {
  const n = Math.max(1, c.previews);
  const same = (usd: number) => ({ x86_64: usd / n, arm64: usd / n });
  const gbs = (ms: number, memoryMb: number) => (memoryMb / 1024) * (ms / 1000);
  const gbSeconds = c.lambda.reduce((s, f) => s + gbs(f.billedMs, f.memoryMb), 0);
  const initGbSeconds = c.lambda.reduce((s, f) => s + gbs(f.initMs, f.memoryMb), 0);
  const invocations = c.lambda.reduce((s, f) => s + f.invocations, 0);
  const s3Tier1 = c.s3.PUT + c.s3.COPY + c.s3.POST + c.s3.LIST;
  const s3Tier2 = c.s3.GET + c.s3.HEAD + c.s3.OTHER;
  const lines: CostLine[] = [
    { key: 'httpApi', usd: same((c.httpApi.units * prices.httpApi.perMillion) / 1e6) },
    { key: 'lambdaRequests', usd: same((invocations * prices.lambda.requestsPerMillion) / 1e6) },
    { key: 'lambdaCompute', usd: { x86_64: (gbSeconds * prices.lambda.gbSecond.x86_64) / n, arm64: (gbSeconds * prices.lambda.gbSecond.arm64) / n } },
    { key: 's3PutCopyPostList', usd: same((s3Tier1 * prices.s3.putCopyPostListPer1000) / 1000) },
    { key: 's3GetHead', usd: same((s3Tier2 * prices.s3.getAndOtherPer1000) / 1000) },
    { key: 's3Delete', usd: same((c.s3.DELETE * prices.s3.deletePer1000) / 1000) },
    { key: 'sqsFunctions', usd: same((c.sqs.functions.units * prices.sqs.standardPerMillion) / 1e6) },
    { key: 'sqsEventSourceMapping', usd: same((c.sqs.eventSourceMapping.units * prices.sqs.standardPerMillion) / 1e6) },
  ];
  return {
    lines,
    total: { x86_64: lines.reduce((s, l) => s + l.usd.x86_64, 0), arm64: lines.reduce((s, l) => s + l.usd.arm64, 0) },
    gbSeconds: gbSeconds / n,
    logs: ((c.logBytes / GB) * prices.cloudwatchLogs.ingestionPerGb) / n,
    init: {
      gbSeconds: initGbSeconds / n,
      x86_64: (initGbSeconds * prices.lambda.gbSecond.x86_64) / n,
      arm64: (initGbSeconds * prices.lambda.gbSecond.arm64) / n,
    },
    egressPerMb: prices.cloudfront.egressPerGb / 1024,
    s3Requests: (s3Tier1 + s3Tier2 + c.s3.DELETE) / n,
    sqsRequests: (c.sqs.functions.requests + c.sqs.eventSourceMapping.requests) / n,
  };
}
