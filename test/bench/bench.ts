/**
 * `npm run bench`: runs every `*.bench.ts` module in this folder (each exports `run()` and prints
 * its own figures), or only those named on the command line: `npm run bench -- images`.
 * Speed is measured here, never asserted in tests.
 *
 * One bench per phase of a preview's Server-Timing: `parse` (extract: parse + field rules, and the
 * language check), `subfetch` (oEmbed, manifest), `images` (the four sizes of an image),
 * `content` (the page-content job's work), `screenshot` (where a browser exists). The others:
 * `media`, `hostile`, `lambda`, `page-memory`, `worker-memory`, `embed` (the players), `browser-caps`, `fair-browser` (a real shell beside looping ones), `herd` (what an origin sees of a herd of previews); `npm run bench:load` is the load test.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export async function timeRuns(runs: number, fn: () => Promise<unknown>, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times;
}

async function main(): Promise<void> {
  const dir = path.dirname(new URL(import.meta.url).pathname);
  const only = process.argv.slice(2);
  const modules = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
    .sort();
  for (const file of modules) {
    process.stdout.write(`\n== ${file.replace('.bench.ts', '')} ==\n`);
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as { run: () => Promise<void> };
    await mod.run();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
