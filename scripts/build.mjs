#!/usr/bin/env node
/**
 * The build: esbuild compiles the TypeScript sources to dist/ (ESM for Node >= 20.20), so that
 * `npm start` and the CLI run JavaScript, with no transpiler at run time.
 *
 *   dist/start-local.js, dist/cli.js   the local server (npm start) and the CLI (bin/linklens.mjs),
 *                                       their shared code in dist/chunk-*.js
 *   dist/cpu-worker.mjs                 the CPU pool's thread module (lib/jobs/cpu-worker.ts)
 *   dist/pdf-worker.cjs, dist/openapi.yaml
 *                                       files the server loads beside its modules (__dirname)
 *   dist/packages/client/               the client package, @linklens/client (scripts/build-client.mjs;
 *                                       built by the full build only, and left alone by the others)
 *
 * Packages are bundled, except those that load files beside themselves or are native or heavy
 * (EXTERNAL): they are resolved from node_modules at run time, as dependencies of the package.
 *
 * `node scripts/build.mjs` (npm run build, npm pack): everything, afresh. `ensureBuilt()` (npm
 * start, bin/linklens.mjs in a checkout): the server's JavaScript only, and only when dist/ is
 * missing or a file it was built from (dist/build-stamp.json lists them) changed since the build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, 'build-stamp.json');

/** Left out of the server bundle: native code, binaries or WebAssembly located beside the package, or big and loaded lazily. */
const EXTERNAL = [
  'sharp',
  '@img/*',
  '@ffmpeg-installer/*',
  '@ffprobe-installer/*',
  'playwright-core',
  '@sparticuz/chromium',
  'cld3-asm',
  'pdf-parse',
  'pdfjs-dist',
  '@napi-rs/canvas',
  // piscina starts each thread with its own worker.js, found beside its package.
  'piscina',
  '@aws-sdk/*',
];

/** Gives the ESM bundle `require`, `__filename` and `__dirname` (the sources are CommonJS under tsx and Jest). */
const NODE_BANNER = [
  "import { createRequire as __linklensCreateRequire } from 'node:module';",
  "import { fileURLToPath as __linklensFileURLToPath } from 'node:url';",
  "import { dirname as __linklensDirname } from 'node:path';",
  'const require = __linklensCreateRequire(import.meta.url);',
  'const __filename = __linklensFileURLToPath(import.meta.url);',
  'const __dirname = __linklensDirname(__filename);',
].join(' ');

/** Copied into dist/: the server finds them beside its modules. */
const FILES = { 'lib/media/pdf-worker.cjs': 'pdf-worker.cjs', 'openapi.yaml': 'openapi.yaml' };

/** Besides the files esbuild read: a change here also calls for a new build. */
const BUILD_INPUTS = ['scripts/build.mjs', 'package.json', 'node_modules/.package-lock.json', ...Object.keys(FILES)];

/** Builds the JavaScript into dist/ and writes the stamp: when, and from which files. */
async function buildJs() {
  const builtAt = Date.now();
  const esbuild = await loadEsbuild();
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20.20',
    format: 'esm',
    splitting: true,
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: ROOT,
  };
  // Everything but the packages, which are built by steps of their own (scripts/build-client.mjs).
  for (const entry of fs.existsSync(DIST) ? fs.readdirSync(DIST) : []) {
    if (entry !== 'packages') fs.rmSync(path.join(DIST, entry), { recursive: true, force: true });
  }
  const server = await esbuild.build({
    ...common,
    entryPoints: ['functions/start-local.ts', 'functions/cli.ts'],
    outdir: DIST,
    // Chunks beside the entries: their __dirname is dist/, where pdf-worker.cjs and openapi.yaml are.
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    mainFields: ['module', 'main'],
    banner: { js: NODE_BANNER },
    external: EXTERNAL,
  });
  // The CPU pool's thread module (lib/jobs/cpu-pool.ts loads dist/cpu-worker.mjs): a file of its own, no shared chunks.
  const cpuWorker = await esbuild.build({
    ...common,
    splitting: false,
    entryPoints: { 'cpu-worker': 'lib/jobs/cpu-worker.ts' },
    outdir: DIST,
    outExtension: { '.js': '.mjs' },
    mainFields: ['module', 'main'],
    banner: { js: NODE_BANNER },
    external: EXTERNAL,
  });
  for (const [from, to] of Object.entries(FILES)) fs.copyFileSync(path.join(ROOT, from), path.join(DIST, to));
  // dist/ is ESM: its .js files are modules.
  fs.writeFileSync(path.join(DIST, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
  const inputs = [server, cpuWorker].flatMap((b) => Object.keys(b.metafile.inputs)).filter((f) => !f.includes('node_modules/'));
  writeStamp({ builtAt, inputs: [...new Set([...inputs, ...BUILD_INPUTS])].sort() });
}

function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

function writeStamp(stamp) {
  fs.writeFileSync(STAMP, `${JSON.stringify(stamp, null, 2)}\n`);
}

/** Why dist/ must be built again, or undefined when it is up to date. */
export function staleReason() {
  const stamp = readStamp();
  if (!stamp) return 'dist/ is not built';
  for (const input of stamp.inputs) {
    const mtime = fs.statSync(path.join(ROOT, input), { throwIfNoEntry: false })?.mtimeMs;
    // node_modules/.package-lock.json is missing where node_modules was not installed by npm.
    if (mtime === undefined && input.startsWith('node_modules/')) continue;
    if (mtime === undefined) return `${input} is gone`;
    if (mtime > stamp.builtAt) return `${input} changed`;
  }
  return undefined;
}

/**
 * Builds what is missing or stale: the server's JavaScript (npm start, the CLI in a checkout, the
 * package test). `force` builds everything again, the client package too (npm run build, npm
 * pack). Processes starting at the same time build once: the first takes a lock (a directory),
 * the others wait for it and find dist/ up to date.
 */
export async function ensureBuilt({ force = false, log = (s) => process.stderr.write(s) } = {}) {
  if (!force && !staleReason()) return;
  const lock = path.join(ROOT, '.dist-build.lock');
  const started = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock left by a build that died (older than any build takes) is taken over.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    const reason = force ? 'a full build' : staleReason();
    if (!reason) return;
    log(`building dist/ (${reason}) …\n`);
    await buildJs();
    if (force) await (await import('./build-client.mjs')).buildClientPackage();
    log(`built dist/ in ${Date.now() - started} ms\n`);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

async function loadEsbuild() {
  try {
    return await import('esbuild');
  } catch (err) {
    throw new Error(
      `dist/ must be built and esbuild is not installed: run \`npm ci\` (with the dev dependencies) or \`npm run build\` where it is (${err.message})`,
    );
  }
}

// `node scripts/build.mjs`: everything, afresh; `--if-stale`: the server's JavaScript, when it is missing or stale.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await ensureBuilt(process.argv.includes('--if-stale') ? {} : { force: true });
}
