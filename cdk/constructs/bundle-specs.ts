/**
 * What each Lambda function's code asset holds: its handler, the packages shipped beside the
 * bundle or taken from a layer, and its files. cdk/constructs/bundling.ts builds them; this module
 * imports nothing, so the construct's type declarations name no build tool.
 */
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

/** The page versions' origin (CloudFront's second origin for a version asked for before it is stored): S3 only, from the runtime's SDK. */
export const VERSION_ORIGIN_BUNDLE: BundleSpec = {
  entry: 'functions/version-origin.ts',
  neverLoaded: BROWSER_ONLY,
};

/** The webhook function: the batches' deliveries (S3, SQS and Secrets Manager from the runtime's SDK, the guarded fetcher, standardwebhooks). */
export const WEBHOOK_BUNDLE: BundleSpec = {
  entry: 'functions/webhooks.ts',
  // lib/config.ts reaches lib/language through the sites' settings (lib/platforms).
  packages: LANGUAGE_PACKAGES,
  neverLoaded: BROWSER_ONLY,
};

/** The browser worker: sharp and @sparticuz/chromium from its layers, playwright-core beside the bundle. */
export const BROWSER_WORKER_BUNDLE: BundleSpec = {
  entry: 'functions/browser-worker.ts',
  layerPackages: ['sharp', '@img/*', '@sparticuz/chromium'],
  packages: [...LANGUAGE_PACKAGES, 'playwright-core'],
};
