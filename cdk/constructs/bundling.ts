/**
 * How each Lambda function's code asset is built: one esbuild bundle (ESM, for the Lambda
 * runtime's Node major, minified), plus the files and installed packages it loads at run time,
 * laid out beside it. The stack, the deploy rehearsal, the bundle tests and the bench all build
 * through `buildFunctionBundle`, so what is tested is what is deployed.
 *
 * CDK calls it as local bundling (no Docker, no shell commands): `functionCode(spec)`. The
 * construct package (cdk/constructs/prebuilt.ts) carries the bundles built by the same function,
 * and adds only the packages at synth.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as esbuild from 'esbuild';
import { type BundleSpec, PREVIEW_BUNDLE } from './bundle-specs.js';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME } from './lambda-runtime.js';
import { type ClosurePackage, locatePackage, type ShipOptions, shipPackages } from './package-closure.js';
import { prebuilt } from './prebuilt.js';

/** The repository root (this file is cdk/constructs/bundling.ts; tsx and Jest both run it as CommonJS). */
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** The banner that gives an ESM bundle `require`, `__filename` and `__dirname` for its CommonJS dependencies. */
export const ESM_BANNER = [
  "import { createRequire as __linklensCreateRequire } from 'node:module';",
  "import { fileURLToPath as __linklensFileURLToPath } from 'node:url';",
  "import { dirname as __linklensDirname } from 'node:path';",
  'const require = __linklensCreateRequire(import.meta.url);',
  'const __filename = __linklensFileURLToPath(import.meta.url);',
  'const __dirname = __linklensDirname(__filename);',
].join(' ');

/** What the Node.js runtime provides (left out of every bundle): the AWS SDK v3. */
export const RUNTIME_PROVIDED = ['@aws-sdk/*'];

export { BROWSER_WORKER_BUNDLE, type BundleSpec, PREVIEW_BUNDLE, VERSION_ORIGIN_BUNDLE, WEBHOOK_BUNDLE, WORKER_BUNDLE } from './bundle-specs.js';

/** The esbuild options of a function's bundle (written to `outfile`). */
export function esbuildOptions(spec: BundleSpec, outfile: string, root = PROJECT_ROOT): esbuild.BuildOptions {
  return {
    entryPoints: [path.join(root, spec.entry)],
    bundle: true,
    platform: 'node',
    target: `node${LAMBDA_NODE_MAJOR}`,
    format: 'esm',
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: ESM_BANNER },
    external: [...RUNTIME_PROVIDED, ...(spec.layerPackages ?? []), ...(spec.packages ?? []), ...(spec.neverLoaded ?? [])],
    define: spec.define,
    outfile,
    logLevel: 'silent',
  };
}

/** The same build as the preview function's, as esbuild API options (bench, bundle checks). */
export const previewEsbuildOptions = (outfile: string) => esbuildOptions(PREVIEW_BUNDLE, outfile);

export interface BuiltBundle {
  /** The packages shipped beside the bundle. */
  packages: ClosurePackage[];
  /** esbuild's warnings (none may say that something will crash at run time). */
  warnings: string[];
}

/**
 * Builds a function's code asset into `outDir`: `index.mjs`, the files, and the package closure
 * under `node_modules`. Throws when esbuild says the bundle would crash at run time (a package
 * that must be shipped instead of inlined) or a needed package cannot be shipped.
 */
