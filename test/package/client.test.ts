/**
 * The client package, @linklens/client, as a user installs it: built (scripts/build-client.mjs into
 * dist/packages/client), `npm pack`ed into a temporary folder outside the repository, and installed
 * offline from the tarball into an empty project. There:
 *
 * - node_modules holds @linklens/client and nothing else, and its size stays within 200 KB;
 * - the `.` entry loads no module (no node: built-in, no package) and uses no Node global, and
 *   `./lambda` loads only @aws-sdk/client-lambda, by a dynamic import;
 * - strict TypeScript programs that import both entry points type-check with the repository's tsc:
 *   one for Node (nodenext resolution, Node's types), one for browsers and edge runtimes (bundler
 *   resolution, DOM and ES types only, no Node types), and the examples of the package's README
 *   and of docs/clients.md;
 * - the compiled Node program gets Link records from a linklens server on loopback, over HTTP and
 *   through `./lambda` with an injected invoke function (no AWS SDK installed), and typed errors;
 * - with the optional peer installed beside it, `./lambda` loads the SDK and invokes the function
 *   through a loopback stand-in of the Lambda Invoke API.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertConforms } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { cleanEnv, type InvokeApi, npmPack, type Packed, root, run, startInvokeApi, TSC } from '../helpers/packing';
import { startTestServer, TEST_KEY } from '../helpers/service';

const NAME = '@linklens/client';
const MAX_INSTALLED_BYTES = 200_000;

let work: string;
let project: string;
let installed: string;
let packed: Packed;
let site: FixtureServer;
let server: Awaited<ReturnType<typeof startTestServer>>;
/** node_modules of the project and the lock's packages, as npm left them. */
let modules: { entries: string[]; scoped: string[]; locked: string[] };

/** The user's Node program: strict TypeScript importing both entry points; prints what it got as JSON. */
const NODE_PROGRAM = `
import { createHttpClient, LinkPreviewClientError, type ErrorBody, type ImageSet, type LinkRecord, type LinkType } from '@linklens/client';
import { createLambdaClient, type InvokeFunction } from '@linklens/client/lambda';
import { renderCard, type CardOptions } from '@linklens/client/card';

// The declarations are real types, not \`any\` (an unresolved import would silently be \`any\`).
type IsAny<T> = 0 extends 1 & T ? true : false;
const notAny: [IsAny<LinkRecord>, IsAny<LinkType>, IsAny<ImageSet>, IsAny<ErrorBody>, IsAny<LinkPreviewClientError>, IsAny<InvokeFunction>] = [false, false, false, false, false, false];

const [baseUrl, apiKey, link] = process.argv.slice(2);
const client = createHttpClient({ baseUrl, apiKey });
const record: LinkRecord = await client.preview(link, { acceptLanguage: 'fr' });
const type: LinkType = record.type;
const large: ImageSet['large'] | undefined = record.image?.large;
// @ts-expect-error a Link record has no such field
void record.noSuchField;

// The direct invocation with the invocation injected: it plays Lambda by posting the payload to the same server.
const invoked: string[] = [];
const invoke: InvokeFunction = async ({ FunctionName, Payload }) => {
  invoked.push(FunctionName);
  const res = await fetch(baseUrl, {
    method: 'POST',
    headers: { authorization: \`Bearer \${apiKey}\`, 'content-type': 'application/json' },
    body: new TextDecoder().decode(Payload),
  });
  return { Payload: new Uint8Array(await res.arrayBuffer()) };
};
const lambda = createLambdaClient({ functionName: 'linklens-preview', invoke });
const viaLambda: LinkRecord = await lambda.preview(link);

const describe = (e: unknown) => (e instanceof LinkPreviewClientError ? { status: e.status, errorCode: e.errorCode, message: e.message } : { unexpected: String(e) });
const httpError = await client.preview('notaurl://x').then(() => 'no error', describe);
const wrongKey = await createHttpClient({ baseUrl, apiKey: 'wrong' }).preview(link).then(() => 'no error', describe);
const lambdaError = await lambda.preview('').then(() => 'no error', describe);
// Without \`invoke\`, ./lambda loads @aws-sdk/client-lambda, which this project does not have.
const noSdk = await createLambdaClient({ functionName: 'linklens-preview' }).preview(link).then(() => 'no error', describe);

// The card, rendered in Node from the record just received.
const options: CardOptions = { size: 'small', theme: 'dark' };
const card = renderCard(record, options);

console.log(JSON.stringify({ notAny, type, large, record, viaLambda, invoked, httpError, wrongKey, lambdaError, noSdk, card }));
`;

