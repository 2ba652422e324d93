/**
 * The page's content versions: Readability on linkedom, the sanitizer, turndown Markdown, plain
 * text, and the reading time (one implementation, shared with TEXT and PDF).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { loadConfig } from '../../lib/config';
import type { ContentImage } from '../../lib/jobs/kinds';
import { readMemo } from '../../lib/jobs/memo';
import * as mediaText from '../../lib/media/text';
import { runPageContentJob } from '../../lib/page/page-content';
import { extractPageContent, nestingDepth, PAGE_CONTENT_LIMITS, readPageContent, writePageVersions } from '../../lib/page/page-content-dom';
import { pageDigest, recallPage } from '../../lib/page/page-memo';
import { PAGE_ASSET_TYPES, pageVersionKeys, storeStandIns } from '../../lib/page/page-versions';
import { CJK_CHARS_PER_MINUTE, countText, countWords, readingMinutes, WORDS_PER_MINUTE } from '../../lib/page/reading-time';
import { ARTICLE_PROSE_WORDS, articlePage, CJK_PROSE_CHARS, cjkArticlePage, homePage, hostilePage } from './fixtures';

const URL_ = 'https://news.example/2024/rivers.html';

describe('reading time', () => {
  test('words at 230 a minute, Chinese/Japanese characters at 300 a minute, rounded up', () => {
    expect(WORDS_PER_MINUTE).toBe(230);
    expect(CJK_CHARS_PER_MINUTE).toBe(300);
    expect(countText('one two three')).toEqual({ words: 3, cjkChars: 0 });
    expect(countText('日本語の文章です')).toEqual({ words: 0, cjkChars: 8 });
    expect(countText('Linklens は 速い service')).toEqual({ words: 2, cjkChars: 3 });
    expect(countText('한국어 문장은 띄어 씁니다')).toEqual({ words: 4, cjkChars: 0 }); // Hangul is spaced: words
    expect(readingMinutes({ words: 0, cjkChars: 0 })).toBe(0);
    expect(readingMinutes({ words: 1, cjkChars: 0 })).toBe(1);
    expect(readingMinutes({ words: 230, cjkChars: 0 })).toBe(1);
    expect(readingMinutes({ words: 231, cjkChars: 0 })).toBe(2);
    expect(readingMinutes({ words: 0, cjkChars: 600 })).toBe(2);
    expect(readingMinutes({ words: 0, cjkChars: 601 })).toBe(3);
    expect(readingMinutes({ words: 115, cjkChars: 150 })).toBe(1); // half a minute each
  });

  test('TEXT and PDF use the same implementation', () => {
    expect(mediaText.readingMinutes).toBe(readingMinutes);
    expect(mediaText.countWords).toBe(countWords);
    expect(mediaText.WORDS_PER_MINUTE).toBe(WORDS_PER_MINUTE);
  });
});

describe('article', () => {
  const c = extractPageContent(articlePage(), URL_);

  test('Readability finds the article; title from the page', () => {
    expect(c.article).toBe(true);
    expect(c.title).toBe('How rivers shape stone');
  });

  test('the word count is the article, not the navigation, sidebar or footer', () => {
    const { words } = countText(c.text);
    // prose + title (4) + headings (5 + 2) + link line (8) + list (8) + alt (2) + code (6) + table (6)
    expect(words).toBeGreaterThanOrEqual(ARTICLE_PROSE_WORDS + 30);
    expect(words).toBeLessThanOrEqual(ARTICLE_PROSE_WORDS + 60);
    expect(c.text).not.toMatch(/Most read|All rights reserved|Sport/);
    expect(readingMinutes(countText(c.text))).toBe(6); // ~1190 words / 230
  });

  test('Markdown keeps headings, lists, links, images, code blocks and tables', () => {
    const md = c.markdown;
    expect(md.startsWith('# How rivers shape stone\n')).toBe(true);
    expect(md).toMatch(/^## The slow work of water$/m);
    expect(md).toMatch(/^## Measuring it$/m);
    expect(md).toMatch(/^-\s+Abrasion by sand$/m);
    expect(md).toMatch(/^-\s+Hydraulic action$/m);
    expect(md).toContain('[erosion primer](https://news.example/science/erosion)');
    expect(md).toContain('[map](https://other.example/map)');
    expect(md).toContain('![A canyon](https://news.example/2024/images/canyon.jpg)');
    expect(md).toContain('```python\ndef rate(depth, years):\n    return depth / years\n```');
    expect(md).toMatch(/^\| River \| Rate \|$/m);
    expect(md).toMatch(/^\| Colorado \| 0\.3 \|$/m);
  });

  test('HTML is a standalone UTF-8 document with absolute URLs', () => {
    expect(c.html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(c.html).toContain('<meta charset="utf-8">');
    expect(c.html).toContain('<h1>How rivers shape stone</h1>');
    expect(c.html).toContain('href="https://news.example/science/erosion"');
    expect(c.html).toContain('src="https://news.example/2024/images/canyon.jpg"');
    expect(c.html).toContain('<code class="language-python">');
    expect(c.html).not.toMatch(/<script|<nav|<footer|<aside|class="(?!language-)|<DIV/);
  });

  test('plain text has blocks on their own lines and code indentation kept', () => {
    expect(c.text.startsWith('How rivers shape stone\n\n')).toBe(true);
    expect(c.text).toContain('\n- Abrasion by sand\n- Solution of limestone\n- Hydraulic action\n');
    expect(c.text).toContain('def rate(depth, years):\n    return depth / years');
    expect(c.text).not.toMatch(/<[a-z]/i);
  });
});

describe('home page (not an article)', () => {
  const c = extractPageContent(homePage(), 'https://acme.example/');

  test('the body minus navigation, header, footer and cookie banner', () => {
    expect(c.article).toBe(false);
    expect(c.text).toContain('Build faster with Acme');
    expect(c.text).toContain('Fast previews');
    expect(c.text).not.toMatch(/Pricing|Log in|We use cookies|Copyright Acme|About/);
    expect(c.markdown).toMatch(/^# Build faster with Acme$/m);
    expect(c.markdown).toMatch(/^### Fast previews$/m);
    expect(c.markdown).toContain('[More](https://acme.example/features/0)');
    expect(countText(c.text).words).toBeGreaterThan(40);
    expect(readingMinutes(countText(c.text))).toBe(1);
  });
});

describe('CJK article', () => {
  const c = extractPageContent(cjkArticlePage(), 'https://zh.example/a');

  test('counted by characters: 1500 Han characters (plus the title) read in 6 minutes', () => {
    const counts = countText(c.text);
    expect(counts.cjkChars).toBeGreaterThanOrEqual(CJK_PROSE_CHARS);
    expect(counts.cjkChars).toBeLessThanOrEqual(CJK_PROSE_CHARS + 16);
    expect(counts.words).toBe(0);
    expect(readingMinutes(counts)).toBe(6); // ~1508 / 300, rounded up
    expect(c.html).toMatch(/<html lang="zh">/);
    expect(c.markdown).toMatch(/河流如何塑造石头/);
  });
});

describe('hostile page', () => {
  const c = extractPageContent(hostilePage(), 'https://news.example/hostile/page.html');

  test('no scripts, event handlers, styles, frames, forms, javascript: or data: URLs survive', () => {
    expect(c.html).not.toMatch(/<script|<style|<iframe|<form|<input|<button|<object|<embed|<svg|<noscript|<custom-widget/i);
    expect(c.html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(c.html).not.toMatch(/style=|javascript:|data:|evil\.example|alert\(|document\.cookie/i);
    expect(c.html).not.toMatch(/\sid=|\sclass=/);
    expect(c.html).toContain('href="https://news.example/relative/page"');
    expect(c.html).toContain('rel="noopener noreferrer nofollow"');
    expect(c.html).toContain('src="https://news.example/hostile/x.png"');
    expect(c.html).toContain('widget text'); // unknown elements are unwrapped, their text kept
    expect(c.markdown).not.toMatch(/javascript:|alert\(|evil\.example|data:/i);
    expect(c.text).not.toMatch(/alert\(|document\.cookie|evil\.example/);
    expect(countText(c.text).words).toBeGreaterThanOrEqual(400);
  });
});

describe('a large page', () => {
  test('scripts, styles, SVG and comments are cut out before the size cap, so the article behind them is read', () => {
    const junk = `<script>${'var x = 1;'.repeat(70_000)}</script><style>${'.a{b:c}'.repeat(50_000)}</style><!-- ${'x'.repeat(200_000)} --><svg>${'<path d="M0 0"/>'.repeat(20_000)}</svg>`;
    const html = articlePage().replace('<link rel="stylesheet" href="/site.css">', junk);
    expect(html.length).toBeGreaterThan(PAGE_CONTENT_LIMITS.maxChars * 2);
    const c = extractPageContent(html, URL_);
    expect(c.article).toBe(true);
    expect(countText(c.text).words).toBeGreaterThan(ARTICLE_PROSE_WORDS);
  });

  test('past the cap the page is cut: the content is the first part only, and nothing breaks', () => {
    const html = articlePage().replace('</article>', `${'<p>tail words here</p>'.repeat(40_000)}</article>`);
    const c = extractPageContent(html, URL_);
    expect(c.text.length).toBeLessThan(PAGE_CONTENT_LIMITS.maxChars);
    expect(c.text).toContain('How rivers shape stone');
  });
});

describe('the page-content job', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'linklens-page-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("stores HTML, Markdown and text with their charset, at the addresses the page's digest fixes; built once", async () => {
    const blobs = new FsBlobStore(dir, () => 'http://assets.test');
    // Windows-1252 bytes declared in the header: decoded before extraction, stored as UTF-8.
    const html = articlePage().replace('<p>Read the <a', '<p>Read — at the café — the <a');
    const bytes = Buffer.from(html.replace('—', '\u0097').replace('é', '\u00e9'), 'latin1');
    const input = { url: URL_, bytesBase64: bytes.toString('base64'), contentType: 'text/html; charset=windows-1252' };
    const r = await runPageContentJob(input, { blobs });
    expect(r.article).toBe(true);
    expect(r.estimatedReadingTimeInMinutes).toBe(6);
    // The addresses are the page's digest (its final URL, Content-Type and bytes), the page memo's own.
    const digest = pageDigest({ url: URL_, contentType: input.contentType, bytes });
    for (const [u, name, type] of [
      [r.htmlUrl, 'page.html', PAGE_ASSET_TYPES.html],
      [r.markdownUrl, 'page.md', PAGE_ASSET_TYPES.markdown],
      [r.rawTextUrl, 'page.txt', PAGE_ASSET_TYPES.text],
    ] as const) {
      expect(u).toBe(`http://assets.test/assets/${digest}/${name}`);
      const key = u!.replace('http://assets.test/', '');
      expect(await blobs.meta(key)).toMatchObject({ contentType: type, cacheControl: 'public, max-age=31536000, immutable' });
      expect((await blobs.get(key))!.toString('utf8')).toContain('café');
    }
    expect(PAGE_ASSET_TYPES).toEqual({ html: 'text/html; charset=utf-8', markdown: 'text/markdown; charset=utf-8', text: 'text/plain; charset=utf-8' });
    // page.html, stored last, carries the images' counts (the article's one image; no fetcher here: removed).
    const htmlKey = r.htmlUrl!.replace('http://assets.test/', '');
    expect((await blobs.head(htmlKey))?.metadata).toEqual({ images: '1/0' });
    expect(r.images).toEqual({ found: 1, hosted: 0 });
    // The job's result is remembered for these bytes (the record may have gone out without it).
    const { images: _counts, ...named } = r;
    expect(((await readMemo(blobs, `jobs/page-content/${digest}.json`)) as { content: unknown }).content).toEqual(named);
    // The same page again: the same addresses, the build found by one HEAD, nothing put but the job's memo.
    const puts = jest.spyOn(blobs, 'put');
    const heads = jest.spyOn(blobs, 'head');
    const again = await runPageContentJob(input, { blobs });
    expect(again).toEqual(r);
    expect(heads.mock.calls.map(([k]) => k)).toEqual([htmlKey]);
    expect(puts.mock.calls.map(([k]) => k)).toEqual([`jobs/page-content/${digest}.json`]);
    // Stand-ins in their place (a build that failed before): built again over them, page.html last.
    const other = new FsBlobStore(mkdtempSync(path.join(dir, 'stand-in-')), () => 'http://assets.test');
    await storeStandIns(other, digest);
    expect((await other.get(htmlKey))!.toString('utf8')).not.toContain('café');
    const putsOther = jest.spyOn(other, 'put');
    await runPageContentJob(input, { blobs: other });
    const versionPuts = putsOther.mock.calls.map(([k]) => k).filter((k) => k.startsWith('assets/'));
    expect(versionPuts.map((k) => k.split('/').pop())).toEqual(['page.md', 'page.txt', 'page.html']);
    expect((await other.get(htmlKey))!.equals((await blobs.get(htmlKey))!)).toBe(true);
    expect((await other.meta(htmlKey)).cacheControl).toBe('public, max-age=31536000, immutable');
  });

  test('an empty page names no versions and gives no reading time; its addresses get stand-ins (a record may have named them before the read), and its memo says why', async () => {
    const blobs = new FsBlobStore(mkdtempSync(path.join(dir, 'empty-')), () => 'http://assets.test');
    const puts = jest.spyOn(blobs, 'put');
    const bytes = Buffer.from('<html><body><script>x()</script></body></html>');
    const r = await runPageContentJob({ url: URL_, bytesBase64: bytes.toString('base64') }, { blobs });
    expect(r.htmlUrl).toBeUndefined();
    expect(r.estimatedReadingTimeInMinutes).toBeUndefined();
    expect(r.reason).toBe('no text');
    const digest = pageDigest({ url: URL_, bytes });
    const keys = Object.values(pageVersionKeys({ url: URL_, bytes }));
    expect(puts.mock.calls.map(([k]) => k).sort()).toEqual([...keys, `jobs/page-content/${digest}.json`].sort());
    for (const key of keys) expect((await blobs.meta(key)).metadata).toEqual({ versions: 'stand-in' });
    // The same bytes never give versions: the memo keeps the reason (the next preview names none and runs no job).
    expect((await recallPage(blobs, digest))?.content).toEqual(r);
  });

  test('a page nested deeper than browsers nest (512) gets no versions, before any DOM is built (it cost seconds, then overflowed the stack)', async () => {
    const blobs = new FsBlobStore(dir, () => 'http://assets.test');
    const pages = [
      `<html><head><title>Nested</title></head><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`,
      `<html><head><title>Unclosed</title></head><body>${'<div><span><b>'.repeat(60_000)}</body></html>`,
    ];
    for (const html of pages) {
      const r = await runPageContentJob({ url: URL_, bytesBase64: Buffer.from(html).toString('base64') }, { blobs });
      expect(r.htmlUrl).toBeUndefined();
      expect(r.reason).toBe(`elements nested deeper than ${PAGE_CONTENT_LIMITS.maxDepth}`);
    }
    expect(nestingDepth(`<div>${'<p>'.repeat(600)}text</div>`, 512)).toBeLessThan(10); // <p> implies the previous </p>
    expect(nestingDepth(`${'<section>'.repeat(513)}x`, 512)).toBe(513);
    // As deep as a browser goes still gets its versions.
    const deep = `<html><body>${'<div>'.repeat(500)}<p>${'A paragraph of real words about rivers. '.repeat(20)}</p>${'</div>'.repeat(500)}</body></html>`;
    const ok = await runPageContentJob({ url: URL_, bytesBase64: Buffer.from(deep).toString('base64') }, { blobs });
    expect(ok.rawTextUrl).toBeDefined();
  });
});

describe('in the CPU pool (lib/jobs/cpu-pool.ts)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'linklens-page-pool-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const pages: [string, string, string][] = [
    ['article', articlePage(), URL_],
    ['home page', homePage(), 'https://acme.example/'],
    ['CJK article', cjkArticlePage(), 'https://zh.example/a'],
    ['hostile page', hostilePage(), 'https://news.example/hostile/page.html'],
  ];

  test.each(pages)(
    '%s: the job gives the same result and stores the same versions as in-process',
    async (_name, html, url) => {
      // Each in a store of its own: the addresses are the page's, the same for both.
      const blobs = new FsBlobStore(mkdtempSync(path.join(dir, 'pooled-')), () => 'http://assets.test');
      const direct = new FsBlobStore(mkdtempSync(path.join(dir, 'direct-')), () => 'http://assets.test');
      const input = { url, bytesBase64: Buffer.from(html).toString('base64'), contentType: 'text/html; charset=utf-8' };
      const pooled = await runPageContentJob(input, { blobs, config: { ...loadConfig({}), cpuThreads: 2 } });
      const inProcess = await runPageContentJob(input, { blobs: direct, config: { ...loadConfig({}), cpuThreads: 0 } });
      expect(pooled).toEqual(inProcess);
      expect(pooled.htmlUrl).toMatch(/page\.html$/);
      for (const u of [pooled.htmlUrl, pooled.markdownUrl, pooled.rawTextUrl]) {
        const key = u!.replace('http://assets.test/', '');
        expect((await blobs.get(key))!.equals((await direct.get(key))!)).toBe(true);
      }
      const text = (await blobs.get(pooled.rawTextUrl!.replace('http://assets.test/', '')))!.toString('utf8');
      expect(text).toBe(extractPageContent(html, url).text);
    },
    30_000,
  );

  test('content with images travels between the two steps as a tree: the versions are those of the page DOM itself', () => {
    // Each image "hosted" at its own address with the page's own size: the rewrite leaves every <img> as it was.
    const read = readPageContent({ url: URL_, bytesBase64: Buffer.from(articlePage()).toString('base64') });
    expect(read.images?.urls).toEqual(['https://news.example/2024/images/canyon.jpg']);
    const same = (u: string) => ({ url: u, width: 800, height: 600 });
    const hosted = Object.fromEntries(read.images!.urls.map((u) => [u, { medium: same(u) } satisfies ContentImage]));
    const versions = writePageVersions({ content: read.images!.content, hosted });
    const direct = extractPageContent(articlePage(), URL_);
    expect(versions).toEqual({ html: direct.html, markdown: direct.markdown });
    expect(read.text).toBe(direct.text);
    // Not hosted: removed, with the figure it leaves empty.
    const removed = writePageVersions({ content: read.images!.content, hosted: {} });
    expect(removed.html).not.toMatch(/<img|canyon\.jpg/);
    expect(direct.html).toMatch(/<img src="https:\/\/news\.example\/2024\/images\/canyon\.jpg"/);
  });
});
