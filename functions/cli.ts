/**
 * The CLI: previews a link in-process with the local defaults (assets under LINKPREVIEW_DATA_DIR,
 * jobs in-process) through the same handler as the API (a direct invocation), and prints the
 * Link record as JSON, or a short summary with --pretty. Progress goes to stderr; an invalid
 * link exits 1 with the error body.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from '../lib/config.js';
import type { LinkRecord } from '../lib/contract/link.js';
import type { CliIo, CliPreviewer } from './cli-io.js';

export type { CliIo, CliPreviewer } from './cli-io.js';

const USAGE = `usage: linklens <url> [--pretty]
       linklens batch <file> [--concurrency N]

Previews one link and prints its Link record as JSON (--pretty: a short summary).
batch: previews every link of <file> (one a line; - reads stdin; blank lines and # comments
skipped), N at a time (default 4), and writes one JSON line per link to stdout, in the file's
order (NDJSON: the record, or the error body of a link refused), with a progress bar on stderr.
Environment: the same LINKPREVIEW_* variables as the server (see README), e.g.
LINKPREVIEW_ALLOW_LOOPBACK=true to preview pages served on this machine.`;

const defaultIo: CliIo = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env };

export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  if (argv[0] === 'batch') {
    const { batchMain } = await import('./cli-batch.js');
    return batchMain(argv.slice(1), io, localPreviewer);
  }
  const pretty = argv.includes('--pretty');
  const args = argv.filter((a) => a !== '--pretty');
  if (args.length !== 1 || args[0] === '--help' || args[0] === '-h') {
    io.err(`${USAGE}\n`);
    return args[0] === '--help' || args[0] === '-h' ? 0 : 2;
  }
  const previewer = await localPreviewer(io);
  if (typeof previewer === 'number') return previewer;
  const started = Date.now();
  io.err(`previewing ${args[0]} …\n`);
  const progress = setInterval(
    () => io.err(`  still working (${Math.round((Date.now() - started) / 1000)} s: fetching, probing media, rendering images)\n`),
    2000,
  );
  let result: Record<string, unknown>;
  try {
    result = await previewer.preview(args[0], `cli-${process.pid}-${started}`);
  } finally {
    clearInterval(progress);
  }
  io.err(`done in ${Date.now() - started} ms\n`);
  if ('errorCode' in result) {
    io.out(`${JSON.stringify(result, null, 2)}\n`);
    return 1;
  }
  io.out(pretty ? summary(result as unknown as LinkRecord) : `${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

/** The service in this process with the local defaults; a configuration error is printed and its exit code (2) returned. */
export async function localPreviewer(io: CliIo): Promise<CliPreviewer | number> {
  // Loaded only now: the usage answers without the service's modules.
  const [
    { ConfigError, configWarnings, loadConfig },
    { ENV },
    { createPreviewHandler },
    { createConsoleLogger },
    { buildLocalDeps },
    { recordVersionsStored },
  ] = await Promise.all([
    import('../lib/config.js'),
    import('../lib/core-settings.js'),
    import('../lib/http/preview-handler.js'),
    import('../lib/log.js'),
    import('./wiring.js'),
    import('../lib/page/page-versions.js'),
  ]);
  let config: Config;
  try {
    // One preview: its CPU steps run in-process unless told otherwise (a worker thread would cost
    // more to start, and to load the page libraries in, than the step it runs).
    config = loadConfig({ [ENV.cpuThreads]: '0', ...io.env });
  } catch (err) {
    io.err(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    return 2;
  }
  for (const line of configWarnings(io.env)) io.err(`warning: ${line}\n`);
  const dataDir = path.resolve(config.dataDir);
  const deps = buildLocalDeps({
    config: { ...config, dataDir, logLevel: 'silent' },
    log: createConsoleLogger('silent'),
    // No server runs: asset URLs point at the files themselves unless LINKPREVIEW_PUBLIC_URL is set.
    baseUrl: () => pathToFileURL(dataDir).href,
  });
  const handler = createPreviewHandler(deps);
  return {
    async preview(link, id) {
      const result = (await handler({ link }, { awsRequestId: id })) as Record<string, unknown>;
      // The page versions the record names are built after it, in this process: the files it names exist before it exits.
      await recordVersionsStored(deps.blobs, (result as Partial<LinkRecord>).page);
      return result;
    },
  };
}

export function summary(r: LinkRecord): string {
  const lines = [`${r.ok ? 'OK' : 'NOT OK'}  ${r.type}  HTTP ${r.status}${r.size !== undefined ? `  ${r.size} bytes` : ''}`, `url:         ${r.url}`];
  if (r.redirected) lines.push(`redirected:  ${r.redirectionTrail?.join(' -> ')}`);
  if (r.title !== undefined) lines.push(`title:       ${r.title}`);
  if (r.description) lines.push(`description: ${r.description.length > 160 ? `${r.description.slice(0, 157)}…` : r.description}`);
  if (r.language) lines.push(`language:    ${r.language}`);
  if (r.image) lines.push(`image:       ${r.image.large.width}x${r.image.large.height} ${r.image.large.url}`);
  if (r.icon) lines.push(`icon:        ${r.icon.width}x${r.icon.height}${r.icon.backgroundColor ? ` ${r.icon.backgroundColor}` : ''} ${r.icon.url ?? ''}`);
  return `${lines.join('\n')}\n`;
}