/** The same entry points from a browser or an edge runtime: ES and DOM types only, no Node types. */
const BROWSER_PROGRAM = `
import { createHttpClient, LinkPreviewClientError, type LinkRecord } from '@linklens/client';
import { createLambdaClient, type InvokeResult } from '@linklens/client/lambda';
import { renderCard } from '@linklens/client/card';
import { activateCard, defineCardElement, type LinklensCardElement } from '@linklens/client/card-element';

export function showCard(record: LinkRecord): void {
  defineCardElement();
  const el = document.createElement('linklens-card') as LinklensCardElement;
  el.record = record;
  document.body.append(el);
  const div = document.createElement('div');
  div.innerHTML = renderCard(record, { inlineStyles: false });
  activateCard(div);
}

export async function title(link: string): Promise<string | undefined> {
  const client = createHttpClient({ baseUrl: location.origin, apiKey: 'key', fetch: window.fetch.bind(window), timeoutMs: 5000 });
  try {
    const record: LinkRecord = await client.preview(link, { signal: new AbortController().signal });
    return record.title;
  } catch (err) {
    if (err instanceof LinkPreviewClientError) return err.errorCode;
    throw err;
  }
}

export const viaLambda = createLambdaClient({
  functionName: 'f',
  invoke: async ({ Payload }): Promise<InvokeResult> => ({ Payload }),
});
`;

/** With the optional peer installed: ./lambda loads the SDK itself (its endpoint from AWS_ENDPOINT_URL_LAMBDA). */
const PEER_PROGRAM = `
import { createLambdaClient } from '@linklens/client/lambda';
const record = await createLambdaClient({ functionName: 'linklens-preview' }).preview(process.argv[2]);
console.log(JSON.stringify(record));
`;

/** The TypeScript examples of the package's README and of docs/clients.md that use the package alone. */
function documentedExamples(): string[] {
  const docs = [path.join(root, 'lib/client/README.md'), path.join(root, 'docs/clients.md')];
  return docs.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^```ts\n([\s\S]*?)^```/gm)]
      .map((m) => m[1])
      .filter((code) => {
        const imported = [...code.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
        return imported.length > 0 && imported.every((p) => p === NAME || p.startsWith(`${NAME}/`));
      }),
  );
}

const tsconfig = (compilerOptions: Record<string, unknown>, files: string[]) =>
  JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, skipLibCheck: false, ...compilerOptions }, files }, null, 2);

/** Every file below `dir`, with its path relative to it. */
function filesBelow(dir: string, prefix = ''): { path: string; bytes: number; blocks: number }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesBelow(full, `${prefix}${e.name}/`);
    const st = statSync(full);
    return [{ path: `${prefix}${e.name}`, bytes: st.size, blocks: st.blocks }];
  });
}

/** An installed module and every module it imports statically, by relative specifiers (the shared chunks). */
function withChunks(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const code = readFileSync(path.join(installed, file), 'utf8');
  const relative = [...code.matchAll(/\bfrom\s*["'](\.\/[^"']+)["']/g)].map((m) => path.posix.join(path.posix.dirname(file), m[1]));
  return [file, ...relative.flatMap((f) => withChunks(f, seen))];
}

/** The module specifiers a file names: static imports and re-exports, and dynamic imports. */
function specifiers(code: string): { static: string[]; dynamic: string[] } {
  return {
    static: [...code.matchAll(/(?:^|[\s;}])(?:import|export)\b[^'"]*?\bfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']/g)].map(
      (m) => m[1] ?? m[2],
    ),
    dynamic: [...code.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]),
  };
}

