/**
 * The cost report's arithmetic and its meter, without the rehearsal: the pricing of fixed counts
 * (test/rehearsal/cost-model.ts at test/rehearsal/aws-prices.ts), how requests are classified, and
 * the counting proxy in front of a stand-in emulator. The rehearsal's own case (one page preview
 * counted) is in rehearsal.test.ts; the report is `npm run cost` (scripts/cost.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AwsMeter,
  classifyS3,
  classifySqs,
  EMPTY_RECEIVE,
  EVENT_SOURCE_MAPPING,
  keyShape,
  requestsOf,
  startCountingProxy,
  type Usage,
} from '../rehearsal/aws-meter';
import { AWS_PRICES } from '../rehearsal/aws-prices';
import { type Counts, countsOf, emptyCounts, price } from '../rehearsal/cost-model';

describe('price: fixed counts at the list prices', () => {
  // Two previews: 6 GB-s, 6 invocations, 20 PUTs, 310 GETs and HEADs, 4 DELETEs, 8 + 12 SQS units, 2 HTTP API units, 1 GiB of logs.
  const counts: Counts = {
    ...emptyCounts(),
    previews: 2,
    lambda: [
      { fn: 'Preview', memoryMb: 1024, architecture: 'x86_64', invocations: 2, billedMs: 3000, coldStarts: 1, initMs: 500 },
      { fn: 'Worker', memoryMb: 2048, architecture: 'x86_64', invocations: 4, billedMs: 1500, coldStarts: 0, initMs: 0 },
    ],
    s3: { PUT: 20, COPY: 0, POST: 0, LIST: 0, GET: 300, HEAD: 10, DELETE: 4, OTHER: 0 },
    sqs: {
      functions: { requests: 8, units: 8, byAction: { SendMessageBatch: 8 } },
      eventSourceMapping: { requests: 10, units: 12, byAction: { ReceiveMessage: 5, DeleteMessageBatch: 5 } },
      eventSourceMappingEmptyReceives: 1000,
    },
    httpApi: { requests: 2, units: 2 },
    logBytes: 1024 ** 3,
  };
  const cost = price(counts);
  const line = (key: string) => cost.lines.find((l) => l.key === key)!.usd;

  test('each line, per preview', () => {
    expect(cost.gbSeconds).toBeCloseTo(3, 12);
    expect(line('lambdaCompute').x86_64).toBeCloseTo(3 * 0.0000166667, 15);
    expect(line('lambdaCompute').arm64).toBeCloseTo(3 * 0.0000133334, 15);
    expect(line('lambdaRequests').x86_64).toBeCloseTo((3 * 0.2) / 1e6, 15);
    expect(line('s3PutCopyPostList').x86_64).toBeCloseTo((10 * 0.005) / 1000, 15);
    expect(line('s3GetHead').x86_64).toBeCloseTo((155 * 0.0004) / 1000, 15);
    expect(line('s3Delete').x86_64).toBe(0);
    expect(line('sqsFunctions').x86_64).toBeCloseTo((4 * 0.4) / 1e6, 15);
    expect(line('sqsEventSourceMapping').x86_64).toBeCloseTo((6 * 0.4) / 1e6, 15);
    expect(line('httpApi').x86_64).toBeCloseTo(1 / 1e6, 15);
    // Only the compute differs between the architectures.
    for (const l of cost.lines.filter((x) => x.key !== 'lambdaCompute')) expect(l.usd.arm64).toBe(l.usd.x86_64);
  });

  test('the totals, per 1,000 previews; the lines kept out of them', () => {
    expect(cost.total.x86_64 * 1000).toBeCloseTo(0.1676001, 9);
    expect(cost.total.arm64 * 1000).toBeCloseTo(0.1576002, 9);
    expect(cost.logs).toBeCloseTo(0.25, 12);
    expect(cost.init.gbSeconds).toBeCloseTo(0.25, 12);
    expect(cost.egressPerMb).toBeCloseTo(0.085 / 1024, 15);
    expect(cost.s3Requests).toBe(167);
    // The mapping's empty receives are a monthly cost, not a preview's.
    expect(cost.sqsRequests).toBe(9);
  });

  test('the prices carry their date and sources', () => {
    expect(AWS_PRICES.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const group of [AWS_PRICES.lambda, AWS_PRICES.s3, AWS_PRICES.sqs, AWS_PRICES.httpApi, AWS_PRICES.cloudfront, AWS_PRICES.cloudwatchLogs])
      expect(group.sources.length).toBeGreaterThan(0);
  });
});

describe('countsOf: what goes where', () => {
  test("S3 by operation; SQS by caller, the mapping's empty receives apart, a function's own empty receive counted", () => {
    // One billed unit per request unless given.
    const tally = (x: Partial<Usage['requests'][number]>) => ({
      service: 'sqs' as const,
      caller: 'Preview',
      op: '',
      scope: '',
      detail: '',
      requests: 1,
      bytesIn: 0,
      bytesOut: 0,
      ...x,
      units: x.units ?? x.requests ?? 1,
    });
    const usage: Usage = {
      requests: [
        tally({ service: 's3', op: 'PUT', scope: 'assets', requests: 8 }),
        tally({ service: 's3', op: 'GET', scope: 'jobs', requests: 145 }),
        tally({ op: 'SendMessageBatch', requests: 2, units: 3 }),
        tally({ op: EMPTY_RECEIVE, requests: 4 }),
        tally({ caller: EVENT_SOURCE_MAPPING, op: 'ReceiveMessage', requests: 2 }),
        tally({ caller: EVENT_SOURCE_MAPPING, op: EMPTY_RECEIVE, requests: 50 }),
      ],
      invocations: [
        { fn: 'Preview', trigger: 'http', memoryMb: 1024, architecture: 'x86_64', durationMs: 99.2, billedMs: 100, cold: true, initMs: 300.5, ok: true },
        { fn: 'Worker', trigger: 'sqs', memoryMb: 1769, architecture: 'x86_64', durationMs: 10, billedMs: 10, cold: false, initMs: 0, ok: true },
      ],
      api: [{ method: 'POST', path: '/', status: 200, requestBytes: 40, responseBytes: 3000, units: 1 }],
      logBytes: { Preview: 100, Worker: 50 },
    };
    const c = countsOf([usage, usage]);
    expect(c.previews).toBe(2);
    expect(c.s3.PUT).toBe(16);
    expect(c.s3ByPrefix).toEqual({ 'PUT assets/': 16, 'GET jobs/': 290 });
    expect(c.sqs.functions).toEqual({ requests: 12, units: 14, byAction: { SendMessageBatch: 4, [EMPTY_RECEIVE]: 8 } });
    expect(c.sqs.eventSourceMapping).toEqual({ requests: 4, units: 4, byAction: { ReceiveMessage: 4 } });
    expect(c.sqs.eventSourceMappingEmptyReceives).toBe(100);
    expect(c.lambda.find((f) => f.fn === 'Preview')).toMatchObject({ invocations: 2, billedMs: 200, coldStarts: 2, initMs: 602 });
    expect(c.httpApi).toEqual({ requests: 2, units: 2 });
    expect(c.logBytes).toBe(300);
  });
});

describe('classification', () => {
  test('S3: operation, prefix and key shape (path style)', () => {
    expect(classifyS3('PUT', '/bucket/assets/ab12/large.webp', {})).toEqual({ op: 'PUT', scope: 'assets', detail: 'assets/*/large.webp' });
    expect(classifyS3('PUT', '/bucket/assets/ab12/x.webp', { 'x-amz-copy-source': '/bucket/a' }).op).toBe('COPY');
    expect(classifyS3('GET', '/bucket/jobs/3f1c-9a/job~2d1.json?x-id=GetObject', {})).toEqual({
      op: 'GET',
      scope: 'jobs',
      detail: 'jobs/<request>/<job>.json',
    });
    expect(classifyS3('PUT', '/bucket/jobs/r1/j1.input.json', {}).detail).toBe('jobs/<request>/<job>.input.json');
    expect(classifyS3('HEAD', '/bucket/jobs/image-url/0a9f.json', {})).toEqual({ op: 'HEAD', scope: 'jobs', detail: 'jobs/image-url/*' });
    expect(classifyS3('GET', '/bucket?list-type=2&prefix=assets%2F', {})).toMatchObject({ op: 'LIST', scope: 'assets' });
    expect(classifyS3('GET', '/bucket?location', {}).op).toBe('GET');
    expect(classifyS3('DELETE', '/bucket/jobs/r/j.json', {}).op).toBe('DELETE');
    expect(keyShape('jobs/page-content/abc.json')).toBe('jobs/page-content/*');
  });

  test('SQS: the action from X-Amz-Target, the queue, 64 KiB chunks of payload, empty receives', () => {
    const target = (a: string) => ({ 'x-amz-target': `AmazonSQS.${a}` });
    const send = JSON.stringify({
      QueueUrl: 'http://sqs.us-east-1.127.0.0.1:9/000000000000/JobsQueue',
      Entries: [{ MessageBody: 'x'.repeat(70_000) }, { MessageBody: 'y' }],
    });
    expect(classifySqs(target('SendMessageBatch'), send, '{}')).toEqual({ op: 'SendMessageBatch', scope: 'JobsQueue', units: 2 });
    expect(classifySqs(target('ReceiveMessage'), JSON.stringify({ QueueUrl: 'http://h/0/Q' }), '{"Messages":[]}')).toEqual({
      op: EMPTY_RECEIVE,
      scope: 'Q',
      units: 1,
    });
    expect(
      classifySqs(target('ReceiveMessage'), JSON.stringify({ QueueUrl: 'http://h/0/Q' }), JSON.stringify({ Messages: [{ Body: 'z'.repeat(65_537) }] })).units,
    ).toBe(2);
    // A queue created at run time: its name from the request.
    expect(classifySqs(target('CreateQueue'), JSON.stringify({ QueueName: 'replies-abc' }), '{"QueueUrl":"http://h/0/replies-abc"}')).toMatchObject({
      op: 'CreateQueue',
      scope: 'replies-abc',
    });
    // The query protocol.
    expect(classifySqs({}, 'Action=DeleteMessage&QueueUrl=http%3A%2F%2Fh%2F0%2FQ', '<xml/>')).toMatchObject({ op: 'DeleteMessage', scope: 'Q' });
  });
});

