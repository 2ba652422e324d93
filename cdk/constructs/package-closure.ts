/**
 * Shipping installed npm packages into a Lambda asset (beside a bundle, or into a layer) without
 * running npm, so `cdk synth` stays offline after `npm ci`.
 *
 * The closure is read from package-lock.json, which records the whole tree npm installed: every
 * package at its nested path (`node_modules/unixify/node_modules/normalize-path`), with its
 * dependencies and, for platform packages, the `os`/`cpu`/`libc` they are built for. Each
 * dependency is resolved the way Node resolves it, from the package that requires it (its own
 * node_modules first, then each parent's), so nested versions keep their nesting. Packages built
 * for another platform than Lambda's (linux, x64, glibc) are left out; a package built for Lambda
 * that this machine did not install (deploying from macOS, arm64 or Windows) is fetched from the
 * registry at its locked version with `npm pack`. A required package that is neither installed nor
 * in the lockfile fails the synth with its name and the package that needs it: nothing is skipped
 * in silence.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The Lambda platform every shipped package must run on. */
export const LAMBDA_PLATFORM = { os: 'linux', cpu: 'x64', libc: 'glibc' } as const;

export interface LockEntry {
  [field: string]: unknown;
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  link?: boolean;
}

export interface ClosurePackage {
  /** The package's name (`@napi-rs/canvas-linux-x64-gnu`). */
  name: string;
  version: string;
  /** Its path in the tree, relative to the project root (`node_modules/unixify/node_modules/normalize-path`). */
  path: string;
  integrity?: string;
  /** Installed (at its locked version) where the source looks: `dir`. */
  installed: boolean;
  /** Where it is installed, when it is. */
  dir?: string;
}

/**
 * Where a closure is read from and its packages are copied from:
 * - a project (a folder with package-lock.json and node_modules: this repository, after `npm ci`);
 * - an installed construct package (`installedSource`): the lockfile entries it was built with,
 *   and the packages npm installed as its dependencies, found the way Node finds them.
 */
export interface PackageSource {
  /** The lockfile's `packages` map (or the part of it that the closures need). */
  readonly packages: Record<string, LockEntry>;
  /** The folder of the package at `lockPath` when it is installed at `version`; else undefined (it is fetched). */
  installedDir(lockPath: string, version: string): string | undefined;
}

/** A project folder (its package-lock.json and node_modules) or a PackageSource. */
export type PackageRoot = string | PackageSource;

/** The packages of a project: its lockfile, and node_modules laid out as the lockfile says. */
export function projectSource(root: string): PackageSource {
  return {
    packages: readLock(root),
    installedDir: (lockPath) => {
      const dir = path.join(root, lockPath);
      return fs.existsSync(path.join(dir, 'package.json')) ? dir : undefined;
    },
  };
}

/**
 * The packages as npm installed them for a package that depends on them: the lockfile entries
 * recorded when the package was built, each found by Node's lookup (`node_modules` of the
 * requiring package's folder, then of each folder above it), from `fromDir` for the top-level
 * ones and from the parent's folder for nested ones. A copy of another version counts as missing.
 */
