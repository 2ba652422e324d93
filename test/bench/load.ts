/**
 * `npm run bench:load`: the local server (its own process) under autocannon, with the fixture
 * sites on loopback too. Reports requests/s, p50/p95/p99 latency, errors and 503s, and the
 * server's peak RSS, at 1, 10 and 50 concurrent clients for an HTML page (the same bytes every
 * time: its versions come from the page-content memo after the first), the same page with new
 * bytes on every request (the page-content job every time), a page with an image and a mix; then 10k requests and the server's RSS before and after (leak check); then an
 * overload run past the concurrency limit; and 1,000 requests at once for a slow site
 * (`LOAD_ONLY=overload-slow` runs only that): admitted, refused, goodput, the slowest answers.
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import sharp from 'sharp';
import { startFixtureServer } from '../helpers/fixture-server.js';

const KEY = 'bench-key';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const DURATION = Number(process.env.LOAD_SECONDS ?? 5);

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** tsx runs the server in a child process of its own: the pid to measure is that child's. */
function serverPid(tsxPid: number): number {
  try {
    const kids = execSync(`pgrep -P ${tsxPid}`).toString().trim().split('\n').filter(Boolean).map(Number);
    return kids[0] ?? tsxPid;
  } catch {
    return tsxPid;
  }
}

async function startServer(extraEnv: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; pid: number }> {
  const child = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'functions/start-local.ts'], {
    cwd: root,
    // Screenshots off: a Chromium render (~0.8 s) per page would measure the browser, not the service (see README).
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LINKPREVIEW_API_KEYS: KEY,
      LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: 'true',
      LINKPREVIEW_LOG_LEVEL: 'error',
      LINKPREVIEW_SCREENSHOTS: 'off',
      LINKPREVIEW_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'linklens-load-')),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve(m[0]);
    });
    child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return { url, child, pid: serverPid(child.pid!) };
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0);

