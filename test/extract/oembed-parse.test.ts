import { loadConfig } from '../../lib/config';
import { extractPage, pageFields, readPage } from '../../lib/extract/extract-page';
import { oembedUrl, parseOEmbed } from '../../lib/extract/oembed-source';
import { PAGE_LIMITS } from '../../lib/extract/page-data';
import { parsePage, parsePageBytes } from '../../lib/extract/parse-page';
import { DEFAULT_RULES, withRules } from '../../lib/extract/rules';
import { fetched, page, tableFetcher } from './helpers';

describe('oEmbed', () => {
  it('discovers the advertised endpoint and uses it for title, author and thumbnail', async () => {
    const endpoint = 'https://media.test/oembed?url=https%3A%2F%2Fmedia.test%2Fv%2F1&format=json';
    const fetch = tableFetcher({
      [endpoint]: JSON.stringify({
        type: 'video',
        title: 'From oEmbed',
        author_name: 'Ann Author',
        thumbnail_url: 'https://media.test/th/1.jpg',
        thumbnail_width: 480,
        thumbnail_height: 360,
      }),
    });
    const res = fetched(page(`<link rel="alternate" type="application/json+oembed" href="${endpoint.replace(/&/g, '&amp;')}">`), {
      url: 'https://media.test/v/1',
    });
    const r = await extractPage(res, 'text/html', { fetch, config: loadConfig({}) });
    expect(fetch.asked).toEqual([endpoint]);
    expect(r).toMatchObject({ title: 'From oEmbed', author: { name: 'Ann Author' }, image: { url: 'https://media.test/th/1.jpg', width: 480, height: 360 } });
  });

  it('is fetched only when a field it can fill has no value from a rule ranked above its own', async () => {
    const endpoint = 'https://media.test/oembed';
    const fetch = tableFetcher({ [endpoint]: JSON.stringify({ title: 'From oEmbed', author_name: 'Someone' }) });
    const head =
      '<meta property="og:title" content="OG title"><meta property="og:image" content="https://media.test/i.jpg"><meta property="og:site_name" content="Site"><meta name="author" content="Ann">';
    const r = await extractPage(fetched(page(`${head}<link rel="alternate" type="application/json+oembed" href="${endpoint}">`)), 'text/html', {
      fetch,
      config: loadConfig({}),
    });
    expect(fetch.asked).toEqual([]);
    expect(r).toMatchObject({ title: 'OG title', author: { name: 'Ann' }, siteName: 'Site', image: { url: 'https://media.test/i.jpg' } });
    // <title> ranks below oEmbed's title; og:image above its thumbnail; no site name, no author.
    const read = readPage(fetched(page('<title>T</title><meta property="og:image" content="https://media.test/i.jpg">')), 'text/html');
    expect(pageFields(read).oembedCouldChange).toEqual(['title', 'siteName', 'author']);
  });

  it('finds provider endpoints in the data file when the page advertises none', () => {
    const u = oembedUrl(parsePage(page('')), 'https://vimeo.com/123', 'https://vimeo.com/123');
    expect(u).toBe('https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F123&format=json');
    expect(oembedUrl(parsePage(page('')), 'https://news.test/a', 'https://news.test/a')).toBeUndefined();
  });

  it('ignores a broken or failing oEmbed response', async () => {
    expect(parseOEmbed('<html>')).toBeUndefined();
    const res = fetched(page('<title>Page</title><link rel="alternate" type="application/json+oembed" href="/oembed">'));
    const r = await extractPage(res, 'text/html', { fetch: tableFetcher(), config: loadConfig({}) });
    expect(r.title).toBe('Page');
  });
});

describe('rules as data', () => {
  it('lets a platform put its own rules in front', async () => {
    const rules = withRules({ title: [{ name: 'platform', get: (c) => `Video: ${c.page.h1}` }] });
    expect(rules.title[0].name).toBe('platform');
    expect(rules.title.length).toBe(DEFAULT_RULES.title.length + 1);
    const r = await extractPage(fetched(page('<meta property="og:title" content="og">', '<h1>Clip</h1>')), 'text/html', {
      fetch: tableFetcher(),
      config: loadConfig({}),
      rules,
    });
    expect(r).toMatchObject({ title: 'Video: Clip', sources: { title: 'platform' } });
  });
});

describe('bounded parsing', () => {
  it('caps every collection on a huge page and still finds the head metadata', () => {
    const head = '<title>Huge</title><meta property="og:title" content="Huge page">';
    const body = '<p>Paragraph with some words in it for the counter.</p><img src="/i.jpg">'.repeat(40_000);
    const p = parsePageBytes(Buffer.from(page(head, body)), 'utf-8');
    expect(p.title).toBe('Huge');
    expect(p.images.length).toBeLessThanOrEqual(PAGE_LIMITS.images);
    expect(p.paragraphs.length).toBeLessThanOrEqual(PAGE_LIMITS.paragraphs);
    expect(p.text.length).toBeLessThanOrEqual(PAGE_LIMITS.textChars);
    expect(p.wordCount).toBeGreaterThan(100_000);
  });

  it('stops at the character budget', () => {
    const big = page('<title>Cut</title>', `<p>${'x'.repeat(PAGE_LIMITS.parseChars + 200_000)}</p><h1>never reached</h1>`);
    const p = parsePageBytes(Buffer.from(big), 'utf-8');
    expect(p.cutShort).toBe(true);
    expect(p.title).toBe('Cut');
    expect(p.h1).toBeUndefined();
  });

  it('keeps JSON-LD raw (not entity-decoded) and microdata', () => {
    const p = parsePage(
      page(
        '<script type="application/ld+json">{"headline":"A &amp; B"}</script>',
        '<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Widget</span><meta itemprop="price" content="9.99"></div>',
      ),
    );
    expect(p.jsonLd[0]).toContain('&amp;');
    expect(p.itemprops).toEqual(expect.arrayContaining([expect.objectContaining({ prop: 'name', value: 'Widget', itemtype: 'https://schema.org/Product' })]));
    expect(p.metas.find((m) => m.itemprop === 'price')?.content).toBe('9.99');
  });
});
