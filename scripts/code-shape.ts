/**
 * The shape of the hand-written code in lib/, cdk/ and functions/: files over 400 lines, functions
 * over 80 lines and functions with more than 4 positional parameters. The layout issue's figures
 * come from here (`npx tsx scripts/code-shape.ts`, `--list` names each one).
 *
 * A function is any function declaration, method, constructor, accessor, function expression or
 * arrow function; its length is counted from its first line to its last. Generated files
 * (`*.gen.ts`) are left out.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const DIRS = ['lib', 'cdk', 'functions'];
const FILE_LINES = 400;
const FUNCTION_LINES = 80;
const POSITIONAL = 4;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts|cts)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.gen.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  line: number;
  name: string;
  size: number;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) {
    const cls = node.parent as ts.ClassLikeDeclaration;
    return `${cls.name?.getText(sf) ?? '(class)'}.constructor`;
  }
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  return '(anonymous)';
}

export function measure() {
  const files: Finding[] = [];
  const longFunctions: Finding[] = [];
  const wideFunctions: Finding[] = [];
  for (const path of DIRS.flatMap((d) => sources(join(ROOT, d)))) {
    const text = readFileSync(path, 'utf8');
    const file = relative(ROOT, path);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > FILE_LINES) files.push({ file, line: 1, name: file, size: lines });
    const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const name = functionName(node, sf);
        if (end - start + 1 > FUNCTION_LINES) longFunctions.push({ file, line: start, name, size: end - start + 1 });
        const positional = node.parameters.filter((p) => p.name.getText(sf) !== 'this').length;
        if (positional > POSITIONAL) wideFunctions.push({ file, line: start, name, size: positional });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { files, longFunctions, wideFunctions };
}

const { files, longFunctions, wideFunctions } = measure();
const list = process.argv.includes('--list');
const show = (title: string, items: Finding[], unit: string) => {
  console.log(`${title}: ${items.length}`);
  if (list) for (const f of items.sort((a, b) => b.size - a.size)) console.log(`  ${f.size} ${unit}  ${f.file}:${f.line}  ${f.name}`);
};
show(`hand-written files over ${FILE_LINES} lines`, files, 'lines');
show(`functions over ${FUNCTION_LINES} lines`, longFunctions, 'lines');
show(`functions with more than ${POSITIONAL} positional parameters`, wideFunctions, 'params');
