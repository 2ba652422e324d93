/**
 * The project's packages as a user gets them, for the tests in test/package/: `npm pack` into a
 * temporary folder outside the repository, child processes with a clean environment, the
 * repository's tsc, and a loopback stand-in of the Lambda Invoke API.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { type LockEntry, resolveFrom } from '../../cdk/constructs/package-closure';

export const root = path.resolve(__dirname, '../..');
export const run = promisify(execFile);
/** The repository's TypeScript compiler, run with `node`. */
export const TSC = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** What `npm pack --json` says of a tarball, with its path. */
export interface Packed {
  filename: string;
  tarball: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

/**
 * The tarball of the package in `dir`, written to `destination`, as it is (--ignore-scripts: the
 * caller builds first; a prepack build would rebuild everything under tests that run dist/).
 */
export async function npmPack(dir: string, destination: string): Promise<Packed> {
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--offline', '--pack-destination', destination], { cwd: dir });
  const packed = JSON.parse(stdout)[0];
  return { ...packed, tarball: path.join(destination, packed.filename) };
}

/** The environment of a child: this one's, without any LINKPREVIEW_ or AWS_ setting. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LINKPREVIEW_') && !k.startsWith('AWS_')) env[k] = v;
  return { ...env, ...extra };
}

export interface InvokeApi {
  url: string;
  /** The function names invoked, in order. */
  invoked: string[];
  close(): Promise<void>;
}

/**
 * The Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations) played by a linklens
 * server on loopback: the payload is its request body (sent with `key`), the result its answer.
 */
export function startInvokeApi(serverUrl: string, key: string): Promise<InvokeApi> {
  const invoked: string[] = [];
  const server = http.createServer(async (req, res) => {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"message":"no such route"}');
      return;
    }
    invoked.push(decodeURIComponent(m[1]));
    const answer = await fetch(`${serverUrl}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
    res.end(await answer.text());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        invoked,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

/**
 * Writes an app's package.json and package-lock.json so that `npm ci --offline` installs, from
 * the npm cache that this repository's `npm ci` filled, what a user gets from the registry:
 * `tarballs` (packed packages, by name) and `registry` packages (by name), with every package
 * they need at the version of this repository's lockfile (the tarballs' dependencies are pinned
 * to those versions). `npm install --offline <name>@<version>` cannot do it: npm caches tarballs,
 * not the registry's package documents it would resolve versions with.
 */
export function writeOfflineProject(dir: string, deps: { tarballs: Record<string, string>; registry: string[] }): void {
  const repo = (JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const packages: Record<string, LockEntry> = {};
  const visit = (lockPath: string) => {
    if (packages[lockPath]) return;
    const entry = repo[lockPath];
    if (!entry) throw new Error(`${lockPath} is not in this repository's package-lock.json`);
    const { dev: _dev, devOptional: _devOptional, ...kept } = entry;
    packages[lockPath] = kept;
    for (const dep of [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}),
    ]) {
      const found = resolveFrom(repo, lockPath, dep);
      if (found) visit(found);
      else if (entry.dependencies?.[dep]) throw new Error(`${dep}, a dependency of ${lockPath}, is not in package-lock.json`);
    }
  };
  const dependencies: Record<string, string> = {};
  for (const name of deps.registry) {
    visit(`node_modules/${name}`);
    dependencies[name] = repo[`node_modules/${name}`].version as string;
  }
  for (const [name, tarball] of Object.entries(deps.tarballs)) {
    const pkg = JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' })) as LockEntry;
    for (const dep of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]) visit(`node_modules/${dep}`);
    const resolved = `file:${path.relative(dir, tarball)}`;
    dependencies[name] = resolved;
    packages[`node_modules/${name}`] = {
      version: pkg.version,
      resolved,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      optionalDependencies: pkg.optionalDependencies,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
    };
  }
  const manifest = { name: 'links-app', version: '0.0.0', private: true, dependencies };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    path.join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages: { '': manifest, ...packages } }, null, 2)}\n`,
  );
}
