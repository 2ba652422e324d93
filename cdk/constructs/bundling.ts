/**
 * How each Lambda function's code asset is built: one esbuild bundle (ESM, for the Lambda
 * runtime's Node major, minified), plus the files and installed packages it loads at run time,
 * laid out beside it. The stack, the deploy rehearsal, the bundle tests and the bench all build
 * through `buildFunctionBundle`, so what is tested is what is deployed.
 *
 * CDK calls it as local bundling (no Docker, no shell commands): `functionCode(spec)`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as esbuild from 'esbuild';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME } from './lambda-runtime.js';
import { type ClosurePackage, type ShipOptions, shipPackages } from './package-closure.js';

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

export interface BundleSpec {
  /** The handler module, relative to the project root. */
  entry: string;
  /** Packages a layer provides (resolved from /opt/nodejs/node_modules at run time). */
  layerPackages?: string[];
  /**
   * Packages shipped as node_modules beside the bundle, with everything they need (from
   * package-lock.json): code esbuild cannot inline (cld3-asm's WebAssembly loader, playwright-core).
   */
  packages?: string[];
  /** Files copied beside the bundle, flat. */
  files?: string[];
  /** Modules that worker threads load, each built like the bundle into its own file beside it (file name: entry). */
  threadEntries?: Record<string, string>;
  /** Files copied at their path relative to the project root. */
  tree?: string[];
  define?: Record<string, string>;
  /**
   * Packages the code can name but this function never loads (the browser, reached only by the
   * jobs that need it, which run in the browser worker): left out, and an import of them fails.
   */
  neverLoaded?: string[];
}

const BROWSER_ONLY = ['playwright-core', '@sparticuz/chromium'];

/**
 * cld3-asm locates its .wasm file and calls nanoid and unixify in ways esbuild cannot bundle
 * ("will crash at run-time"): every function that can reach lib/language ships it as a package.
 */
const LANGUAGE_PACKAGES = ['cld3-asm'];

/** The preview function: AWS adapters only (the define drops the local fallback and the job code). */
export const PREVIEW_BUNDLE: BundleSpec = {
  entry: 'functions/preview.ts',
  packages: LANGUAGE_PACKAGES,
  files: ['openapi.yaml'],
  neverLoaded: BROWSER_ONLY,
  define: { 'process.env.LINKLENS_BUNDLE_AWS_ONLY': JSON.stringify('true') },
};

/**
 * The job worker: sharp from its layer; the pdf.js thread (lib/media/pdf-worker.cjs loads
 * `pdf-parse` with require) from the worker script, pdf-parse's self-contained CommonJS build and
 * pdf.js's worker module (not the whole 21 MB pdfjs-dist), and @napi-rs/canvas for page renders;
 * the CPU pool's threads (lib/jobs/cpu-pool.ts) from cpu-worker.mjs, started by piscina (shipped:
 * it starts each thread with a worker.js of its own package).
 */
export const WORKER_BUNDLE: BundleSpec = {
  entry: 'functions/worker.ts',
  layerPackages: ['sharp', '@img/*'],
  packages: [...LANGUAGE_PACKAGES, '@napi-rs/canvas', 'piscina'],
  files: ['lib/media/pdf-worker.cjs'],
  threadEntries: { 'cpu-worker.mjs': 'lib/jobs/cpu-worker.ts' },
  neverLoaded: BROWSER_ONLY,
  tree: [
    'node_modules/pdf-parse/package.json',
    'node_modules/pdf-parse/dist/pdf-parse/cjs/index.cjs',
    'node_modules/pdf-parse/dist/pdf-parse/cjs/pdf.worker.mjs',
  ],
};

/** The browser worker: sharp and @sparticuz/chromium from its layers, playwright-core beside the bundle. */
export const BROWSER_WORKER_BUNDLE: BundleSpec = {
  entry: 'functions/browser-worker.ts',
  layerPackages: ['sharp', '@img/*', '@sparticuz/chromium'],
  packages: [...LANGUAGE_PACKAGES, 'playwright-core'],
};

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
export function buildFunctionBundle(spec: BundleSpec, outDir: string, root = PROJECT_ROOT, ship: ShipOptions = {}): BuiltBundle {
  fs.mkdirSync(outDir, { recursive: true });
  const builds = [{ entry: spec.entry, file: 'index.mjs' }, ...Object.entries(spec.threadEntries ?? {}).map(([file, entry]) => ({ entry, file }))];
  const warnings: string[] = [];
  for (const { entry, file } of builds) {
    const result = esbuild.buildSync(esbuildOptions({ ...spec, entry }, path.join(outDir, file), root));
    const own = result.warnings.map((w) => `${w.location?.file ?? ''}: ${w.text}`);
    const fatal = own.filter((w) => /crash at run-?time/i.test(w));
    if (fatal.length)
      throw new Error(`${entry}: the bundle would fail on Lambda (ship the package beside it instead, BundleSpec.packages):\n  ${fatal.join('\n  ')}`);
    warnings.push(...own);
  }
  for (const f of spec.files ?? []) fs.copyFileSync(path.join(root, f), path.join(outDir, path.basename(f)));
  for (const f of spec.tree ?? []) {
    fs.mkdirSync(path.join(outDir, path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(outDir, f));
  }
  const packages = spec.packages?.length ? shipPackages(spec.packages, root, outDir, ship) : [];
  return { packages, warnings };
}

/** Local bundling needs an image in CDK's types; it is never used (tryBundle always builds or throws). */
const NO_DOCKER = DockerImage.fromRegistry(`public.ecr.aws/sam/build-${LAMBDA_RUNTIME.name}`);

/** The function's code asset for CDK, built locally by `buildFunctionBundle`; its hash is the output's. */
export function functionCode(spec: BundleSpec): lambda.Code {
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
  return lambda.Code.fromAsset(path.join(PROJECT_ROOT, 'layers'), {
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