let output: {
  notAny: boolean[];
  type: string;
  large: unknown;
  record: Record<string, any>;
  viaLambda: Record<string, any>;
  invoked: string[];
  httpError: unknown;
  wrongKey: unknown;
  lambdaError: unknown;
  noSdk: { status: number; errorCode: string; message: string };
  card: string;
};

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'linklens-client-'));
  project = path.join(work, 'project');
  installed = path.join(project, 'node_modules', ...NAME.split('/'));

  await run(process.execPath, ['scripts/build-client.mjs'], { cwd: root });
  packed = await npmPack(path.join(root, 'dist/packages/client'), work);

  // An empty project, the tarball installed with npm, offline (the package has no dependency to fetch).
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-linklens-client', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball], { cwd: project });
  const lock = JSON.parse(readFileSync(path.join(project, 'package-lock.json'), 'utf8'));
  modules = {
    entries: readdirSync(path.join(project, 'node_modules')).sort(),
    scoped: readdirSync(path.join(project, 'node_modules', '@linklens')).sort(),
    locked: Object.keys(lock.packages).filter((k) => k !== ''),
  };

  writeFileSync(path.join(project, 'main.ts'), NODE_PROGRAM);
  writeFileSync(path.join(project, 'browser.ts'), BROWSER_PROGRAM);
  const examples = documentedExamples().map((code, i) => {
    writeFileSync(path.join(project, `example-${i}.ts`), code);
    return `example-${i}.ts`;
  });
  // Node: nodenext resolution, Node's types only (the project has no @types of its own); compiled to out/.
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    tsconfig(
      {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['ES2023'],
        typeRoots: [path.join(root, 'node_modules', '@types')],
        types: ['node'],
        outDir: 'out',
      },
      ['main.ts', ...examples],
    ),
  );
  // A browser or an edge runtime, through a bundler: no Node types at all.
  writeFileSync(
    path.join(project, 'tsconfig.browser.json'),
    tsconfig({ module: 'esnext', moduleResolution: 'bundler', lib: ['ES2023', 'DOM'], types: [], noEmit: true }, ['browser.ts']),
  );
  await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project });
  await run(process.execPath, [TSC, '-p', 'tsconfig.browser.json'], { cwd: project });

  site = await startFixtureServer({ '/article': { body: html('<title>Un article</title><meta name="description" content="Lu par le client">', '', 'fr') } });
  server = await startTestServer();
  const ran = await run(process.execPath, [path.join(project, 'out', 'main.js'), server.url, TEST_KEY, site.url('/article')], {
    cwd: project,
    env: cleanEnv(),
  });
  output = JSON.parse(ran.stdout);
}, 120_000);

