/**
 * openapi.yaml is the one source of the contract's types: lib/contract/openapi.gen.ts is what
 * `npm run contract:types` generates from it, checked in. These tests run that npm script's
 * openapi-typescript command (its CLI: its ESM dependencies do not load in Jest's CommonJS
 * runtime) into a temporary directory and compare: a stale checked-in file fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(__dirname, '../..');
const cli = path.join(path.dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');

/** The npm script's arguments: `openapi-typescript <document> [flags] --output <file>`. */
function scriptArgs(): { document: string; flags: string[]; output: string } {
  const script: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts['contract:types'];
  const [command, document, ...rest] = script.trim().split(/\s+/);
  expect(command).toBe('openapi-typescript');
  const at = rest.indexOf('--output');
  expect(at).toBeGreaterThanOrEqual(0);
  return { document, flags: rest.filter((_, i) => i !== at && i !== at + 1), output: rest[at + 1] };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'linklens-contract-types-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Generates the types of `document` with the npm script's flags; returns the file's text. */
async function generate(document: string, name: string): Promise<string> {
  const output = path.join(dir, name);
  await promisify(execFile)(process.execPath, [cli, document, ...scriptArgs().flags, '--output', output], { cwd: root, timeout: 50_000 });
  return readFileSync(output, 'utf8');
}

test('npm run contract:types generates lib/contract/openapi.gen.ts from openapi.yaml (the checked-in file is current; if not, run the script)', async () => {
  const { document, output } = scriptArgs();
  expect([document, output]).toEqual(['openapi.yaml', 'lib/contract/openapi.gen.ts']);
  const fresh = await generate(path.join(root, document), 'fresh.ts');
  expect(readFileSync(path.join(root, output), 'utf8')).toBe(fresh);
}, 60_000);

test('the check can fail: a document with one more field generates a different file', async () => {
  const yaml = readFileSync(path.join(root, 'openapi.yaml'), 'utf8');
  const changed = yaml.replace(/\n {4}CodehostRepository:\n {6}type: object\n {6}properties:\n/, '$&        archived:\n          type: boolean\n');
  expect(changed).not.toBe(yaml);
  const document = path.join(dir, 'changed.yaml');
  writeFileSync(document, changed);
  const generated = await generate(document, 'changed.ts');
  expect(generated).not.toBe(readFileSync(path.join(root, 'lib/contract/openapi.gen.ts'), 'utf8'));
  expect(generated).toMatch(/CodehostRepository: \{\n\s+archived\?: boolean;/);
}, 60_000);
