import { loadConfig } from '../../lib/config';
import { extractPage } from '../../lib/extract/extract-page';
import { extract, fetched, page, tableFetcher } from './helpers';

describe('image rules', () => {
  it('prefers og:image with its secure_url and size hints', async () => {
    const r = await extract(
      page(
        '<meta property="og:image" content="http://cdn.test/a.jpg"><meta property="og:image:secure_url" content="https://cdn.test/a.jpg"><meta property="og:image:width" content="1200"><meta property="og:image:height" content="630"><meta name="twitter:image" content="https://cdn.test/t.jpg">',
      ),
    );
    expect(r.image).toEqual({ url: 'https://cdn.test/a.jpg', width: 1200, height: 630 });
    expect(r.sources.image).toBe('og:image');
  });

  it('resolves a relative og:image against <base> and the final URL after redirects', async () => {
    const viaFinal = await extract(page('<meta property="og:image" content="/img/share.png">'), {
      url: 'https://short.test/x',
      finalUrl: 'https://www.site.test/a/b',
    });
    expect(viaFinal.image?.url).toBe('https://www.site.test/img/share.png');
    const viaBase = await extract(page('<base href="/static/"><meta property="og:image" content="share.png">'), { finalUrl: 'https://www.site.test/a/b' });
    expect(viaBase.image?.url).toBe('https://www.site.test/static/share.png');
  });

  it('falls back through twitter:image, JSON-LD image/thumbnailUrl, image_src, then the first large content <img>', async () => {
    expect((await extract(page('<meta name="twitter:image:src" content="https://x.test/t.jpg">'))).image?.url).toBe('https://x.test/t.jpg');
    expect(
      (
        await extract(
          page(
            '<script type="application/ld+json">{"@type":"NewsArticle","headline":"h","image":{"@type":"ImageObject","url":"https://x.test/ld.jpg","width":800}}</script>',
          ),
        )
      ).image,
    ).toEqual({ url: 'https://x.test/ld.jpg', width: 800 });
    expect(
      (await extract(page('<script type="application/ld+json">{"@type":"VideoObject","name":"v","thumbnailUrl":["https://x.test/th.jpg"]}</script>'))).image
        ?.url,
    ).toBe('https://x.test/th.jpg');
    expect((await extract(page('<link rel="image_src" href="/src.jpg">'))).image?.url).toBe('https://example.test/src.jpg');
    const body =
      '<header><img src="/logo.png"></header><img src="/sprite.png" class="sprite"><img src="/tiny.jpg" width="16" height="16"><img src="/company-logo.jpg"><article><img src="/photos/harbour.jpg" width="800" height="500"></article>';
    expect((await extract(page('', body))).image?.url).toBe('https://example.test/photos/harbour.jpg');
  });

  it('drops data: URIs, tracking pixels and placeholders', async () => {
    const r = await extract(
      page(
        '<meta property="og:image" content="data:image/png;base64,AAAA"><meta name="twitter:image" content="https://www.facebook.com/tr?id=1&ev=PageView"><link rel="image_src" href="/images/placeholder.png">',
        '<img src="/pixel.gif" width="1" height="1"><img src="/real/photo.jpg">',
      ),
    );
    expect(r.image?.url).toBe('https://example.test/real/photo.jpg');
  });
});

describe('icons', () => {
  it('ranks declared icons by size and kind, mask-icon last, then /favicon.ico', async () => {
    const r = await extract(
      page(
        '<link rel="icon" href="/f16.png" sizes="16x16"><link rel="mask-icon" href="/mask.svg" color="#000"><link rel="apple-touch-icon" href="/apple.png"><link rel="icon" href="/f32.png" sizes="32x32"><link rel="shortcut icon" href="/favicon.ico">',
      ),
    );
    expect(r.icons.map((i) => new URL(i.url).pathname)).toEqual(['/apple.png', '/f32.png', '/favicon.ico', '/f16.png', '/mask.svg']);
  });

  it('falls back to /favicon.ico on the final host when nothing is declared', async () => {
    const r = await extract(page('<title>t</title>'), { url: 'https://a.test/x', finalUrl: 'https://b.test/y/z' });
    expect(r.icons).toEqual([{ url: 'https://b.test/favicon.ico', rel: 'favicon.ico' }]);
  });

  it('reads the manifest through the fetcher: its icons join the ranking and background_color wins', async () => {
    const manifest = JSON.stringify({
      icons: [
        { src: 'icons/512.png', sizes: '512x512', type: 'image/png' },
        { src: 'icons/m.png', sizes: '1024x1024', purpose: 'maskable' },
      ],
      background_color: '#123456',
      theme_color: '#abcdef',
    });
    const fetch = tableFetcher({ 'https://example.test/app/manifest.json': manifest });
    const res = fetched(
      page('<link rel="manifest" href="/app/manifest.json"><link rel="icon" href="/f32.png" sizes="32x32"><meta name="theme-color" content="#ff0000">'),
    );
    const r = await extractPage(res, 'text/html', { fetch, config: loadConfig({}) });
    expect(fetch.asked).toContain('https://example.test/app/manifest.json');
    expect(r.icons[0]).toMatchObject({ url: 'https://example.test/app/icons/512.png', size: 512, rel: 'manifest' });
    expect(r.icons.some((i) => i.url.endsWith('/m.png'))).toBe(false);
    expect(r.backgroundColor).toBe('#123456');
  });

  it('uses theme-color when there is no manifest colour', async () => {
    expect((await extract(page('<meta name="theme-color" content="#ff0000">'))).backgroundColor).toBe('#ff0000');
  });
});