async function run(url: string, pid: number, links: string[], connections: number, opts: { duration?: number; amount?: number } = {}) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let peak = rssMb(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  let i = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const inst = autocannon(
      {
        url: `${url}/`,
        connections,
        ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? DURATION }),
        timeout: 30,
        requests: [
          {
            method: 'POST',
            setupRequest: (req: Record<string, unknown>) => ({
              ...req,
              headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
              body: JSON.stringify({ link: links[i++ % links.length] }),
            }),
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    inst.on('response', (_c, status, _b, ms) => {
      latencies.push(ms);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
  });
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  return {
    rps: result.requests.average,
    total: latencies.length,
    p50: pct(latencies, 50).toFixed(1),
    p95: pct(latencies, 95).toFixed(1),
    p99: pct(latencies, 99).toFixed(1),
    non2xx:
      [...statuses]
        .filter(([s]) => s !== 200)
        .map(([s, n]) => `${s}x${n}`)
        .join(' ') || '-',
    errors: result.errors + result.timeouts,
    peakRss: peak,
  };
}

/**
 * Overload against a slow site: `clients` requests at once (each its own connection), every one
 * for a page the site takes `slowMs` to answer, against the default gate (32 in flight, 128
 * queued). Reports what was admitted (200), refused (503), the goodput and the slowest answers.
 */
async function overloadSlowSite(clients = 1000, slowMs = 8000): Promise<void> {
  const site = await startFixtureServer();
  let n = 0;
  site.route('/slow', (_req, res) => {
    const id = ++n;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html lang="en"><head><title>Slow page ${id}</title><meta name="description" content="It took its time."></head><body><p>Slow.</p></body></html>`,
      );
    }, slowMs);
  });
  const { url, child } = await startServer();
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ link: site.url(`/slow?${i}`) }),
          signal: AbortSignal.timeout(60_000),
        });
        await res.arrayBuffer();
        return { status: res.status, ms: performance.now() - t0 };
      } catch {
        return { status: 0, ms: performance.now() - t0 };
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const ok = answers
    .filter((a) => a.status === 200)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const refused = answers
    .filter((a) => a.status === 503)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const other = answers.length - ok.length - refused.length;
  const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
  process.stdout.write(
    `overload, slow site (${clients} at once, the site answers in ${slowMs / 1000} s, limit 32 + 128 queued): ` +
      `admitted 200x${ok.length} (p50 ${s(pct(ok, 50))}, slowest ${s(ok.at(-1))}), refused 503x${refused.length} (slowest ${s(refused.at(-1))}), ` +
      `other ${other}; goodput ${(ok.length / wall).toFixed(1)}/s over ${wall.toFixed(1)} s\n`,
  );
  child.kill('SIGTERM');
  await site.close();
}

export async function main(): Promise<void> {
  // LOAD_ONLY=overload-slow: just the overload against a slow site.
  if (process.env.LOAD_ONLY === 'overload-slow') return overloadSlowSite();
  const png = await sharp({ create: { width: 1200, height: 630, channels: 3, background: '#2a6' } })
    .jpeg()
    .toBuffer();
  const site = await startFixtureServer();
  const page = (title: string, extra = '') =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><meta name="description" content="A page for the load test">${extra}</head><body>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>'.repeat(200)}</body></html>`;
  site.route('/html', { body: page('HTML page') });
  // The same page with new bytes on every request: the page memo never has it (lib/page/page-memo.ts).
  let served = 0;
  site.route('/html-new', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page('HTML page', `<meta name="x-request" content="${++served}">`).replace('</body>', `<p>Request ${served}</p></body>`));
  });
  site.route('/hero.jpg', { headers: { 'content-type': 'image/jpeg' }, body: png });
  site.route('/favicon.ico', { status: 404, body: '' });
  site.route('/with-image', { body: page('Page with image', `<meta property="og:image" content="${site.url('/hero.jpg')}">`) });

  const { url, child, pid } = await startServer();
  const scenarios: [string, string[]][] = [
    ['html page', [site.url('/html')]],
    ['html page, new bytes each time', [site.url('/html-new')]],
    ['page + image', [site.url('/with-image')]],
    ['mix', [site.url('/html'), site.url('/with-image'), site.url('/html'), 'http://127.0.0.1:1/refused']],
  ];
  await run(url, pid, [site.url('/html'), site.url('/with-image')], 4, { amount: 200 }); // warm-up
  const baseline = rssMb(pid);
  process.stdout.write(`server RSS after warm-up: ${baseline.toFixed(0)} MB; ${DURATION}s per run\n\n`);
  process.stdout.write('| scenario | clients | req/s | p50 ms | p95 ms | p99 ms | non-200 | errors | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|\n');
  for (const [name, links] of scenarios) {
    for (const c of [1, 10, 50]) {
      const r = await run(url, pid, links, c);
      process.stdout.write(`| ${name} | ${c} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${r.peakRss.toFixed(0)} |\n`);
    }
  }
  // Leak check: two rounds of 10k requests; a leak shows as RSS still growing in the second round.
  const rounds: string[] = [];
  let last = rssMb(pid);
  for (let round = 1; round <= 2; round++) {
    const soak = await run(url, pid, scenarios[2][1], 10, { amount: 10_000 });
    await new Promise((r) => setTimeout(r, 3000));
    const now = rssMb(pid);
    rounds.push(
      `round ${round}: ${soak.total} answered (${soak.non2xx} non-200), ${soak.rps.toFixed(0)} req/s, RSS ${last.toFixed(0)} -> peak ${soak.peakRss.toFixed(0)} -> ${now.toFixed(0)} MB 3 s after`,
    );
    last = now;
  }
  process.stdout.write(`\n10k requests x 2 (mix, 10 clients):\n  ${rounds.join('\n  ')}\n`);
  child.kill('SIGTERM');

  // Overload: a server limited to 4 in flight and 8 queued, hit by 100 clients.
  const small = await startServer({ LINKPREVIEW_MAX_CONCURRENT: '4', LINKPREVIEW_MAX_QUEUED: '8' });
  const o = await run(small.url, small.pid, [site.url('/with-image')], 100, { duration: 3 });
  process.stdout.write(
    `overload (limit 4 + 8 queued, 100 clients): ${o.rps.toFixed(0)} req/s, answers: 200x${o.total - Number((/503x(\d+)/.exec(o.non2xx) ?? [0, 0])[1])} ${o.non2xx}, p99 ${o.p99} ms, peak RSS ${o.peakRss.toFixed(0)} MB\n`,
  );
  small.child.kill('SIGTERM');
  await site.close();
  await overloadSlowSite();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
