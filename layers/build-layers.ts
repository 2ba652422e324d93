/**
 * Builds the worker's two Lambda layers (linux x64, glibc, as Lambda's x86_64 runtime):
 *
 *   ffmpeg layer  bin/ffprobe, bin/ffmpeg    (static builds from @ffprobe-installer/@ffmpeg-installer; mode 0755)
 *   sharp layer   nodejs/node_modules/sharp + @img/sharp-linux-x64 + @img/sharp-libvips-linux-x64 + sharp's deps
 *
 * The packages come from this project's node_modules, at the versions package-lock.json records,
 * with the closure logic every shipped package uses (cdk/constructs/package-closure.ts): offline
 * after `npm ci` on linux-x64; elsewhere (macOS, arm64, Windows) the linux-x64 packages are fetched
 * from the registry at their locked versions with `npm pack`.
 *
 * CDK calls these as local bundling (cdk/constructs/media-layers.ts); by hand:
 *   npx tsx layers/build-layers.ts [outDir]     -> outDir/ffmpeg, outDir/sharp (default: layers/build)
 */
import { chmodSync, cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { closureFingerprint, fingerprint, locatePackage, type PackageRoot, packageClosure, shipPackages } from '../cdk/constructs/package-closure.js';

const ROOT = path.resolve(__dirname, '..');
export const FFMPEG_PACKAGES = [
  ['@ffprobe-installer/linux-x64', 'ffprobe'],
  ['@ffmpeg-installer/linux-x64', 'ffmpeg'],
] as const;
/** The code that decides what a layer holds: a change to it changes the layers' asset hashes. */
const BUILD_SOURCES = [__filename, path.join(ROOT, 'cdk', 'constructs', 'package-closure.ts')];

/**
 * Asset hashes of the two layers: the build code plus the exact packages (lockfile path, version
 * and the registry's integrity of each), so a layer is rebuilt and re-uploaded when either changes.
 */
export function layerHashes(root = ROOT): { ffmpeg: string; sharp: string } {
  const ffmpegClosure = packageClosure(
    FFMPEG_PACKAGES.map(([p]) => p),
    root,
  );
  return {
    ffmpeg: fingerprint(BUILD_SOURCES, ['ffmpeg', closureFingerprint(ffmpegClosure)]),
    sharp: fingerprint(BUILD_SOURCES, ['sharp', closureFingerprint(packageClosure(['sharp'], root))]),
  };
}

/** The versions, for the layers' descriptions. */
export function layerVersions(root: PackageRoot = ROOT): { ffmpeg: string; sharp: string } {
  const v = (name: string) => packageClosure([name], root).find((p) => p.name === name)?.version ?? 'x';
  return { ffmpeg: `ffprobe ${v('@ffprobe-installer/linux-x64')}, ffmpeg ${v('@ffmpeg-installer/linux-x64')}`, sharp: `sharp ${v('sharp')} linux-x64 glibc` };
}

export function buildFfmpegLayer(outDir: string, root: PackageRoot = ROOT): void {
  const bin = path.join(outDir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const [pkg, name] of FFMPEG_PACKAGES) {
    const found = locatePackage(pkg, root);
    try {
      const target = path.join(bin, name);
      cpSync(path.join(found.dir, name), target);
      chmodSync(target, 0o755); // the tarballs ship 0744: the Lambda user could not run them
    } finally {
      found.cleanup();
    }
  }
}

/** sharp with its linux-x64 glibc binaries and its runtime dependencies, under nodejs/node_modules. */
export function buildSharpLayer(outDir: string, root: PackageRoot = ROOT): void {
  shipPackages(['sharp'], root, path.join(outDir, 'nodejs'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'layers', 'build'));
  rmSync(out, { recursive: true, force: true });
  buildFfmpegLayer(path.join(out, 'ffmpeg'));
  buildSharpLayer(path.join(out, 'sharp'));
  process.stdout.write(`layers built in ${out}: ffmpeg/bin/{ffprobe,ffmpeg}, sharp/nodejs/node_modules/sharp\n`);
}
