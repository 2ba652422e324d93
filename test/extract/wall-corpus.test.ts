/**
 * The wall corpus (test/extract/wall-corpus/): pages that talk about walls or carry a form, and
 * walls shaped like the real ones, each read as the preview reads it (lib/extract/extract-page.ts
 * `readPage`). The confusion matrix must show no false wall and at most one missed wall in twenty;
 * docs/proxy.md reports it.
 */
import { readPage } from '../../lib/extract/extract-page';
import type { FetchResult } from '../../lib/fetch/types';
import { NOT_WALLS } from './wall-corpus/pages';
import type { CorpusCase } from './wall-corpus/shape';
import { WALLS } from './wall-corpus/walls';

/** The wall the preview sees in a corpus case, or undefined. */
function wallOf(c: CorpusCase): string | undefined {
  const finalUrl = c.finalUrl ?? c.url;
  const res: FetchResult = {
    url: c.url,
    finalUrl,
    status: c.status,
    headers: { 'content-type': 'text/html; charset=utf-8', ...c.headers },
    body: Buffer.from(c.body, 'utf8'),
    truncated: false,
    trail: c.trail ?? (finalUrl === c.url ? [c.url] : [c.url, finalUrl]),
  };
  return readPage(res, 'text/html; charset=utf-8').wall;
}

const seen = [...NOT_WALLS, ...WALLS].map((c) => ({ c, found: wallOf(c) }));
const falseWalls = seen.filter((s) => !s.c.wall && s.found);
const missed = seen.filter((s) => s.c.wall && !s.found);

test('the corpus is big enough: at least 30 pages that are no walls, at least 20 walls', () => {
  expect(NOT_WALLS.length).toBeGreaterThanOrEqual(30);
  expect(WALLS.length).toBeGreaterThanOrEqual(20);
  expect(NOT_WALLS.every((c) => c.wall === false) && WALLS.every((c) => c.wall !== false)).toBe(true);
});

test('the confusion matrix: no false wall, at least 19 walls in 20 found', () => {
  const matrix = {
    walls: { found: WALLS.length - missed.length, missed: missed.length },
    notWalls: { falseWalls: falseWalls.length, pages: NOT_WALLS.length - falseWalls.length },
  };
  // Printed for docs/proxy.md's table.
  if (process.env.WALL_CORPUS_REPORT)
    console.log(JSON.stringify(matrix), { falseWalls: falseWalls.map((s) => [s.c.name, s.found]), missed: missed.map((s) => s.c.name) });
  expect(falseWalls.map((s) => [s.c.name, s.found])).toEqual([]);
  expect(matrix.walls.found / WALLS.length).toBeGreaterThanOrEqual(19 / 20);
});

test.each(WALLS.map((c) => [c.name, c]))('a wall of the corpus is found as its kind: %s', (_name, c) => {
  expect(seen.find((s) => s.c === c)?.found).toBe(c.wall);
});
