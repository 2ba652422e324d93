#!/usr/bin/env node
/**
 * The build: esbuild compiles the TypeScript sources to dist/ (ESM for Node >= 20.20), so that
 * `npm start`, the CLI and the installed client run JavaScript, with no transpiler at run time.
 *
 *   dist/start-local.js, dist/cli.js   the local server (npm start) and the CLI (bin/linklens.mjs),
 *                                       their shared code in dist/chunk-*.js
 *   dist/cpu-worker.mjs                 the CPU pool's thread module (lib/jobs/cpu-worker.ts)
 *   dist/pdf-worker.cjs, dist/openapi.yaml
 *                                       files the server loads beside its modules (__dirname)
 *   dist/client/index.js, lambda.js     the client entry points (linklens/client, linklens/lambda)
 *   dist/types/                         their type declarations (tsc), with the Link record types
 *
 * Packages are bundled, except those that load files beside themselves or are native or heavy
 * (EXTERNAL): they are resolved from node_modules at run time, as dependencies of the package.
 *
 * `node scripts/build.mjs` (npm run build, npm pack): everything, afresh. `ensureBuilt()` (npm
 * start, bin/linklens.mjs in a checkout): the JavaScript only, and only when dist/ is missing or a
 * file it was built from (dist/build-stamp.json lists them) changed since the build.
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
  fs.rmSync(DIST, { recursive: true, force: true });
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
  // The client: no banner and nothing bundled but its own code (plain fetch; the Lambda SDK is a peer).
  const client = await esbuild.build({
    ...common,
    entryPoints: Object.keys(CLIENT_PACKAGES),
    outdir: path.join(DIST, 'client'),
    entryNames: '[name]',
    chunkNames: 'shared-[hash]',
    packages: 'external',
  });
  checkClientImports(client.metafile);
  for (const [from, to] of Object.entries(FILES)) fs.copyFileSync(path.join(ROOT, from), path.join(DIST, to));
  // dist/ is ESM: its .js files are modules and its .d.ts files describe modules.
  fs.writeFileSync(path.join(DIST, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
  const inputs = [server, cpuWorker, client].flatMap((b) => Object.keys(b.metafile.inputs)).filter((f) => !f.includes('node_modules/'));
  writeStamp({ builtAt, types: false, inputs: [...new Set([...inputs, ...BUILD_INPUTS])].sort() });
}

/** What each client entry point loads: linklens/client no package at all, linklens/lambda only the Lambda SDK. */
const CLIENT_PACKAGES = { 'lib/client/index.ts': [], 'lib/client/lambda.ts': ['@aws-sdk/client-lambda'] };

function checkClientImports(metafile) {
  const packagesOf = (output, seen = new Set()) => {
    if (seen.has(output)) return [];
    seen.add(output);
    return metafile.outputs[output].imports.flatMap((i) => (i.external ? [i.path] : packagesOf(i.path, seen)));
  };
  for (const [output, meta] of Object.entries(metafile.outputs)) {
    const allowed = CLIENT_PACKAGES[meta.entryPoint];
    if (!allowed) continue;
    const extra = packagesOf(output).filter((p) => !allowed.includes(p));
    if (extra.length) throw new Error(`${meta.entryPoint} must not load ${extra.join(', ')}`);
  }
}

/**
 * The client's type declarations (dist/types/, from tsconfig.client.json), with the Link record
 * types they refer to. tsc emits nothing for a declaration file among the sources (generated
 * types): those are copied to their place beside the emitted ones.
 */
async function buildTypes() {
  const { execFileSync } = await import('node:child_process');
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = path.join(DIST, 'types');
  fs.rmSync(out, { recursive: true, force: true });
  let listed;
  try {
    listed = execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.client.json'), '--listFiles'], { cwd: ROOT, encoding: 'utf8' });
  } catch (err) {
    throw new Error(`tsc could not emit the client's type declarations:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
  const lib = path.join(ROOT, 'lib') + path.sep;
  for (const file of listed.split('\n').map((l) => path.resolve(l.trim()))) {
    if (file.startsWith(lib) && file.endsWith('.d.ts')) {
      const to = path.join(out, path.relative(lib, file));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(file, to);
    }
  }
  writeStamp({ ...readStamp(), types: true });
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

/** Why dist/ must be built again (with the type declarations when `types`), or undefined when it is up to date. */
export function staleReason({ types = false } = {}) {
  const stamp = readStamp();
  if (!stamp) return 'dist/ is not built';
  for (const input of stamp.inputs) {
    const mtime = fs.statSync(path.join(ROOT, input), { throwIfNoEntry: false })?.mtimeMs;
    // node_modules/.package-lock.json is missing where node_modules was not installed by npm.
    if (mtime === undefined && input.startsWith('node_modules/')) continue;
    if (mtime === undefined) return `${input} is gone`;
    if (mtime > stamp.builtAt) return `${input} changed`;
  }
  if (types && !stamp.types) return 'dist/types/ is not built';
  return undefined;
}

/**
 * Builds what is missing or stale: the JavaScript (npm start, the CLI in a checkout), and the
 * type declarations too when `types` (the package test). `force` builds everything again (npm run
 * build, npm pack). Processes starting at the same time build once: the first takes a lock (a
 * directory), the others wait for it and find dist/ up to date.
 */
export async function ensureBuilt({ types = false, force = false, log = (s) => process.stderr.write(s) } = {}) {
  if (!force && !staleReason({ types })) return;
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
    const reason = force ? 'a full build' : staleReason({ types });
    if (!reason) return;
    log(`building dist/ (${reason}) …\n`);
    if (force || staleReason()) await buildJs();
    if (force || types) await buildTypes();
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

// `node scripts/build.mjs`: everything, afresh; `--if-stale`: what is missing or stale, type declarations included.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await ensureBuilt(process.argv.includes('--if-stale') ? { types: true } : { force: true });
}
