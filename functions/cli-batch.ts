/**
 * `linklens batch <file> [--concurrency N]`: every link of a file (one a line; `-` is stdin;
 * blank lines and `#` comments skipped) previewed in this process as `linklens <url>` previews
 * one (the same handler: each record is the one `POST /` gives), N at a time, written to stdout as
 * NDJSON in the file's order (a line per link: the record, or the error body of a link refused),
 * with a progress bar on stderr (redrawn in place on a terminal, a line every 2 s otherwise).
 * Exit 0 when every link has a record (`ok` may be false), 1 when some were refused.
 */
import { promises as fs } from 'node:fs';
import type { CliIo, CliPreviewer } from './cli-io.js';

const DEFAULT_CONCURRENCY = 4;
const BAR = 30;

/** The links of a file's text: one a line, trimmed; blank lines and `#` comments skipped. */
export function linksOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** The progress line: a bar, done of all, refused, and the rate. */
export function progressLine(done: number, all: number, refused: number, seconds: number): string {
  const filled = all ? Math.round((done / all) * BAR) : BAR;
  const rate = seconds > 0 ? ` ${(done / seconds).toFixed(1)}/s` : '';
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${done}/${all}${refused ? ` (${refused} refused)` : ''}${rate}`;
}

async function readInput(file: string): Promise<string> {
  if (file !== '-') return fs.readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function batchMain(argv: string[], io: CliIo & { tty?: boolean }, previewer: (io: CliIo) => Promise<CliPreviewer | number>): Promise<number> {
  const at = argv.indexOf('--concurrency');
  const concurrency = at >= 0 ? Number(argv[at + 1]) : DEFAULT_CONCURRENCY;
  const files = at >= 0 ? argv.filter((_, i) => i !== at && i !== at + 1) : argv;
  if (files.length !== 1 || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    io.err('usage: linklens batch <file> [--concurrency N]   (N from 1 to 64; - reads the links from stdin)\n');
    return 2;
  }
  let text: string;
  try {
    text = await readInput(files[0]);
  } catch (err) {
    io.err(`cannot read ${files[0]}: ${(err as Error).message}\n`);
    return 2;
  }
  const links = linksOf(text);
  const service = await previewer(io);
  if (typeof service === 'number') return service;

  const started = Date.now();
  const results: (string | undefined)[] = new Array(links.length);
  let written = 0;
  let done = 0;
  let refused = 0;
  const tty = io.tty ?? Boolean(process.stderr.isTTY);
  const draw = (final = false) => {
    const line = progressLine(done, links.length, refused, (Date.now() - started) / 1000);
    if (tty) io.err(`\r${line}${final ? '\n' : ''}`);
    else io.err(`${line}\n`);
  };
  const ticker = tty ? undefined : setInterval(() => draw(), 2000);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, links.length) }, async () => {
        while (next < links.length) {
          const i = next++;
          const result = await service.preview(links[i], `cli-${process.pid}-${started}-${i}`);
          if ('errorCode' in result) refused++;
          results[i] = JSON.stringify(result);
          done++;
          // In the file's order: every line ready from the first not yet written.
          while (written < links.length && results[written] !== undefined) {
            io.out(`${results[written]}\n`);
            results[written++] = '';
          }
          if (tty) draw();
        }
      }),
    );
  } finally {
    clearInterval(ticker);
  }
  draw(true);
  return refused ? 1 : 0;
}