export function buildFunctionBundle(
  spec: BundleSpec,
  outDir: string,
  root = PROJECT_ROOT,
  ship: ShipOptions & { /** false: leave the packages out (the construct package adds them at synth). */ packages?: boolean } = {},
): BuiltBundle {
  fs.mkdirSync(outDir, { recursive: true });
  const builds = [{ entry: spec.entry, file: 'index.mjs' }, ...Object.entries(spec.threadEntries ?? {}).map(([file, entry]) => ({ entry, file }))];
  const warnings: string[] = [];
  // Loaded here, not at the top: the construct package has prebuilt bundles and no esbuild.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildSync } = require('esbuild') as typeof esbuild;
  for (const { entry, file } of builds) {
    const result = buildSync(esbuildOptions({ ...spec, entry }, path.join(outDir, file), root));
    const own = result.warnings.map((w) => `${w.location?.file ?? ''}: ${w.text}`);
    const fatal = own.filter((w) => /crash at run-?time/i.test(w));
    if (fatal.length)
      throw new Error(`${entry}: the bundle would fail on Lambda (ship the package beside it instead, BundleSpec.packages):\n  ${fatal.join('\n  ')}`);
    warnings.push(...own);
  }
  for (const f of spec.files ?? []) fs.copyFileSync(path.join(root, f), path.join(outDir, path.basename(f)));
  for (const f of spec.tree ?? []) {
    if (ship.packages === false && isPackageFile(f)) continue; // from the installed package, at synth (treeFromPackages)
    fs.mkdirSync(path.join(outDir, path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(outDir, f));
  }
  const packages = spec.packages?.length && ship.packages !== false ? shipPackages(spec.packages, root, outDir, ship) : [];
  return { packages, warnings };
}

/** A tree file inside an npm package (`node_modules/<name>/...`): npm never packs those into a tarball. */
export function isPackageFile(file: string): boolean {
  return file.startsWith('node_modules/');
}

/** The package a tree file belongs to: `node_modules/@scope/name/x` → `@scope/name`. */
export function packageOfFile(file: string): string {
  const parts = file.split('/');
  return parts[1].startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1];
}

/** Copies the spec's tree files that live in npm packages from where `root` has those packages installed. */
function treeFromPackages(spec: BundleSpec, root: Parameters<typeof locatePackage>[1], outDir: string): void {
  for (const f of (spec.tree ?? []).filter(isPackageFile)) {
    const name = packageOfFile(f);
    const found = locatePackage(name, root);
    try {
      const to = path.join(outDir, f);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(found.dir, f.slice(`node_modules/${name}/`.length)), to);
    } finally {
      found.cleanup();
    }
  }
}

/** Local bundling needs an image in CDK's types; it is never used (tryBundle always builds or throws). */
const NO_DOCKER = DockerImage.fromRegistry(`public.ecr.aws/sam/build-${LAMBDA_RUNTIME.name}`);

/**
 * The function's code asset for CDK, built locally by `buildFunctionBundle`; its hash is the
 * output's. From the construct package: its prebuilt bundle plus the packages, under the hash the
 * package was built with.
 */
export function functionCode(spec: BundleSpec): lambda.Code {
  const pre = prebuilt();
  if (pre) {
    const built = pre.manifest.functions[spec.entry];
    if (!built) throw new Error(`linklens: the construct package has no prebuilt ${spec.entry}`);
    const dir = path.join(pre.root, built.dir);
    return lambda.Code.fromAsset(dir, {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: built.hash,
      bundling: {
        image: NO_DOCKER,
        command: ['linklens-prebuilt', spec.entry],
        local: {
          tryBundle: (outputDir: string) => {
            fs.cpSync(dir, outputDir, { recursive: true });
            if (spec.packages?.length) shipPackages(spec.packages, pre.source, outputDir);
            treeFromPackages(spec, pre.source, outputDir);
            return true;
          },
        },
      },
    });
  }
  return lambda.Code.fromAsset(path.join(PROJECT_ROOT, path.dirname(spec.entry)), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: NO_DOCKER,
      // Never run (there is no Docker build), but CDK caches staged assets by their serialized
      // options and tryBundle does not serialize: without the spec here, every function built
      // from functions/ would get the first one's bundle.
      command: ['linklens-bundle', JSON.stringify(spec)],
      local: {
        tryBundle: (outputDir: string) => {
          buildFunctionBundle(spec, outputDir);
          return true;
        },
      },
    },
  });
}

/** A layer's asset for CDK, built locally by `build`; `hash` must change whenever its contents would. */
export function layerCode(build: (outDir: string) => void, hash: string): lambda.Code {
  // The source folder is never read (the hash is given, the build writes the output); it must exist.
  return lambda.Code.fromAsset(prebuilt()?.root ?? path.join(PROJECT_ROOT, 'layers'), {
    assetHashType: AssetHashType.CUSTOM,
    assetHash: hash,
    bundling: {
      image: NO_DOCKER,
      local: {
        tryBundle: (outputDir: string) => {
          build(outputDir);
          return true;
        },
      },
    },
  });
}
