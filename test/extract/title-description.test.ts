import { parsePage } from '../../lib/extract/parse-page';
import { extract, page } from './helpers';

describe('title rules', () => {
  it('prefers og:title, then twitter:title, then JSON-LD headline, then <title>, then h1', async () => {
    const all = `<meta property="og:title" content="OG"><meta name="twitter:title" content="TW"><script type="application/ld+json">{"@type":"NewsArticle","headline":"LD"}</script><title>Tag | Site</title>`;
    expect((await extract(page(all, '<h1>H1</h1>'))).title).toBe('OG');
    expect((await extract(page(all.replace(/<meta property="og:title"[^>]*>/, ''), '<h1>H1</h1>'))).title).toBe('TW');
    expect((await extract(page(`<script type="application/ld+json">{"@type":"NewsArticle","headline":"LD"}</script><title>Tag | Site</title>`))).title).toBe(
      'LD',
    );
    expect((await extract(page('<title>Tag | Site</title>', '<h1>H1</h1>'))).title).toBe('Tag | Site');
    expect((await extract(page('', '<header><h1>Only a heading</h1></header>'))).title).toBe('Only a heading');
  });

  it('microdata headline: the text of a link marked itemprop=headline (not its href), and only after <title>', async () => {
    const body = `<aside><a href="https://site.test/blog" itemprop="headline">Blog</a></aside>
      <h1 itemprop="headline"><a href="https://site.test/post">The Winds of Change</a></h1>`;
    expect((await extract(page('<title>Site |  The Winds of Change</title>', body))).title).toBe('Site | The Winds of Change');
    // no <title>: the first headline is the link's text, never its URL
    expect((await extract(page('', body))).title).toBe('Blog');
    expect((await extract(page('<meta name="citation_title" content="A paper"><title>A paper | Journal</title>'))).title).toBe('A paper');
  });

  it('keeps the site suffix of <title>, but skips a <title> that is only the site name on an inner page', async () => {
    expect((await extract(page('<title>Story | The Daily</title>'))).title).toBe('Story | The Daily');
    const r = await extract(page('<meta property="og:site_name" content="The Daily"><title>The Daily</title>', '<h1>The real story</h1>'));
    expect(r.title).toBe('The real story');
    const home = await extract(page('<meta property="og:site_name" content="The Daily"><title>The Daily</title>', '<h1>Top stories</h1>'), {
      url: 'https://daily.test/',
    });
    expect(home.title).toBe('The Daily');
  });

  it('decodes entities (also double-encoded ones), collapses whitespace and drops junk like "Untitled"', async () => {
    const r = await extract(page('<meta property="og:title" content="Untitled"><title>  Fish &amp;amp; Chips\n\t &#8211; a   guide </title>'));
    expect(r.title).toBe('Fish & Chips – a guide');
  });

  it('reads JSON-LD from @graph and tolerates broken JSON', async () => {
    const graph = `<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"Site"},{"@type":"Article","headline":"From the graph",}]}</script>`;
    expect((await extract(page(graph))).title).toBe('From the graph');
    const broken = `<script type="application/ld+json"><!-- {"@type":"BlogPosting","headline":"Line
break"} --></script>`;
    expect((await extract(page(broken))).title).toBe('Line break');
  });

  it('never keeps a challenge page title', async () => {
    // A refusal with a wall's title, no Open Graph title and no content: a wall by its shape (no Cloudflare evidence: no Cloudflare kind).
    const r = await extract(page('<title>Just a moment...</title>'), { status: 403 });
    expect(r.title).toBeUndefined();
    expect(r.wall).toBe('robot-check');
  });
});

describe('description rules', () => {
  it('prefers og, then twitter, then meta description, then JSON-LD, then the first meaningful paragraph', async () => {
    const metas = `<meta property="og:description" content="OG d"><meta name="twitter:description" content="TW d"><meta name="description" content="Meta d"><script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`;
    expect((await extract(page(metas))).description).toBe('OG d');
    expect((await extract(page(metas.replace(/<meta property="og:description"[^>]*>/, '')))).description).toBe('TW d');
    expect(
      (await extract(page(`<meta name="description" content="Meta d"><script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`)))
        .description,
    ).toBe('Meta d');
    expect((await extract(page(`<script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`))).description).toBe('LD d');
    const para = await extract(
      page(
        '',
        '<nav><p>Home About Contact and many other navigation words here</p></nav><p>Short.</p><p>We use cookies to improve your experience on this website.</p><p>The committee met on Tuesday to decide the future of the old harbour bridge, which has stood since 1890.</p>',
      ),
    );
    expect(para.description).toBe('The committee met on Tuesday to decide the future of the old harbour bridge, which has stood since 1890.');
  });

  it('reads <meta name=... value=...> pages too', async () => {
    expect((await extract(page('<meta name="og:description" value="Rewritten tag">'))).description).toBe('Rewritten tag');
  });
});

