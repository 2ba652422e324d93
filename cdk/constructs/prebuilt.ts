/**
 * The construct package (`@linklens/cdk`, built by scripts/build-construct.ts into
 * dist/packages/cdk/) carries the Lambda code prebuilt, and a manifest of what it needs at synth:
 *
 *   linklens-assets.json        this manifest, beside the package's index.js
 *   assets/<function>/          each function's bundle (index.mjs, its thread entries and files),
 *                               everything but the npm packages it loads at run time
 *
 * The packages that ship beside a bundle or in a layer (sharp, ffmpeg, Chromium, cld3-asm, ...)
 * are ordinary dependencies of the package: at synth they are copied from where npm installed
 * them, at the versions the manifest's lockfile entries name (`installedSource`), and fetched for
 * linux-x64 when this machine installed another platform's. No esbuild, no Docker.
 *
 * Every asset hash was computed when the package was built, from its inputs (the bundle's bytes,
 * the exact packages, the build code): a second synth with nothing changed stages and uploads
 * nothing new.
 *
 * In a clone of the repository there is no manifest, and the code is built from the sources
 * (cdk/constructs/bundling.ts, layers/build-layers.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { installedSource, type LockEntry, type PackageSource } from './package-closure.js';

export const PREBUILT_MANIFEST = 'linklens-assets.json';

export type LayerName = 'ffmpeg' | 'sharp' | 'chromium';

export interface PrebuiltManifest {
  /** The version of the package (and of the service it deploys). */
  version: string;
  /** Each function's prebuilt folder (relative to the package root) and asset hash, by its handler's entry (`functions/worker.ts`). */
  functions: Record<string, { dir: string; hash: string }>;
  /** Each layer's asset hash and the versions for its description. */
  layers: Record<LayerName, { hash: string; versions: string }>;
  /** The lockfile entries of every package a bundle or layer ships (package-lock.json's `packages`, that part). */
  lock: Record<string, LockEntry>;
}

export interface Prebuilt {
  root: string;
  manifest: PrebuiltManifest;
  /** The packages, as npm installed them for the construct package. */
  source: PackageSource;
}

let cached: Prebuilt | null | undefined;

/** The prebuilt code of the installed construct package, or undefined in a clone of the repository. */
export function prebuilt(): Prebuilt | undefined {
  if (cached === undefined) {
    // The package's index.js is one esbuild bundle at the package root; in the repository this file is cdk/constructs/prebuilt.ts.
    const file = path.join(__dirname, PREBUILT_MANIFEST);
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as PrebuiltManifest;
      cached = { root: __dirname, manifest, source: installedSource(manifest.lock, __dirname) };
    } else cached = null;
  }
  return cached ?? undefined;
}
