import { extract, page } from './helpers';

describe('title rules', () => {
  it('prefers og:title, then twitter:title, then JSON-LD headline, then <title>, then h1', async () => {
    const all = `<meta property="og:title" content="OG"><meta name="twitter:title" content="TW"><script type="application/ld+json">{"@type":"NewsArticle","headline":"LD"}</script><title>Tag | Site</title>`;
    expect((await extract(page(all, '<h1>H1</h1>'))).title).toBe('OG');
    expect((await extract(page(all.replace(/<meta property="og:title"[^>]*>/, ''), '<h1>H1</h1>'))).title).toBe('TW');
    expect((await extract(page(`<script type="application/ld+json">{"@type":"NewsArticle","headline":"LD"}</script><title>Tag | Site</title>`))).title).toBe('LD');
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
    const home = await extract(page('<meta property="og:site_name" content="The Daily"><title>The Daily</title>', '<h1>Top stories</h1>'), { url: 'https://daily.test/' });
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
    const r = await extract(page('<title>Just a moment...</title>'), { status: 403 });
    expect(r.title).toBeUndefined();
    expect(r.wall).toBe('cloudflare-challenge');
  });
});

describe('description rules', () => {
  it('prefers og, then twitter, then meta description, then JSON-LD, then the first meaningful paragraph', async () => {
    const metas = `<meta property="og:description" content="OG d"><meta name="twitter:description" content="TW d"><meta name="description" content="Meta d"><script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`;
    expect((await extract(page(metas))).description).toBe('OG d');
    expect((await extract(page(metas.replace(/<meta property="og:description"[^>]*>/, '')))).description).toBe('TW d');
    expect((await extract(page(`<meta name="description" content="Meta d"><script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`))).description).toBe('Meta d');
    expect((await extract(page(`<script type="application/ld+json">{"@type":"Article","description":"LD d"}</script>`))).description).toBe('LD d');
    const para = await extract(page('', '<nav><p>Home About Contact and many other navigation words here</p></nav><p>Short.</p><p>We use cookies to improve your experience on this website.</p><p>The committee met on Tuesday to decide the future of the old harbour bridge, which has stood since 1890.</p>'));
    expect(para.description).toBe('The committee met on Tuesday to decide the future of the old harbour bridge, which has stood since 1890.');
  });

  it('reads <meta name=... value=...> pages too', async () => {
    expect((await extract(page('<meta name="og:description" value="Rewritten tag">'))).description).toBe('Rewritten tag');
  });
});