describe('a meta value cut short by a stray quote in its attribute', () => {
  const broken = '<meta property="og:title" content="Mayor opens the "new" bridge, crowds cheer">';

  it('the parser marks the cut value (the rest of it becomes attribute names, one with the closing quote)', () => {
    const metas = parsePage(page(`${broken}<meta property="og:description" content="Fine">`)).metas.filter((m) => m.property);
    expect(metas[0]).toMatchObject({ property: 'og:title', content: 'Mayor opens the ', cut: true });
    expect(metas[1].cut).toBeUndefined();
    // attribute order does not matter; single-quoted values cut by an apostrophe too
    expect(parsePage(page('<meta content="He said "no" to it" property="og:title">')).metas[1]).toMatchObject({
      property: 'og:title',
      content: 'He said ',
      cut: true,
    });
    expect(parsePage(page("<meta property='og:title' content='Mayor's bridge opens'>")).metas[1]).toMatchObject({ content: 'Mayor', cut: true });
    // a stray quote in another attribute does not mark the content
    expect(parsePage(page('<meta name="description" content="Whole" data-x="a"b">')).metas[1].cut).toBeUndefined();
  });

  it('og:title cut at a stray quote: the whole headline from <title>', async () => {
    expect((await extract(page(`${broken}<title>Mayor opens the "new" bridge, crowds cheer</title>`))).title).toBe(
      'Mayor opens the "new" bridge, crowds cheer',
    );
    expect((await extract(page("<meta property='og:title' content='Mayor's bridge opens today'><title>Mayor's bridge opens today</title>"))).title).toBe(
      "Mayor's bridge opens today",
    );
  });

  it('prefers the h1 to a <title> with a site suffix, and drops the site name from <title> when there is no h1', async () => {
    const head = `${broken}<meta property="og:site_name" content="The Daily"><title>Mayor opens the "new" bridge, crowds cheer | The Daily</title>`;
    expect((await extract(page(head, '<h1>Mayor opens the "new" bridge, crowds cheer</h1>'))).title).toBe('Mayor opens the "new" bridge, crowds cheer');
    expect((await extract(page(head))).title).toBe('Mayor opens the "new" bridge, crowds cheer');
  });

  it('a value cut before a quote with no junk left (the page itself cut it): the quote that follows in <title> tells', async () => {
    expect((await extract(page('<meta property="og:title" content="Mayor opens the "><title>Mayor opens the “new” bridge</title>'))).title).toBe(
      'Mayor opens the “new” bridge',
    );
  });

  it('keeps a meta title that is a legitimate prefix of <title> or h1 (a site suffix, a longer heading)', async () => {
    expect((await extract(page('<meta property="og:title" content="Headline"><title>Headline | Site</title>'))).title).toBe('Headline');
    expect((await extract(page('<meta property="og:title" content="Headline "><title>Headline - Site</title>', '<h1>Headline and more</h1>'))).title).toBe(
      'Headline',
    );
    expect((await extract(page('<meta property="og:title" content="Big news"><title>Big news: "what it means"</title>'))).title).toBe('Big news');
    // cut, but nothing longer says how it goes on: the cut value is what there is
    expect((await extract(page(`${broken}<title>Something else entirely</title>`))).title).toBe('Mayor opens the');
  });

  it('a description cut the same way: the longer meta description, or the paragraph that continues it', async () => {
    const cut = '<meta property="og:description" content="President tells the BBC his failure to pass "common sense gun laws" is his greatest frustration.">';
    const whole = 'President tells the BBC his failure to pass "common sense gun laws" is his greatest frustration.';
    expect((await extract(page(`${cut}<meta name="description" content="${whole.replace(/"/g, '&quot;')}">`))).description).toBe(whole);
    expect((await extract(page(cut, `<p>${whole} He said so on Friday.</p>`))).description).toBe(`${whole} He said so on Friday.`);
    // a legitimate short og:description stays
    expect((await extract(page('<meta property="og:description" content="President tells the BBC">', `<p>${whole}</p>`))).description).toBe(
      'President tells the BBC',
    );
  });
});

describe('controls and bidi overrides never reach a text field', () => {
  it('a page cannot put U+202E or U+0000 into the title or description', async () => {
    const r = await extract(
      page('<title>Pay\u202Egnp.exe</title><meta name="description" content="Line one\u0000 and \u001b[31mred\u001b[0m \u2066isolated\u2069, \u200Fmarked">'),
    );
    expect(r.title).toBe('Paygnp.exe');
    expect(r.description).toBe('Line one and [31mred[0m isolated, \u200Fmarked');
  });

  it('a record built elsewhere (a platform object) is cleaned at any depth, tabs and newlines kept', async () => {
    const { finalize } = await import('../../lib/extract/defaults');
    const record = finalize({
      ok: true,
      title: 'a\u202Eb',
      description: 'c\u0000d',
      forumPost: { text: 'line\nnext\u202D', author: { name: ['x\u2067y'] } },
    } as never) as unknown as Record<string, unknown>;
    expect(record).toMatchObject({ title: 'ab', description: 'cd', forumPost: { text: 'line\nnext', author: { name: ['xy'] } } });
  });
});
