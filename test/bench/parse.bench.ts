/**
 * The `extract` phase: decoding and parsing a page and applying the field rules (readPage +
 * pageFields, CPU only: what the preview's `extract` entry of Server-Timing covers), and the
 * language check the jobs step runs beside the jobs (pageLanguage: declared, then cld3).
 * Pages: generated articles of 20 KB to 1 MB, or with BENCH_CORPUS=<dir> the corpus pages
 * (test/bench/corpus.ts). `npm run bench -- parse`; BENCH_RUNS sets the runs per page (5).
 */
import { pageFields, pageLanguage, readPage } from '../../lib/extract/extract-page.js';
import { largeArticle } from './content.bench.js';
import { benchPage, corpusPages, quantile } from './corpus.js';

export async function run(): Promise<void> {
  const corpus = process.env.BENCH_CORPUS;
  const pages = corpus
    ? corpusPages(corpus)
    : [20, 100, 300, 1024].map((kb) =>
        benchPage(`${kb} KB article`, 'https://news.example/2024/rivers.html', Buffer.from(largeArticle(kb * 1024)), 'text/html; charset=utf-8'),
      );
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  // Warm up: cld3 loads once per process, and the first parses compile the parser.
  for (const p of pages.slice(0, 3)) {
    const read = readPage(p.res, p.contentType);
    await pageLanguage(read, pageFields(read));
  }
  const parse: number[] = [];
  const language: number[] = [];
  for (const p of pages) {
    let read = readPage(p.res, p.contentType);
    let fields = pageFields(read);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      read = readPage(p.res, p.contentType);
      fields = pageFields(read);
      times.push(performance.now() - t0);
    }
    const t1 = performance.now();
    await pageLanguage(read, fields);
    language.push(performance.now() - t1);
    parse.push(quantile(times, 0.5));
    if (!corpus) process.stdout.write(`parse + rules, ${p.name}: median ${quantile(times, 0.5).toFixed(1)} ms over ${runs} runs\n`);
  }
  const sized = (keep: (bytes: number) => boolean) => parse.filter((_, i) => keep(pages[i].res.body.length));
  const under = sized((b) => b < 20 * 1024);
  const over = sized((b) => b > 300 * 1024);
  process.stdout.write(
    `parse + rules over ${pages.length} pages${corpus ? ` of ${corpus}` : ''}: p50 ${quantile(parse, 0.5).toFixed(1)} ms, p90 ${quantile(parse, 0.9).toFixed(1)} ms` +
      (under.length ? `; under 20 KB p50 ${quantile(under, 0.5).toFixed(1)} ms (${under.length})` : '') +
      (over.length ? `; over 300 KB p50 ${quantile(over, 0.5).toFixed(1)} ms (${over.length})` : '') +
      '\n',
  );
  process.stdout.write(
    `language (declared, then cld3 on title + description + text): p50 ${quantile(language, 0.5).toFixed(2)} ms, p90 ${quantile(language, 0.9).toFixed(2)} ms\n`,
  );
}
