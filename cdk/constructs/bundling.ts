import path from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

/** The repository root (this file is cdk/constructs/bundling.ts; tsx and Jest both run it as CommonJS). */
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/**
 * esbuild options shared by both functions: one minified ESM file for Node 22, bundled on this
 * machine (no Docker). CommonJS dependencies inside an ESM bundle need `require`, `__filename`
 * and `__dirname`, which the banner provides. The AWS SDK v3 is left out (the runtime has it).
 */
export function esmBundling(extra: { externalModules?: string[]; nodeModules?: string[]; define?: Record<string, string> } = {}): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node22',
    platform: 'node',
    minify: true,
    sourceMap: false,
    mainFields: ['module', 'main'],
    banner: [
      "import { createRequire as __linklensCreateRequire } from 'node:module';",
      "import { fileURLToPath as __linklensFileURLToPath } from 'node:url';",
      "import { dirname as __linklensDirname } from 'node:path';",
      'const require = __linklensCreateRequire(import.meta.url);',
      'const __filename = __linklensFileURLToPath(import.meta.url);',
      'const __dirname = __linklensDirname(__filename);',
    ].join(' '),
    externalModules: ['@aws-sdk/*', ...(extra.externalModules ?? [])],
    nodeModules: extra.nodeModules,
    forceDockerBundling: false,
    metafile: false,
    define: extra.define,
  };
}
