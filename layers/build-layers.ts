/**
 * Builds the worker's two Lambda layers (linux x64, glibc, as Lambda's x86_64 runtime):
 *
 *   ffmpeg layer  bin/ffprobe, bin/ffmpeg    (static builds from @ffprobe-installer/@ffmpeg-installer; mode 0755)
 *   sharp layer   nodejs/node_modules/sharp + @img/sharp-linux-x64 + @img/sharp-libvips-linux-x64 + sharp's deps
 *
 * On a linux-x64 glibc machine both are copied from this project's node_modules, so `cdk synth`
 * works offline after `npm ci`. Elsewhere (macOS, arm64) the linux-x64 packages are installed with
 * npm's --os/--cpu/--libc flags into a temporary folder first (this needs the registry).
 *
 * CDK calls these as local bundling (cdk/constructs/media-layers.ts); by hand:
 *   npx tsx layers/build-layers.ts [outDir]     -> outDir/ffmpeg, outDir/sharp (default: layers/build)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const NODE_MODULES = path.join(ROOT, 'node_modules');

function version(pkg: string): string {
  return (JSON.parse(readFileSync(path.join(NODE_MODULES, pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Versions that name the layer contents (CDK uses them as the asset hash). */
export function layerVersions(): { ffmpeg: string; sharp: string } {
  const v = (pkg: string, fallback: string) => { try { return version(pkg); } catch { return fallback; } };
  return {
    ffmpeg: `ffprobe-${v('@ffprobe-installer/ffprobe', 'x')}-ffmpeg-${v('@ffmpeg-installer/ffmpeg', 'x')}`,
    sharp: `sharp-${v('sharp', 'x')}-linux-x64-glibc`,
  };
}

function isLinuxX64Glibc(): boolean {
  if (process.platform !== 'linux' || process.arch !== 'x64') return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return Boolean(report?.header?.glibcVersionRuntime);
}

/** A folder holding node_modules with the linux-x64 packages: ours, or a temporary install. */
function linuxModules(packages: string[]): { dir: string; cleanup(): void } {
  if (isLinuxX64Glibc() && packages.every((p) => existsSync(path.join(NODE_MODULES, p.replace(/@[^@/]+$/, ''), 'package.json')))) {
    return { dir: NODE_MODULES, cleanup() {} };
  }
  const tmp = mkdtempSync(path.join(tmpdir(), 'linklens-layer-'));
  execFileSync('npm', ['install', '--prefix', tmp, '--os=linux', '--cpu=x64', '--libc=glibc', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...packages], { stdio: 'inherit' });
  return { dir: path.join(tmp, 'node_modules'), cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

export function buildFfmpegLayer(outDir: string): void {
  const ffprobe = `@ffprobe-installer/linux-x64@${version('@ffprobe-installer/linux-x64')}`;
  const ffmpeg = `@ffmpeg-installer/linux-x64@${version('@ffmpeg-installer/linux-x64')}`;
  const src = linuxModules([ffprobe, ffmpeg]);
  try {
    const bin = path.join(outDir, 'bin');
    mkdirSync(bin, { recursive: true });
    for (const [pkg, name] of [['@ffprobe-installer/linux-x64', 'ffprobe'], ['@ffmpeg-installer/linux-x64', 'ffmpeg']]) {
      const target = path.join(bin, name);
      cpSync(path.join(src.dir, pkg, name), target);
      chmodSync(target, 0o755); // the tarballs ship 0744: the Lambda user could not run them
    }
  } finally {
    src.cleanup();
  }
}

/** sharp with its linux-x64 glibc binaries and its runtime dependencies, under nodejs/node_modules. */
export function buildSharpLayer(outDir: string): void {
  const sharpVersion = version('sharp');
  const src = linuxModules([`sharp@${sharpVersion}`, `@img/sharp-linux-x64@${sharpVersion}`]);
  try {
    const dest = path.join(outDir, 'nodejs', 'node_modules');
    const seen = new Set<string>();
    const copy = (name: string, from: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const req = createRequire(path.join(from, 'noop.js'));
      let pkgJson: string;
      try {
        pkgJson = req.resolve(`${name}/package.json`);
      } catch {
        pkgJson = path.join(src.dir, name, 'package.json');
      }
      const dir = path.dirname(pkgJson);
      cpSync(dir, path.join(dest, name), { recursive: true, dereference: true });
      const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
      for (const dep of Object.keys(pkg.dependencies ?? {})) copy(dep, dir);
      for (const dep of Object.keys(pkg.optionalDependencies ?? {})) if (/linux-x64$/.test(dep) && !/musl/.test(dep)) copy(dep, dir);
    };
    copy('sharp', src.dir);
  } finally {
    src.cleanup();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'layers', 'build'));
  rmSync(out, { recursive: true, force: true });
  buildFfmpegLayer(path.join(out, 'ffmpeg'));
  buildSharpLayer(path.join(out, 'sharp'));
  process.stdout.write(`layers built in ${out}: ffmpeg/bin/{ffprobe,ffmpeg}, sharp/nodejs/node_modules/sharp\n`);
}
