#!/usr/bin/env node
/**
 * The client package, @linklens/client, built from lib/client into dist/packages/client/ (a
 * package of its own, with nothing of the server in it):
 *
 *   index.js, lambda.js, shared-*.js   the entry points `.` (over HTTP) and `./lambda` (Lambda
 *                                      Invoke), ESM for Node >= 20, browsers and edge runtimes
 *   card.js, card-element.js           `./card` (renderCard: a record as card HTML, anywhere) and
 *                                      `./card-element` (<linklens-card>, browsers)
 *   types/client/*.d.ts                their declarations (tsc, lib/client/tsconfig.json), with
 *   types/contract/*.d.ts              the Link record types generated from openapi.yaml
 *                                      (lib/contract/openapi.gen.ts, `npm run contract:types`)
 *   package.json, README.md, LICENSE   written here; the README is lib/client/README.md
 *
 * No runtime dependency: `.` loads no module at all, `./lambda` only @aws-sdk/client-lambda (an
 * optional peer), by a dynamic import. The build fails when an entry point would load more.
 *
 * `node scripts/build-client.mjs [outDir]` builds it afresh; `node scripts/build.mjs` (npm run
 * build) builds it with everything else. `npm pack dist/packages/client` makes the tarball.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_DIR = path.join(ROOT, 'dist', 'packages', 'client');

/** Each entry point: its source, and the only packages it may load. */
const ENTRIES = {
  index: { source: 'lib/client/index.ts', packages: [] },
  lambda: { source: 'lib/client/lambda.ts', packages: ['@aws-sdk/client-lambda'] },
  card: { source: 'lib/client/card.ts', packages: [] },
  'card-element': { source: 'lib/client/card-element.ts', packages: [] },
};

const PEER = '@aws-sdk/client-lambda';

/** The package's package.json: its name, version and license from the repository's. */
function manifest() {
  const repo = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  return {
    name: '@linklens/client',
    version: repo.version,
    description:
      'Typed client for linklens, the self-hosted link preview service: over HTTP with plain fetch (Node.js 20+, browsers, edge runtimes) or by direct Lambda invocation. No dependencies.',
    keywords: ['linklens', 'link-preview', 'unfurl', 'open-graph', 'client'],
    license: repo.license,
    type: 'module',
    sideEffects: false,
    engines: { node: '>=20' },
    exports: {
      '.': { types: './types/client/index.d.ts', default: './index.js' },
      './lambda': { types: './types/client/lambda.d.ts', default: './lambda.js' },
      './card': { types: './types/client/card.d.ts', default: './card.js' },
      './card-element': { types: './types/client/card-element.d.ts', default: './card-element.js' },
      './package.json': './package.json',
    },
    types: './types/client/index.d.ts',
    files: ['*.js', 'types/', 'README.md', 'LICENSE'],
    peerDependencies: { [PEER]: '^3.0.0' },
    peerDependenciesMeta: { [PEER]: { optional: true } },
  };
}

/** Fails when an entry point's output, its shared chunks included, would load a package it may not. */
function checkImports(metafile) {
  const importsOf = (output, seen = new Set()) => {
    if (seen.has(output)) return [];
    seen.add(output);
    return metafile.outputs[output].imports.flatMap((i) => (i.external ? [i.path] : importsOf(i.path, seen)));
  };
  for (const [output, meta] of Object.entries(metafile.outputs)) {
    const entry = Object.values(ENTRIES).find((e) => e.source === meta.entryPoint);
    if (!entry) continue;
    const extra = importsOf(output).filter((p) => !entry.packages.includes(p));
    if (extra.length) throw new Error(`${meta.entryPoint} must not load ${extra.join(', ')}`);
  }
}

/** Builds the package into `out` (dist/packages/client/ by default), afresh. */
export async function buildClientPackage({ out = CLIENT_DIR } = {}) {
  const esbuild = await import('esbuild');
  fs.rmSync(out, { recursive: true, force: true });
  const built = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, e]) => [name, e.source])),
    outdir: out,
    chunkNames: 'shared-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    // No Node built-in assumed, nothing bundled but the client's own code.
    platform: 'neutral',
    target: 'es2022',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
  });
  checkImports(built.metafile);
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'lib', 'client', 'tsconfig.json'), '--outDir', path.join(out, 'types')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  } catch (err) {
    throw new Error(`tsc could not emit the client's type declarations:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest(), null, 2)}\n`);
  fs.copyFileSync(path.join(ROOT, 'lib', 'client', 'README.md'), path.join(out, 'README.md'));
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(out, 'LICENSE'));
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = await buildClientPackage(process.argv[2] ? { out: path.resolve(process.argv[2]) } : {});
  process.stderr.write(`built ${path.relative(process.cwd(), out) || '.'}\n`);
}