export function installedSource(packages: Record<string, LockEntry>, fromDir: string): PackageSource {
  const found = new Map<string, string | undefined>();
  const lookup = (name: string, from: string): string | undefined => {
    for (let d = from; ; d = path.dirname(d)) {
      const candidate = path.join(d, 'node_modules', name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
      if (d === path.dirname(d)) return undefined;
    }
  };
  const dirOf = (lockPath: string): string | undefined => {
    if (found.has(lockPath)) return found.get(lockPath);
    const cut = lockPath.lastIndexOf('/node_modules/');
    const parent = cut === -1 ? fromDir : dirOf(lockPath.slice(0, cut));
    const dir = parent && lookup(nameAt(lockPath), parent);
    const version = dir && (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
    const result = dir && version === packages[lockPath]?.version ? dir : undefined;
    found.set(lockPath, result);
    return result;
  };
  return { packages, installedDir: (lockPath) => dirOf(lockPath) };
}

function sourceOf(root: PackageRoot): PackageSource {
  return typeof root === 'string' ? projectSource(root) : root;
}

export class PackageClosureError extends Error {
  constructor(message: string) {
    super(`package closure: ${message}`);
    this.name = 'PackageClosureError';
  }
}

const lockCache = new Map<string, Record<string, LockEntry>>();

function readLock(root: string): Record<string, LockEntry> {
  const file = path.join(root, 'package-lock.json');
  if (!fs.existsSync(file)) throw new PackageClosureError(`${file} is missing (the closure is read from the lockfile; run npm install once)`);
  const stat = fs.statSync(file);
  const key = `${file}:${stat.mtimeMs}:${stat.size}`;
  let packages = lockCache.get(key);
  if (!packages) {
    packages = (JSON.parse(fs.readFileSync(file, 'utf8')) as { packages?: Record<string, LockEntry> }).packages;
    if (!packages) throw new PackageClosureError(`${file} has no "packages" map (lockfileVersion 2 or 3 is needed; npm 7 or later writes it)`);
    lockCache.set(key, packages);
  }
  return packages;
}

/** The name of the package at a lockfile path (the part after its last `node_modules/`). */
function nameAt(lockPath: string): string {
  return lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** Node's lookup: `<from>/node_modules/<name>`, then the same from each parent package, then the root. */
export function resolveFrom(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** Whether a package's declared platform includes Lambda's (no declaration: any platform). */
export function runsOnLambda(entry: { os?: string[]; cpu?: string[]; libc?: string[] }): boolean {
  const allows = (list: string[] | undefined, value: string) => {
    if (!list || list.length === 0) return true;
    if (list.includes(`!${value}`)) return false;
    const positive = list.filter((v) => !v.startsWith('!'));
    return positive.length === 0 || positive.includes(value);
  };
  return allows(entry.os, LAMBDA_PLATFORM.os) && allows(entry.cpu, LAMBDA_PLATFORM.cpu) && allows(entry.libc, LAMBDA_PLATFORM.libc);
}

/**
 * The packages `names` need at run time on Lambda, each at its path in the installed tree:
 * dependencies, the optional dependencies built for linux-x64-glibc, and the peer dependencies
 * npm installed. Sorted by path; parents come before the packages nested in them.
 */
export function packageClosure(names: string[], root: PackageRoot): ClosurePackage[] {
  const source = sourceOf(root);
  const packages = source.packages;
  const seen = new Map<string, ClosurePackage>();
  const visit = (lockPath: string) => {
    if (seen.has(lockPath)) return;
    const entry = packages[lockPath];
    if (entry.link) throw new PackageClosureError(`${lockPath} is a link (workspace or file: dependency); only registry packages can be shipped`);
    const name = entry.name ?? nameAt(lockPath);
    const version = entry.version ?? '0.0.0';
    const dir = source.installedDir(lockPath, version);
    seen.set(lockPath, { name, version, path: lockPath, integrity: entry.integrity, installed: dir !== undefined, dir });
    const need = (dep: string, kind: 'dependency' | 'optional' | 'peer') => {
      const found = resolveFrom(packages, lockPath, dep);
      if (!found) {
        // npm records every optional package of every platform, and installs the peers that are required.
        if (kind === 'dependency') throw new PackageClosureError(`${dep}, a dependency of ${name} (${lockPath}), is not in package-lock.json: run npm install`);
        return;
      }
      if (kind === 'optional' && !runsOnLambda(packages[found])) return;
      visit(found);
    };
    for (const dep of Object.keys(entry.dependencies ?? {})) need(dep, 'dependency');
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) need(dep, 'optional');
    for (const dep of Object.keys(entry.peerDependencies ?? {})) need(dep, 'peer');
  };
  for (const name of names) {
    const top = `node_modules/${name}`;
    if (!packages[top]) throw new PackageClosureError(`${name} is not in package-lock.json (add it to package.json and run npm install)`);
    if (!runsOnLambda(packages[top]))
      throw new PackageClosureError(`${name} is not built for ${LAMBDA_PLATFORM.os}-${LAMBDA_PLATFORM.cpu}-${LAMBDA_PLATFORM.libc}`);
    visit(top);
  }
  return [...seen.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** A fingerprint of what a closure ships: names, versions and the registry's integrity of each tarball. */
export function closureFingerprint(closure: ClosurePackage[]): string {
  const h = createHash('sha256');
  for (const p of closure) h.update(`${p.path}@${p.version}#${p.integrity ?? ''}\n`);
  return h.digest('hex');
}

/** sha256 over files (build scripts) and extra strings: part of an asset hash. */
export function fingerprint(files: string[], extra: string[] = []): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${path.basename(f)}\n`).update(fs.readFileSync(f));
  for (const e of extra) h.update(`\n${e}`);
  return h.digest('hex');
}

export interface ShipOptions {
  /** Where the packages come from when they are not installed (default: `npm pack` from the registry). */
  fetch?: (pkg: ClosurePackage, into: string) => void;
}

/**
 * Copies each package of the closure into `<destNodeModulesParent>/<its lockfile path>` (so
 * `node_modules/a/node_modules/b` keeps its nesting), without the packages' own nested
 * node_modules (those are in the closure when needed). Returns what was shipped.
 */
export function shipPackages(names: string[], root: PackageRoot, dest: string, options: ShipOptions = {}): ClosurePackage[] {
  const closure = packageClosure(names, root);
  const fetch = options.fetch ?? npmPack;
  for (const pkg of closure) {
    const to = path.join(dest, pkg.path);
    fs.mkdirSync(to, { recursive: true });
    if (pkg.dir) {
      const from = pkg.dir;
      fs.cpSync(from, to, {
        recursive: true,
        dereference: true,
        filter: (src) => path.relative(from, src).split(path.sep)[0] !== 'node_modules',
      });
    } else {
      // Built for Lambda, but this machine installed another platform's package (or none).
      fetch(pkg, to);
      if (!fs.existsSync(path.join(to, 'package.json'))) throw new PackageClosureError(`${pkg.name}@${pkg.version} could not be fetched into ${to}`);
    }
  }
  return closure;
}

/** Fetches one package at its locked version from the npm registry and unpacks it (needs the registry and `tar`). */
export function npmPack(pkg: ClosurePackage, into: string): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'linklens-pack-'));
  try {
    let out: string;
    try {
      out = execFileSync('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', tmp, '--silent'], {
        encoding: 'utf8',
        shell: process.platform === 'win32',
      });
    } catch (err) {
      throw new PackageClosureError(
        `${pkg.name}@${pkg.version} (${pkg.path}) is needed on Lambda (${LAMBDA_PLATFORM.os}-${LAMBDA_PLATFORM.cpu}) but is not installed here, ` +
          `and fetching it with npm pack failed: ${(err as Error).message.split('\n')[0]}. Deploy from linux-x64 after npm ci, or give npm access to the registry.`,
      );
    }
    const tarball = path.join(tmp, out.trim().split(/\r?\n/).pop() ?? '');
    execFileSync('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** True on the machine Lambda's packages are built for (linux, x64, glibc): installed packages are used as they are. */
export function isLambdaPlatform(): boolean {
  if (process.platform !== LAMBDA_PLATFORM.os || process.arch !== LAMBDA_PLATFORM.cpu) return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return Boolean(report?.header?.glibcVersionRuntime);
}

/**
 * One package's directory, as Lambda needs it: the installed copy when it is there, else a copy
 * fetched at its locked version into a temporary folder (call `cleanup` when done).
 */
export function locatePackage(name: string, root: PackageRoot, fetch: ShipOptions['fetch'] = npmPack): { pkg: ClosurePackage; dir: string; cleanup(): void } {
  const lockPath = `node_modules/${name}`;
  const source = sourceOf(root);
  const entry = source.packages[lockPath];
  if (!entry) throw new PackageClosureError(`${name} is not in package-lock.json (npm install adds it)`);
  const version = entry.version ?? '0.0.0';
  const installedDir = source.installedDir(lockPath, version);
  const pkg: ClosurePackage = { name, version, path: lockPath, integrity: entry.integrity, installed: installedDir !== undefined, dir: installedDir };
  if (installedDir) return { pkg, dir: installedDir, cleanup() {} };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'linklens-pkg-'));
  fetch(pkg, tmp);
  return { pkg, dir: tmp, cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }) };
}
