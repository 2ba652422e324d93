/**
 * The construct package, @linklens/cdk, built from cdk/ into dist/packages/cdk/ (a package of its
 * own, for a CDK app of the user's: `npm install @linklens/cdk`, then `new LinkPreviewService(...)`):
 *
 *   index.js                    cdk/link-preview-service.ts and what it imports, one CommonJS
 *                               bundle (esbuild); aws-cdk-lib and constructs are peers
 *   types/cdk/*.d.ts            its declarations (tsc, cdk/tsconfig.package.json)
 *   assets/<function>/          each Lambda function's code, built by the stack's own
 *                               `buildFunctionBundle` (cdk/constructs/bundling.ts) without the
 *                               npm packages it ships beside the bundle
 *   linklens-assets.json        what the construct needs at synth (cdk/constructs/prebuilt.ts):
 *                               each function's folder and asset hash, each layer's asset hash,
 *                               and the lockfile entries of every package a function or layer ships
 *   package.json, README.md, LICENSE
 *
 * The native and heavy parts (sharp, ffprobe/ffmpeg, Chromium for Lambda, cld3-asm, canvas,
 * piscina, playwright-core) are dependencies at the exact versions of package-lock.json: npm
 * installs them beside the package, and the construct copies them into the assets at synth.
 *
 * `npm run build:construct [-- outDir]`. `npm pack dist/packages/cdk` makes the tarball.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { BROWSER_PACKAGE, browserLayerHash, browserPackageVersion } from '../cdk/constructs/browser-layer.js';
import {
  BROWSER_WORKER_BUNDLE,
  type BundleSpec,
  buildFunctionBundle,
  isPackageFile,
  PREVIEW_BUNDLE,
  PROJECT_ROOT,
  packageOfFile,
  VERSION_ORIGIN_BUNDLE,
  WEBHOOK_BUNDLE,
  WORKER_BUNDLE,
} from '../cdk/constructs/bundling.js';
import { LAMBDA_RUNTIME } from '../cdk/constructs/lambda-runtime.js';
import { closureFingerprint, type LockEntry, packageClosure } from '../cdk/constructs/package-closure.js';
import { PREBUILT_MANIFEST, type PrebuiltManifest } from '../cdk/constructs/prebuilt.js';
import { FFMPEG_PACKAGES, layerHashes, layerVersions } from '../layers/build-layers.js';

export const CONSTRUCT_NAME = '@linklens/cdk';
export const CONSTRUCT_DIR = path.join(PROJECT_ROOT, 'dist', 'packages', 'cdk');

const BUNDLES: Record<string, BundleSpec> = {
  preview: PREVIEW_BUNDLE,
  worker: WORKER_BUNDLE,
  'browser-worker': BROWSER_WORKER_BUNDLE,
  'version-origin': VERSION_ORIGIN_BUNDLE,
  webhooks: WEBHOOK_BUNDLE,
};
/** Packages built for linux-x64 only: optional dependencies, so that `npm install` works on any machine (the construct fetches them there). */
const LINUX_ONLY = FFMPEG_PACKAGES.map(([name]) => name);

/** sha256 over a folder's files: their paths and bytes, in a fixed order. */
function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else h.update(`${path.relative(dir, p)}\n`).update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

/** The packages a spec takes tree files from. */
function treePackages(spec: BundleSpec): string[] {
  return [...new Set((spec.tree ?? []).filter(isPackageFile).map(packageOfFile))];
}

