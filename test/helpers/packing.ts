/**
 * The project's packages as a user gets them, for the tests in test/package/: `npm pack` into a
 * temporary folder outside the repository, child processes with a clean environment, the
 * repository's tsc, and a loopback stand-in of the Lambda Invoke API.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

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