afterAll(async () => {
  await site?.close();
  if (server) {
    await server.close();
    server.cleanup();
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the package: ESM with declarations, the two entry points, no dependency, the AWS SDK an optional peer', () => {
  const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  expect(manifest).toMatchObject({
    name: NAME,
    type: 'module',
    sideEffects: false,
    engines: { node: '>=20' },
    license: 'MIT',
    exports: {
      '.': { types: './types/client/index.d.ts', default: './index.js' },
      './lambda': { types: './types/client/lambda.d.ts', default: './lambda.js' },
      './card': { types: './types/client/card.d.ts', default: './card.js' },
      './card-element': { types: './types/client/card-element.d.ts', default: './card-element.js' },
    },
    peerDependencies: { '@aws-sdk/client-lambda': expect.any(String) },
    peerDependenciesMeta: { '@aws-sdk/client-lambda': { optional: true } },
  });
  // `types` before `default` in each condition set: the first match wins.
  for (const conditions of Object.values(manifest.exports).filter((c) => typeof c === 'object')) expect(Object.keys(conditions as object)[0]).toBe('types');
  for (const field of ['dependencies', 'optionalDependencies', 'bundleDependencies', 'scripts']) expect(manifest[field]).toBeUndefined();
  expect(readFileSync(path.join(installed, 'README.md'), 'utf8')).toContain(`npm install ${NAME}`);
  const files = packed.files.map((f) => f.path).sort();
  for (const f of files) expect(f).toMatch(/^([\w-]+\.js|types\/(client|contract)\/[\w.-]+\.d\.ts|package\.json|README\.md|LICENSE)$/);
  expect(files).toEqual(
    expect.arrayContaining(['index.js', 'lambda.js', 'types/client/index.d.ts', 'types/client/lambda.d.ts', 'types/contract/openapi.gen.d.ts']),
  );
});

test('installed alone: node_modules holds @linklens/client and nothing else, within 200 KB', () => {
  expect(modules.entries).toEqual(['.package-lock.json', '@linklens']);
  expect(modules.scoped).toEqual(['client']);
  expect(modules.locked).toEqual([`node_modules/${NAME}`]);
  const files = filesBelow(installed);
  const bytes = files.reduce((n, f) => n + f.bytes, 0);
  const onDisk = files.reduce((n, f) => n + f.blocks * 512, 0);
  expect(bytes).toBe(packed.unpackedSize);
  expect(bytes).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
  expect(onDisk).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
});

test('the Link record types are the ones generated from openapi.yaml (lib/contract/openapi.gen.ts), declared without the server', () => {
  const generated = readFileSync(path.join(installed, 'types/contract/openapi.gen.d.ts'), 'utf8');
  expect(generated).toMatch(/\bLink: \{/);
  expect(generated).toContain("export type Link = components['schemas']['Link'];");
  // Every declaration file names only declaration files of the package: no server module, no package.
  for (const f of filesBelow(path.join(installed, 'types'))) {
    const code = readFileSync(path.join(installed, 'types', f.path), 'utf8');
    const { static: named, dynamic } = specifiers(code);
    for (const s of [...named, ...dynamic]) expect(`${f.path}: ${s}`).toMatch(/: \.\.?\/(client|contract)\/[\w.-]+\.js$|: \.\/[\w.-]+\.js$/);
  }
});

test('the `.`, `./card` and `./card-element` entries load no module and use no Node global; `./lambda` loads only the AWS SDK, dynamically', () => {
  const index = withChunks('index.js');
  expect(index.length).toBeGreaterThan(1);
  for (const file of [...index, ...withChunks('card.js'), ...withChunks('card-element.js')]) {
    const code = readFileSync(path.join(installed, file), 'utf8');
    const { static: named, dynamic } = specifiers(code);
    expect(named.filter((s) => !s.startsWith('./'))).toEqual([]);
    expect(dynamic).toEqual([]);
    expect(code).not.toMatch(/\bnode:|\brequire\s*\(|\bprocess\.|\bBuffer\b|__dirname|__filename/);
  }
  const lambda = withChunks('lambda.js');
  const loaded = lambda.flatMap((file) => {
    const { static: named, dynamic } = specifiers(readFileSync(path.join(installed, file), 'utf8'));
    expect(named.filter((s) => !s.startsWith('./'))).toEqual([]);
    return dynamic;
  });
  expect(loaded).toEqual(['@aws-sdk/client-lambda']);
});

test('strict programs type-check against the declarations: Node (nodenext), a browser (bundler, DOM types only), and the documented examples', () => {
  // The tsc runs of beforeAll passed; the examples are there to be checked.
  expect(documentedExamples().length).toBeGreaterThanOrEqual(3);
  expect(output.notAny).toEqual([false, false, false, false, false, false]);
});

test('over HTTP against a linklens server on loopback: a typed Link record and typed errors', () => {
  assertConforms(output.record);
  expect(output.record).toMatchObject({ ok: true, type: 'PAGE', title: 'Un article', description: 'Lu par le client', language: 'fr' });
  expect(output.type).toBe('PAGE');
  expect(output.httpError).toMatchObject({ status: 400, errorCode: 'LINK_INVALID' });
  expect(output.wrongKey).toMatchObject({ status: 401, errorCode: 'UNAUTHORIZED' });
});

test('./card renders the received record in Node: the card of its title, nothing unescaped', () => {
  expect(output.card).toMatch(/^<article class="ll-card ll-small ll-theme-dark ll-no-media" dir="ltr" lang="fr">/);
  expect(output.card).toContain('>Un article</a>');
  expect(output.card).toContain('<p class="ll-description">Lu par le client</p>');
  expect(output.card).not.toMatch(/<script|\son\w+=/i);
});

test('./lambda with an injected invoke function (no AWS SDK): the record, and the same error class', () => {
  assertConforms(output.viaLambda);
  expect(output.viaLambda).toMatchObject({ ok: true, type: 'PAGE', title: 'Un article' });
  expect(output.invoked).toEqual(['linklens-preview', 'linklens-preview']);
  expect(output.lambdaError).toMatchObject({ status: 400, errorCode: 'LINK_REQUIRED' });
  // Without `invoke` and without the SDK: a typed error that says what to install.
  expect(output.noSdk).toMatchObject({ status: 0, errorCode: 'TRANSPORT_ERROR' });
  expect(output.noSdk.message).toContain('npm install @aws-sdk/client-lambda');
});

describe('with the optional peer @aws-sdk/client-lambda installed beside it', () => {
  let invokeApi: InvokeApi | undefined;
  afterAll(() => invokeApi?.close());

  test('./lambda loads the SDK and invokes the named function through the Invoke API', async () => {
    mkdirSync(path.join(project, 'node_modules', '@aws-sdk'));
    symlinkSync(path.join(root, 'node_modules', '@aws-sdk', 'client-lambda'), path.join(project, 'node_modules', '@aws-sdk', 'client-lambda'), 'dir');
    writeFileSync(path.join(project, 'peer.mjs'), PEER_PROGRAM);
    invokeApi = await startInvokeApi(server.url, TEST_KEY);
    const { stdout } = await run(process.execPath, ['peer.mjs', site.url('/article')], {
      cwd: project,
      env: cleanEnv({
        AWS_ENDPOINT_URL_LAMBDA: invokeApi.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDLOOPBACK',
        AWS_SECRET_ACCESS_KEY: 'loopback',
        AWS_CONFIG_FILE: path.join(work, 'no-aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'no-aws-credentials'),
      }),
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, type: 'PAGE', title: 'Un article' });
    expect(invokeApi.invoked).toEqual(['linklens-preview']);
  }, 30_000);
});
