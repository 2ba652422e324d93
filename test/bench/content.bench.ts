/**
 * The `content` phase: the page-content job's work on a 300 KB article (linkedom DOM + Readability
 * + sanitizer + turndown + text), median over runs, once on a 3 MB article (cut to the HTML cap),
 * and the heap the DOM takes for 300 KB and 3 MB. `npm run bench -- content`.
 */
import { extractPageContent, PAGE_CONTENT_LIMITS } from '../../lib/page/page-content-dom.js';
import { articlePage, paragraphs } from '../page/fixtures.js';
import { median, timeRuns } from './bench.js';

/** An article of about `bytes`: the fixture article with more paragraphs, sidebars and comments around it. */
export function largeArticle(bytes: number): string {
  const base = articlePage();
  const extra: string[] = [];
  let size = base.length;
  let i = 0;
  while (size < bytes) {
    const block = `<p>${paragraphs(120, 120)[0]}</p>\n<div class="comment"><span class="author">reader ${i}</span><p>${paragraphs(20, 20)[0]}</p></div>\n`;
    extra.push(i % 3 === 0 ? block : `<p>${paragraphs(90, 90)[0]}</p>\n`);
    size += extra[extra.length - 1].length;
    i++;
  }
  return base.replace('</article>', `${extra.join('')}</article>`);
}

const mb = (n: number) => (n / (1024 * 1024)).toFixed(1);

function heapOf(fn: () => unknown): number {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().heapUsed;
  const keep = fn();
  const after = process.memoryUsage().heapUsed;
  void keep;
  return after - before;
}

export async function run(): Promise<void> {
  const article = largeArticle(300 * 1024);
  const url = 'https://news.example/2024/rivers.html';
  const times = await timeRuns(9, async () => extractPageContent(article, url), 2);
  const out = extractPageContent(article, url);
  process.stdout.write(
    `content extraction, ${Math.round(article.length / 1024)} KB article: median ${median(times).toFixed(0)} ms over ${times.length} runs (${out.text.split(/\s+/).length} words of text, ${Math.round(out.markdown.length / 1024)} KB Markdown)\n`,
  );

  const { parseHTML } = await import('linkedom');
  const big = largeArticle(3 * 1024 * 1024);
  process.stdout.write(
    `linkedom DOM heap: ${mb(heapOf(() => parseHTML(article)))} MB for 300 KB, ${mb(heapOf(() => parseHTML(big)))} MB for 3 MB${(globalThis as { gc?: unknown }).gc ? '' : ' (run with --expose-gc for steadier figures)'}\n`,
  );
  const t0 = performance.now();
  extractPageContent(big, url);
  process.stdout.write(
    `content extraction, 3 MB article (cut to ${PAGE_CONTENT_LIMITS.maxChars / 1024} KB of HTML): ${(performance.now() - t0).toFixed(0)} ms once\n`,
  );
}