test('the counting proxy forwards bytes unchanged (Host included) and records each request when its answer ends', async () => {
  const seen: { host?: string; body: string }[] = [];
  const upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      seen.push({ host: req.headers.host, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(req.headers['x-amz-target'] === 'AmazonSQS.ReceiveMessage' ? JSON.stringify({ Messages: [{ Body: 'job' }] }) : '{}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const meter = new AwsMeter();
  const proxy = await startCountingProxy({ service: 'sqs', caller: 'Preview', target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, meter });
  try {
    const before = meter.snapshot();
    const call = (action: string, body: object) =>
      fetch(proxy.url, {
        method: 'POST',
        headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
        body: JSON.stringify(body),
      });
    const res = await call('ReceiveMessage', { QueueUrl: 'http://h/0/Jobs' });
    expect(await res.json()).toEqual({ Messages: [{ Body: 'job' }] });
    await (await call('DeleteMessageBatch', { QueueUrl: 'http://h/0/Jobs', Entries: [] })).text();
    expect(seen[0]).toEqual({ host: new URL(proxy.url).host, body: '{"QueueUrl":"http://h/0/Jobs"}' });
    const usage = meter.since(before);
    expect(requestsOf(usage, { service: 'sqs', caller: 'Preview', op: 'ReceiveMessage', scope: 'Jobs' })).toBe(1);
    expect(requestsOf(usage, { op: 'DeleteMessageBatch' })).toBe(1);
    expect(usage.requests.find((t) => t.op === 'ReceiveMessage')).toMatchObject({ units: 1, bytesOut: JSON.stringify({ Messages: [{ Body: 'job' }] }).length });
    // A snapshot taken now sees nothing new.
    expect(meter.since(meter.snapshot()).requests).toEqual([]);
  } finally {
    await proxy.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
});
