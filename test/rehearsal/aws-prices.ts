/**
 * The AWS list prices the cost report uses (scripts/cost.ts through test/rehearsal/cost-model.ts):
 * us-east-1, on-demand, the first pricing tier of each, no free tier. The one place they live:
 * when AWS changes a price, change it here, with the date.
 *
 * Looked up 2026-11-25 (the pages as stored by the search tool; where AWS's own page did not show
 * the figure in the stored copy, a second source that quotes it is listed after it).
 */
export const AWS_PRICES = {
  date: '2026-11-25',
  region: 'us-east-1',
  lambda: {
    /** Per 1M requests (both architectures). */
    requestsPerMillion: 0.2,
    /** Per GB-second of duration (memory in MB / 1024 × billed seconds), first tier. */
    gbSecond: { x86_64: 0.0000166667, arm64: 0.0000133334 },
    /** Duration is billed from the handler's start to its return, rounded up to 1 ms; the INIT phase of a new environment is billed too since 2025-08-01. */
    sources: [
      'https://aws.amazon.com/lambda/pricing/ (archived 2026-06-18: https://web.archive.org/web/20260618003751/https://aws.amazon.com/lambda/pricing/)',
      'https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase',
    ],
  },
  s3: {
    /** S3 Standard, per 1,000 requests: PUT, COPY, POST, LIST. */
    putCopyPostListPer1000: 0.005,
    /** Per 1,000 requests: GET, SELECT and every other request (HEAD included). */
    getAndOtherPer1000: 0.0004,
    /** DELETE (and CANCEL) requests are free. */
    deletePer1000: 0,
    sources: ['https://aws.amazon.com/s3/pricing/', 'https://cloudoptimo.com/blog/a-look-into-aws-s3-pricing-models (quotes both request prices)'],
  },
  sqs: {
    /** Standard queue, per 1M requests; each 64 KiB chunk of a request's payload is billed as one request. */
    standardPerMillion: 0.4,
    chunkBytes: 64 * 1024,
    /** The Lambda event source mapping's ReceiveMessage and DeleteMessageBatch calls are billed to the account as SQS requests. */
    sources: [
      'https://aws.amazon.com/sqs/pricing/',
      'https://unanswered.io/guide/aws-sqs-pricing-and-cost-optimization (64 KB chunks; Lambda-triggered polling is billed)',
      "https://github.com/brefphp/bref/discussions/1760 (the event source mapping's polling is charged as SQS requests)",
    ],
  },
  httpApi: {
    /** API Gateway HTTP APIs, per 1M requests (first 300M a month); metered in 512 KB increments. */
    perMillion: 1.0,
    chunkBytes: 512 * 1024,
    sources: [
      'https://aws.amazon.com/api-gateway/pricing/',
      'https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html (HTTP: $1.00 per million, 512 KB increments)',
    ],
  },
  cloudfront: {
    /** Data transfer out to the internet, United States, Mexico and Canada, first 10 TB a month, per GB (1024 MB). */
    egressPerGb: 0.085,
    sources: ['https://aws.amazon.com/cloudfront/pricing/'],
  },
  cloudwatchLogs: {
    /** Log ingestion, Standard log class, per GB. */
    ingestionPerGb: 0.5,
    sources: ['https://aws.amazon.com/cloudwatch/pricing/', 'https://c3x.dev/blog/cloudwatch-logs-cost-optimization (us-east-1, $0.50/GB ingestion)'],
  },
};

export type AwsPrices = typeof AWS_PRICES;
