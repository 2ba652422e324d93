/**
 * The README and docs/ link only inside the repository: every relative link names a file that
 * exists, every #anchor names a heading of its target, and no link or bare URL leaves the repo.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const files = [
  path.join(root, 'README.md'),
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => path.join(root, 'docs', f)),
];

/** Fenced blocks become blank lines (line numbers stay), inline code is dropped. */
function stripCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, (block) => '\n'.repeat(block.split('\n').length - 1)).replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading slugs: lower case, punctuation but '-' dropped, spaces to '-', repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const slug = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Every problem with the links of one markdown file. */
function linkProblems(file: string, text: string, repoRoot: string): string[] {
  const problems: string[] = [];
  const body = stripCode(text);
  const targets = [
    ...[...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]),
    ...[...body.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]),
    ...[...body.matchAll(/<((?:https?|ftp|mailto):[^>]+)>/g)].map((m) => m[1]),
  ];
  for (const m of body.matchAll(/(?<![(<`])\bhttps?:\/\/[^\s)>`]+/g)) problems.push(`bare URL ${m[0]}`);
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push(`link leaves the repository: ${target}`);
      continue;
    }
    const [rel, frag] = target.split('#', 2);
    if (!rel) {
      if (frag && !anchorsOf(text).has(frag)) problems.push(`missing anchor: ${target}`);
      continue;
    }
    const dest = path.resolve(path.dirname(file), rel);
    if (dest !== repoRoot && !dest.startsWith(repoRoot + path.sep)) {
      problems.push(`link leaves the repository: ${target}`);
      continue;
    }
    if (!fs.existsSync(dest)) {
      problems.push(`missing target: ${target}`);
      continue;
    }
    if (frag) {
      if (!dest.endsWith('.md')) problems.push(`anchor on a non-markdown file: ${target}`);
      else if (!anchorsOf(fs.readFileSync(dest, 'utf8')).has(frag)) problems.push(`missing anchor: ${target}`);
    }
  }
  return problems;
}

test('the checker finds a missing file, a missing anchor, an outside link and a bare URL', () => {
  const file = path.join(root, 'docs', 'probe.md');
  const probe = [
    '# Title',
    '[ok](../README.md) [gone](./nope.md) [anchor](#title) [bad anchor](#nope)',
    '[out](https://example.com/x) [up](../../shared/spec.md) see https://example.org/y',
    '`https://in-code.example` is fine',
  ].join('\n');
  expect(linkProblems(file, probe, root)).toEqual([
    'bare URL https://example.org/y',
    'missing target: ./nope.md',
    'missing anchor: #nope',
    'link leaves the repository: https://example.com/x',
    'link leaves the repository: ../../shared/spec.md',
  ]);
});

test.each(files.map((f) => [path.relative(root, f), f]))('%s links only to files and headings inside the repository', (_name, file) => {
  expect(linkProblems(file, fs.readFileSync(file, 'utf8'), root)).toEqual([]);
});
