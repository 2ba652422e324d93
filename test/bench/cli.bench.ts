/**
 * `npm run bench -- cli`: how fast the command line starts, as ratios to a bare `node -e 0` timed
 * in the same run (machines differ): `node bin/linklens.mjs --help`, and a preview of a small
 * loopback page (`LINKPREVIEW_ALLOW_LOOPBACK=true`, screenshots and renders off). Whole processes,
 * alternated with the baseline, medians of BENCH_RUNS (default 9) after a warm-up.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { html, startFixtureServer } from '../helpers/fixture-server.js';
import { median } from './bench.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** Wall time of one process, in ms; rejects when it does not exit 0. Asynchronous: the fixture server lives in this process. */
function timeProcess(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`))));
  });
}

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 9);
  const site = await startFixtureServer({
    '/': { body: html('<title>A small page</title><meta name="description" content="Served on loopback.">', '<p>Words.</p>') },
  });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-cli-bench-'));
  const env = { ...process.env, LINKPREVIEW_ALLOW_LOOPBACK: 'true', LINKPREVIEW_SCREENSHOTS: 'off', LINKPREVIEW_RENDER: 'off', LINKPREVIEW_DATA_DIR: dataDir };
  try {
    await timeProcess(['bin/linklens.mjs', '--help']); // builds dist/ when stale
    const cases: [string, string[]][] = [
      ['node bin/linklens.mjs --help', ['bin/linklens.mjs', '--help']],
      ['node bin/linklens.mjs <a loopback page>', ['bin/linklens.mjs', site.url('/')]],
    ];
    for (const [name, args] of cases) {
      const ratios: number[] = [];
      const own: number[] = [];
      const bare: number[] = [];
      for (let i = 0; i <= runs; i++) {
        const a = await timeProcess(args, env);
        const b = await timeProcess(['-e', '0']);
        if (i === 0) continue;
        own.push(a);
        bare.push(b);
        ratios.push(a / b);
      }
      process.stdout.write(
        `${name}: median ${median(own).toFixed(0)} ms against node -e 0 ${median(bare).toFixed(0)} ms: ratio median ${median(ratios).toFixed(2)} (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})\n`,
      );
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await site.close();
  }
}
