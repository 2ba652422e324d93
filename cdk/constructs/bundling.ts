import fs from 'node:fs';
import path from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

/** The repository root (this file is cdk/constructs/bundling.ts; tsx and Jest both run it as CommonJS). */
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/**
 * esbuild options shared by both functions: one minified ESM file for Node 22, bundled on this
 * machine (no Docker). CommonJS dependencies inside an ESM bundle need `require`, `__filename`
 * and `__dirname`, which the banner provides. The AWS SDK v3 is left out (the runtime has it).
 */
/** The banner that gives an ESM bundle `require`, `__filename` and `__dirname` for its CommonJS dependencies. */
export const ESM_BANNER = [
  "import { createRequire as __linklensCreateRequire } from 'node:module';",
  "import { fileURLToPath as __linklensFileURLToPath } from 'node:url';",
  "import { dirname as __linklensDirname } from 'node:path';",
  'const require = __linklensCreateRequire(import.meta.url);',
  'const __filename = __linklensFileURLToPath(import.meta.url);',
  'const __dirname = __linklensDirname(__filename);',
].join(' ');

/**
 * What is left out of the bundles: the AWS SDK (in the runtime), sharp (in the workers' layer), and
 * the browser packages (playwright-core is shipped beside the screenshot worker's bundle,
 * @sparticuz/chromium is its layer; the other functions never load them).
 */
export const EXTERNAL_MODULES = ['@aws-sdk/*', 'sharp', '@img/*', 'playwright-core', '@sparticuz/chromium'];

/**
 * Packages shipped as node_modules beside the preview bundle instead of inlined: cld3-asm's
 * WebAssembly loader locates its .wasm file and calls nanoid/unixify in ways esbuild cannot
 * bundle (language detection silently returned nothing in the bundle; test/cdk/bundle-runtime.test.ts).
 */
export const PREVIEW_NODE_MODULES = ['cld3-asm'];

/** Defines for the preview bundle: AWS adapters only (see functions/preview.ts). */
export const PREVIEW_DEFINE = { 'process.env.LINKLENS_BUNDLE_AWS_ONLY': JSON.stringify('true') };

/** The same build as the preview function's, as esbuild API options (bench, bundle checks). */
export function previewEsbuildOptions(outfile: string) {
  return {
    entryPoints: [path.join(PROJECT_ROOT, 'functions', 'preview.ts')],
    bundle: true,
    platform: 'node' as const,
    target: 'node22',
    format: 'esm' as const,
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: ESM_BANNER },
    external: [...EXTERNAL_MODULES, ...PREVIEW_NODE_MODULES],
    define: PREVIEW_DEFINE,
    outfile,
    logLevel: 'error' as const,
  };
}

/**
 * A package and its dependencies, as installed in this project's node_modules (read from their
 * package.json files): copied beside a bundle without running npm, so `cdk synth` stays offline.
 */
export function installedClosure(names: string[], root = PROJECT_ROOT): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    const manifest = path.join(root, 'node_modules', name, 'package.json');
    if (!fs.existsSync(manifest)) return;
    seen.add(name);
    const deps = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
    for (const dep of Object.keys(deps)) visit(dep);
  };
  names.forEach(visit);
  return [...seen].sort();
}

/**
 * What the worker's pdf.js thread needs beside the bundle (lib/media/pdf-worker.cjs loads
 * `pdf-parse` with require): the worker script, pdf-parse's self-contained CommonJS build and
 * pdf.js's worker module (not the whole 21 MB package), and @napi-rs/canvas with its linux-x64
 * binary for the page renders. The rest of pdfjs-dist is not needed: pdf-parse inlines it.
 */
export const PDF_WORKER_FILES = {
  files: ['lib/media/pdf-worker.cjs'],
  tree: ['node_modules/pdf-parse/package.json', 'node_modules/pdf-parse/dist/pdf-parse/cjs/index.cjs', 'node_modules/pdf-parse/dist/pdf-parse/cjs/pdf.worker.mjs'],
  packages: ['@napi-rs/canvas', '@napi-rs/canvas-linux-x64-gnu'],
};

/** The shell commands that put files (flat), files at their relative paths (tree) and installed packages next to a bundle. */
export function copyCommands(inputDir: string, outputDir: string, files: string[], packages: string[] = [], tree: string[] = []): string[] {
  return [
    ...files.map((f) => `cp "${path.join(inputDir, f)}" "${path.join(outputDir, path.basename(f))}"`),
    ...tree.map((f) => `mkdir -p "${path.join(outputDir, path.dirname(f))}" && cp "${path.join(inputDir, f)}" "${path.join(outputDir, f)}"`),
    ...installedClosure(packages, inputDir).map((p) => `mkdir -p "${path.join(outputDir, 'node_modules', path.dirname(p))}" && cp -R "${path.join(inputDir, 'node_modules', p)}" "${path.join(outputDir, 'node_modules', p)}"`),
  ];
}

/** Files (the preview function serves openapi.yaml as GET /openapi.json) and packages copied next to a bundle. */
export function copyIntoBundle(files: string[], packages: string[] = [], tree: string[] = []): BundlingOptions['commandHooks'] {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => copyCommands(inputDir, outputDir, files, packages, tree),
  };
}

export function esmBundling(extra: { externalModules?: string[]; nodeModules?: string[]; define?: Record<string, string>; copy?: string[]; copyPackages?: string[]; copyTree?: string[] } = {}): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node22',
    platform: 'node',
    minify: true,
    sourceMap: false,
    mainFields: ['module', 'main'],
    banner: ESM_BANNER,
    externalModules: [...new Set([...EXTERNAL_MODULES, ...(extra.externalModules ?? []), ...(extra.copyPackages ?? [])])],
    nodeModules: extra.nodeModules,
    forceDockerBundling: false,
    metafile: false,
    define: extra.define,
    commandHooks: extra.copy || extra.copyPackages || extra.copyTree ? copyIntoBundle(extra.copy ?? [], extra.copyPackages, extra.copyTree) : undefined,
  };
}
