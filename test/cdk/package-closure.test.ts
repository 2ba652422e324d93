/**
 * The package closure shipped beside bundles and into layers (cdk/constructs/package-closure.ts):
 * each dependency resolved from the package that requires it, nesting kept, Lambda's platform
 * packages only, a missing package fetched or named, never skipped in silence.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../cdk/constructs/bundling';
import { type ClosurePackage, closureFingerprint, installedSource, packageClosure, runsOnLambda, shipPackages } from '../../cdk/constructs/package-closure';

describe('on this project', () => {
  test("cld3-asm's closure keeps unixify's nested normalize-path@2 and the package it needs from the top level", () => {
    const closure = packageClosure(['cld3-asm'], PROJECT_ROOT);
    const paths = closure.map((p) => p.path);
    expect(paths).toContain('node_modules/unixify/node_modules/normalize-path');
    expect(closure.find((p) => p.path === 'node_modules/unixify/node_modules/normalize-path')?.version).toMatch(/^2\./);
    // normalize-path@2 requires it; the top-level normalize-path@3 does not (the bug: it was never copied).
    expect(paths).toContain('node_modules/remove-trailing-separator');
    expect(closure.every((p) => p.installed)).toBe(true);
  });

  test('platform packages: only the linux-x64-glibc binary of @napi-rs/canvas and of sharp', () => {
    const canvas = packageClosure(['@napi-rs/canvas'], PROJECT_ROOT).map((p) => p.name);
    expect(canvas).toContain('@napi-rs/canvas-linux-x64-gnu');
    expect(canvas.filter((n) => n.startsWith('@napi-rs/canvas-'))).toEqual(['@napi-rs/canvas-linux-x64-gnu']);
    const sharp = packageClosure(['sharp'], PROJECT_ROOT).map((p) => p.name);
    expect(sharp).toEqual(expect.arrayContaining(['sharp', '@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64']));
    expect(sharp.filter((n) => /darwin|win32|musl|arm|wasm/.test(n))).toEqual([]);
  });

  test('runsOnLambda reads os, cpu and libc as npm does', () => {
    expect(runsOnLambda({})).toBe(true);
    expect(runsOnLambda({ os: ['linux'], cpu: ['x64'], libc: ['glibc'] })).toBe(true);
    expect(runsOnLambda({ os: ['darwin'] })).toBe(false);
    expect(runsOnLambda({ os: ['linux'], cpu: ['arm64'] })).toBe(false);
    expect(runsOnLambda({ os: ['linux'], cpu: ['x64'], libc: ['musl'] })).toBe(false);
    expect(runsOnLambda({ os: ['!win32'] })).toBe(true);
    expect(runsOnLambda({ os: ['!linux'] })).toBe(false);
  });
});

describe('on a made-up tree', () => {
  let root: string;
  const pkg = (lockPath: string, manifest: Record<string, unknown>) => {
    mkdirSync(path.join(root, lockPath), { recursive: true });
    writeFileSync(path.join(root, lockPath, 'package.json'), JSON.stringify(manifest));
    writeFileSync(path.join(root, lockPath, 'index.js'), `module.exports = ${JSON.stringify(lockPath)};`);
  };
  const lock = (packages: Record<string, Record<string, unknown>>) =>
    writeFileSync(path.join(root, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'app' }, ...packages } }));

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'linklens-closure-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  test('a nested version is resolved before the hoisted one, from the package that requires it', () => {
    lock({
      'node_modules/a': { version: '1.0.0', dependencies: { b: '^2' } },
      'node_modules/a/node_modules/b': { version: '2.0.0', dependencies: { c: '^1' } },
      'node_modules/b': { version: '3.0.0' },
      'node_modules/c': { version: '1.0.0' },
      'node_modules/unused': { version: '1.0.0' },
    });
    for (const p of ['node_modules/a', 'node_modules/a/node_modules/b', 'node_modules/b', 'node_modules/c', 'node_modules/unused'])
      pkg(p, { name: path.basename(p) });
    const closure = packageClosure(['a'], root);
    expect(closure.map((p) => `${p.path}@${p.version}`)).toEqual(['node_modules/a@1.0.0', 'node_modules/a/node_modules/b@2.0.0', 'node_modules/c@1.0.0']);

    const out = mkdtempSync(path.join(tmpdir(), 'linklens-ship-'));
    try {
      shipPackages(['a'], root, out);
      expect(readFileSync(path.join(out, 'node_modules/a/node_modules/b/index.js'), 'utf8')).toContain('node_modules/a/node_modules/b');
      expect(existsSync(path.join(out, 'node_modules/c/index.js'))).toBe(true);
      expect(existsSync(path.join(out, 'node_modules/b'))).toBe(false);
      expect(existsSync(path.join(out, 'node_modules/unused'))).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('a required dependency missing from the lockfile fails with its name and who needs it', () => {
    lock({ 'node_modules/a': { version: '1.0.0', dependencies: { gone: '^1' } } });
    pkg('node_modules/a', { name: 'a' });
    expect(() => packageClosure(['a'], root)).toThrow(/gone, a dependency of a \(node_modules\/a\), is not in package-lock.json/);
    expect(() => packageClosure(['nope'], root)).toThrow(/nope is not in package-lock.json/);
  });

  test("deploying from another platform: Lambda's binary package is fetched at its locked version, the host's is not shipped", () => {
    lock({
      'node_modules/native': { version: '1.0.0', optionalDependencies: { 'native-linux-x64-gnu': '1.0.0', 'native-darwin-arm64': '1.0.0' } },
      'node_modules/native-linux-x64-gnu': { version: '1.0.0', os: ['linux'], cpu: ['x64'], libc: ['glibc'], optional: true, integrity: 'sha512-linux' },
      'node_modules/native-darwin-arm64': { version: '1.0.0', os: ['darwin'], cpu: ['arm64'], optional: true },
    });
    pkg('node_modules/native', { name: 'native' });
    pkg('node_modules/native-darwin-arm64', { name: 'native-darwin-arm64' }); // what a Mac installed
    const fetched: ClosurePackage[] = [];
    const out = mkdtempSync(path.join(tmpdir(), 'linklens-ship-'));
    try {
      shipPackages(['native'], root, out, {
        fetch: (p, into) => {
          fetched.push(p);
          writeFileSync(path.join(into, 'package.json'), JSON.stringify({ name: p.name, version: p.version }));
        },
      });
      expect(fetched.map((p) => `${p.name}@${p.version}`)).toEqual(['native-linux-x64-gnu@1.0.0']);
      expect(existsSync(path.join(out, 'node_modules/native-linux-x64-gnu/package.json'))).toBe(true);
      expect(existsSync(path.join(out, 'node_modules/native-darwin-arm64'))).toBe(false);
      // A fetch that brings nothing is an error, not a hole in the asset.
      expect(() => shipPackages(['native'], root, mkdtempSync(path.join(tmpdir(), 'linklens-ship-')), { fetch: () => {} })).toThrow(/could not be fetched/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('the fingerprint changes with a version or an integrity, not with unrelated packages', () => {
    const base = {
      'node_modules/a': { version: '1.0.0', integrity: 'sha512-one', dependencies: { c: '^1' } },
      'node_modules/c': { version: '1.0.0', integrity: 'sha512-c' },
      'node_modules/other': { version: '1.0.0', integrity: 'sha512-o' },
    };
    lock(base);
    const before = closureFingerprint(packageClosure(['a'], root));
    const again = mkdtempSync(path.join(tmpdir(), 'linklens-closure-'));
    let n = 0;
    const fp = (packages: Record<string, Record<string, unknown>>) => {
      packages = { ...packages, [`node_modules/pad${n++}`]: {} }; // a new size each time, as an edited lockfile has
      writeFileSync(path.join(again, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages }));
      return closureFingerprint(packageClosure(['a'], again));
    };
    try {
      expect(fp({ ...base, 'node_modules/other': { version: '2.0.0' } })).toBe(before);
      expect(fp({ ...base, 'node_modules/c': { version: '1.0.1', integrity: 'sha512-c' } })).not.toBe(before);
      expect(fp({ ...base, 'node_modules/c': { version: '1.0.0', integrity: 'sha512-changed' } })).not.toBe(before);
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });
});

describe('as the construct package finds them: installed by npm for it, the lockfile entries it was built with', () => {
  let dir: string;
  const put = (at: string, manifest: Record<string, unknown>) => {
    mkdirSync(path.join(dir, at), { recursive: true });
    writeFileSync(path.join(dir, at, 'package.json'), JSON.stringify(manifest));
    writeFileSync(path.join(dir, at, 'index.js'), `module.exports = ${JSON.stringify(at)};`);
  };
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'linklens-installed-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // The construct package's build recorded a tree where b@2 is nested under a, and c is hoisted.
  const built = {
    'node_modules/a': { version: '1.0.0', dependencies: { b: '^2' } },
    'node_modules/a/node_modules/b': { version: '2.0.0', dependencies: { c: '^1' } },
    'node_modules/c': { version: '1.0.0' },
    'node_modules/native': { version: '1.0.0', optionalDependencies: { 'native-linux-x64-gnu': '1.0.0' } },
    'node_modules/native-linux-x64-gnu': { version: '1.0.0', os: ['linux'], cpu: ['x64'], libc: ['glibc'], optional: true },
  };

  test("each package found the way Node finds it from the one that requires it, in the user's layout (not the build's)", () => {
    // The user's app: a and b@2 nested under the construct package (the app has a b@3 of its own at the top), c at the top.
    put('app/node_modules/@linklens/cdk', { name: '@linklens/cdk', version: '1.0.0' });
    put('app/node_modules/@linklens/cdk/node_modules/a', { name: 'a', version: '1.0.0' });
    put('app/node_modules/@linklens/cdk/node_modules/b', { name: 'b', version: '2.0.0' });
    put('app/node_modules/b', { name: 'b', version: '3.0.0' });
    put('app/node_modules/c', { name: 'c', version: '1.0.0' });
    const source = installedSource(built, path.join(dir, 'app/node_modules/@linklens/cdk'));
    const closure = packageClosure(['a'], source);
    expect(closure.map((p) => [p.path, p.dir && path.relative(dir, p.dir)])).toEqual([
      ['node_modules/a', 'app/node_modules/@linklens/cdk/node_modules/a'],
      ['node_modules/a/node_modules/b', 'app/node_modules/@linklens/cdk/node_modules/b'],
      ['node_modules/c', 'app/node_modules/c'],
    ]);
    // Shipped in the build's layout, from where they are installed.
    const out = path.join(dir, 'out');
    shipPackages(['a'], source, out);
    expect(readFileSync(path.join(out, 'node_modules/a/node_modules/b/index.js'), 'utf8')).toContain('@linklens/cdk/node_modules/b');
  });

  test('a copy of another version, or none (another platform), is fetched at the recorded version', () => {
    put('app/node_modules/@linklens/cdk', { name: '@linklens/cdk', version: '1.0.0' });
    put('app/node_modules/native', { name: 'native', version: '1.0.0' });
    put('app/node_modules/c', { name: 'c', version: '0.9.0' }); // the user's own c, another version
    const source = installedSource(built, path.join(dir, 'app/node_modules/@linklens/cdk'));
    expect(source.installedDir('node_modules/c', '1.0.0')).toBeUndefined();
    const fetched: string[] = [];
    shipPackages(['native'], source, path.join(dir, 'out'), {
      fetch: (p, into) => {
        fetched.push(`${p.name}@${p.version}`);
        writeFileSync(path.join(into, 'package.json'), JSON.stringify({ name: p.name, version: p.version }));
      },
    });
    expect(fetched).toEqual(['native-linux-x64-gnu@1.0.0']);
    expect(existsSync(path.join(dir, 'out/node_modules/native/index.js'))).toBe(true);
  });
});