function lockOf(root: string): Record<string, LockEntry> {
  return (JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;
}

export function buildConstructPackage(out = CONSTRUCT_DIR): string {
  const root = PROJECT_ROOT;
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const lock = lockOf(root);
  const shippedLock: Record<string, LockEntry> = {};
  const keep = (names: string[]) => {
    for (const p of packageClosure(names, root)) shippedLock[p.path] = lock[p.path];
  };

  // 1. Each function's bundle, without the packages shipped beside it (added at synth).
  const functions: PrebuiltManifest['functions'] = {};
  for (const [name, spec] of Object.entries(BUNDLES)) {
    const dir = path.join('assets', name);
    buildFunctionBundle(spec, path.join(out, dir), root, { packages: false });
    const packages = spec.packages ?? [];
    keep(packages);
    // The files taken from a package (pdf-parse's build): its entry only, as the files are copied from it.
    for (const name of treePackages(spec)) shippedLock[`node_modules/${name}`] = lock[`node_modules/${name}`];
    const hash = createHash('sha256')
      .update(`${LAMBDA_RUNTIME.name}\n${hashTree(path.join(out, dir))}\n${closureFingerprint(packageClosure(packages, root))}\n`)
      .update(
        treePackages(spec)
          .map((n) => `${n}@${lock[`node_modules/${n}`]?.version}#${lock[`node_modules/${n}`]?.integrity}`)
          .join('\n'),
      )
      .digest('hex');
    functions[spec.entry] = { dir, hash };
  }

  // 2. The layers: built at synth from the installed packages, under the hashes of this build.
  keep(['sharp', BROWSER_PACKAGE, ...LINUX_ONLY]);
  const hashes = layerHashes(root);
  const versions = layerVersions(root);
  const manifest: PrebuiltManifest = {
    version: (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version,
    functions,
    layers: {
      ffmpeg: { hash: hashes.ffmpeg, versions: versions.ffmpeg },
      sharp: { hash: hashes.sharp, versions: versions.sharp },
      chromium: { hash: browserLayerHash(root), versions: browserPackageVersion(root) },
    },
    lock: Object.fromEntries(Object.entries(shippedLock).sort(([a], [b]) => a.localeCompare(b))),
  };
  fs.writeFileSync(path.join(out, PREBUILT_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);

  // 3. The construct: one CommonJS bundle, the peers and the layers' packages left to the user's node_modules.
  const built = esbuild.buildSync({
    absWorkingDir: root,
    entryPoints: ['cdk/link-preview-service.ts'],
    outfile: path.join(out, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs', 'esbuild'],
    metafile: true,
    logLevel: 'warning',
  });
  const loaded = Object.values(built.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  const foreign = loaded.filter((p) => !p.startsWith('node:') && !/^(aws-cdk-lib|constructs|esbuild)(\/|$)/.test(p));
  if (foreign.length) throw new Error(`the construct bundle would load ${[...new Set(foreign)].join(', ')}`);

  // 4. Its declarations.
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'cdk', 'tsconfig.package.json'), '--outDir', path.join(out, 'types')], {
      cwd: root,
      encoding: 'utf8',
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`tsc could not emit the construct's declarations:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }

  // 5. package.json: the shipped packages' roots as dependencies at their locked versions.
  const repo = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
    devDependencies: Record<string, string>;
  };
  const version = (name: string) => {
    const v = lock[`node_modules/${name}`]?.version;
    if (!v) throw new Error(`${name} is not in package-lock.json`);
    return v;
  };
  const roots = [...new Set([...Object.values(BUNDLES).flatMap((b) => [...(b.packages ?? []), ...treePackages(b)]), 'sharp', BROWSER_PACKAGE])].sort();
  const pkg = {
    name: CONSTRUCT_NAME,
    version: repo.version,
    description:
      'linklens as an AWS CDK construct: LinkPreviewService deploys the self-hosted link preview service (HTTP API, Lambda, SQS, S3, CloudFront) into your CDK app. Lambda code prebuilt; no Docker.',
    keywords: ['linklens', 'link-preview', 'unfurl', 'open-graph', 'aws-cdk', 'cdk', 'construct'],
    license: repo.license,
    main: './index.js',
    types: './types/cdk/link-preview-service.d.ts',
    exports: {
      '.': { types: './types/cdk/link-preview-service.d.ts', default: './index.js' },
      './package.json': './package.json',
    },
    engines: { node: '>=20.20' },
    files: ['index.js', 'types/', 'assets/', PREBUILT_MANIFEST, 'README.md', 'LICENSE'],
    peerDependencies: { 'aws-cdk-lib': `^${repo.devDependencies['aws-cdk-lib']}`, constructs: `^${repo.devDependencies.constructs}` },
    dependencies: Object.fromEntries(roots.map((n) => [n, version(n)])),
    optionalDependencies: Object.fromEntries(LINUX_ONLY.map((n) => [n, version(n)])),
  };
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  fs.copyFileSync(path.join(root, 'cdk', 'README.package.md'), path.join(out, 'README.md'));
  fs.copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const out = buildConstructPackage(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  process.stderr.write(`built ${path.relative(process.cwd(), out) || '.'}\n`);
}
