/**
 * The card renderer (lib/client/card.ts) as a string function, in Node: what each record shape
 * gives, that every record value is escaped and every URL checked, and the blurhash decoder
 * against the reference implementation. The same cards in a real browser: test/browser/card-gallery.test.ts.
 */
import { decode as referenceDecode } from 'blurhash';
import { parseHTML } from 'linkedom';
import { decodeBlurhash } from '../../lib/client/blurhash';
import { cardStyles, formatDuration, renderCard, typeLine, webUrl } from '../../lib/client/card';
import { escapeHtml } from '../../lib/client/escape';
import { BLURHASH, galleryRecords } from './card-gallery';

const records = galleryRecords('https://img.example', 'https://player.example');

/** The card's HTML parsed, to ask it questions as a browser would. */
function parse(html: string) {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  return document;
}

describe('renderCard', () => {
  test('a page with an image: site, title link, description, byline, reading time and a responsive lazy image', () => {
    const doc = parse(renderCard(records['page-image']));
    const card = doc.querySelector('article.ll-card');
    expect(card?.getAttribute('class')).toContain('ll-large');
    expect(card?.getAttribute('dir')).toBe('ltr');
    expect(doc.querySelector('.ll-site-name')?.textContent).toBe('Northern News');
    const link = doc.querySelector('a.ll-title');
    expect(link?.getAttribute('href')).toBe('https://news.example/page-image');
    expect(link?.getAttribute('rel')).toBe('noopener noreferrer nofollow ugc');
    expect(doc.querySelector('.ll-description')?.textContent).toMatch(/^Measurements from forty lakes/);
    // The publisher's calendar day, whatever the reader's time zone (23:30 at -07:00 is the 19th).
    expect(doc.querySelector('.ll-byline')?.textContent).toBe('Ana Lindqvist · Oct 19, 2019');
    expect(doc.querySelector('.ll-fact')?.textContent).toBe('6 min read');
    const img = doc.querySelector('img.ll-image');
    expect(img?.getAttribute('srcset')).toBe(
      'https://img.example/img/lake-thumbnail.png 320w, https://img.example/img/lake-medium.png 640w, https://img.example/img/lake-large.png 1200w',
    );
    expect(img?.getAttribute('src')).toBe('https://img.example/img/lake-medium.png');
    expect([img?.getAttribute('width'), img?.getAttribute('height')]).toEqual(['1200', '628']);
    expect(img?.getAttribute('loading')).toBe('lazy');
    expect(img?.getAttribute('alt')).toBe('A frozen lake at dawn, cracks across the ice');
    const media = doc.querySelector('.ll-media');
    expect(media?.getAttribute('style')).toBe('background-color:#4a6b8a');
    expect(media?.getAttribute('data-ll-blurhash')).toBe(BLURHASH);
    expect(doc.querySelector('.ll-icon')?.getAttribute('style')).toBe('background-color:#ffffff');
  });

  test('small size, themes, no image, no description', () => {
    expect(renderCard(records['page-image'], { size: 'small', theme: 'dark' })).toContain('class="ll-card ll-small ll-theme-dark"');
    const noImage = parse(renderCard(records['no-image']));
    expect(noImage.querySelector('img.ll-image')).toBeNull();
    expect(noImage.querySelector('article')?.getAttribute('class')).toContain('ll-no-media');
    expect(parse(renderCard(records['no-description'])).querySelector('.ll-description')).toBeNull();
  });

  test('a right-to-left language is laid out right to left', () => {
    const card = parse(renderCard(records.rtl)).querySelector('article');
    expect(card?.getAttribute('dir')).toBe('rtl');
    expect(card?.getAttribute('lang')).toBe('ar');
    expect(
      parse(renderCard({ ...records.rtl, language: 'he-IL' }))
        .querySelector('article')
        ?.getAttribute('dir'),
    ).toBe('rtl');
  });

  test('the line that fits the type', () => {
    expect(typeLine(records.video)).toBe('12:34');
    expect(typeLine(records.pdf)).toBe('PDF · 48 pages');
    expect(typeLine(records.product, 'en-US')).toBe('$49.99');
    expect(typeLine(records.repository, 'en-US')).toBe('★ 12.3K stars · Python');
    expect(typeLine(records['no-image'])).toBeUndefined();
    expect(formatDuration(3754)).toBe('1:02:34');
    // A PDF's card shows its first page's image when it has no other.
    expect(parse(renderCard(records.pdf)).querySelector('img.ll-image')?.getAttribute('src')).toBe('https://img.example/img/page-medium.png');
  });

  test('a record with a player: a play button that holds the embed, no player element before a click', () => {
    // The gallery's stand-in player origin is on no provider's list: the page trusts it (test/client/player.test.ts: without it, no button).
    const doc = parse(renderCard(records.video, { playerOrigins: ['https://player.example'] }));
    const button = doc.querySelector('button.ll-play');
    expect(button?.getAttribute('aria-label')).toBe('Play: Ice breaking on the lake, filmed from the shore');
    expect(button?.getAttribute('data-ll-embed')).toBe(records.video.embed?.html);
    expect(doc.querySelector('iframe')).toBeNull();
    expect(doc.querySelector('article')?.getAttribute('class')).toContain('ll-has-player');
  });

  test('ok: false gives a minimal card, or nothing', () => {
    const doc = parse(renderCard(records.failed));
    expect(doc.querySelector('article')?.getAttribute('class')).toContain('ll-failed');
    expect(doc.querySelector('.ll-site-name')?.textContent).toBe('intranet.example');
    expect(doc.querySelector('a.ll-title')?.textContent).toBe('https://intranet.example/private/doc');
    expect(doc.querySelector('.ll-icon img')?.getAttribute('src')).toBe('https://img.example/img/icon.png');
    expect(renderCard(records.failed, { failed: 'none' })).toBe('');
  });

  test('hostile strings stay text: no element, attribute, handler or URL of theirs gets in', () => {
    const html = renderCard(records.hostile, { styles: true, playerOrigins: ['https://player.example'] });
    const doc = parse(html);
    expect(doc.querySelectorAll('script')).toHaveLength(0);
    type El = { tagName: string; attributes: ArrayLike<{ name: string; value: string }> };
    const all = Array.from(doc.querySelectorAll('*')) as unknown as El[];
    // The elements the renderer makes, and nothing else.
    expect(new Set(all.map((e) => e.tagName.toLowerCase()))).toEqual(
      new Set(['html', 'body', 'style', 'article', 'div', 'img', 'span', 'a', 'p', 'button', 'svg', 'path']),
    );
    for (const el of all) {
      for (const attr of Array.from(el.attributes)) {
        expect(attr.name).not.toMatch(/^on/i);
        // URLs are http(s); text (alt, aria-label, the embed's HTML) may say anything, escaped.
        if (['href', 'src'].includes(attr.name)) expect(attr.value).toMatch(/^https:\/\//);
        if (attr.name === 'srcset') for (const c of attr.value.split(', ')) expect(c).toMatch(/^https:\/\/\S+ \d+w$/);
      }
    }
    expect(doc.querySelector('.ll-icon')).toBeNull(); // a javascript: icon URL is no icon
    expect(doc.querySelector('.ll-media')?.hasAttribute('style')).toBe(false); // not a colour
    expect(doc.querySelector('.ll-media')?.hasAttribute('data-ll-blurhash')).toBe(false); // not a blurhash
    expect(doc.querySelector('article')?.hasAttribute('lang')).toBe(false);
    expect(doc.querySelector('a.ll-title')?.textContent).toBe(records.hostile.title);
    expect(doc.querySelector('.ll-site-name')?.textContent).toBe(records.hostile.siteName);
    expect(doc.querySelector('img.ll-image')?.getAttribute('alt')).toBe(records.hostile.image?.alt);
  });

  test('inlineStyles: false puts colours in data attributes only; styles: true adds the stylesheet', () => {
    const html = renderCard(records['page-image'], { inlineStyles: false });
    expect(html).not.toContain('style=');
    expect(html).toContain('data-ll-placeholder="#4a6b8a"');
    expect(renderCard(records['page-image'], { styles: true }).startsWith(`<style>${cardStyles}</style>`)).toBe(true);
    expect(renderCard(records['page-image'], { target: null })).not.toContain('target=');
  });

  test('escapeHtml and webUrl', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\``)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;');
    expect(webUrl('javascript:alert(1)')).toBeUndefined();
    expect(webUrl('data:text/html,x')).toBeUndefined();
    expect(webUrl('/relative')).toBeUndefined();
    expect(webUrl('https://a.example/x y')).toBe('https://a.example/x%20y');
    expect(webUrl('http://a.example/')).toBe('http://a.example/');
    // An iframe's source: https only.
    expect(webUrl('http://a.example/', true)).toBeUndefined();
    expect(webUrl('https://a.example/', true)).toBe('https://a.example/');
  });
});

describe('decodeBlurhash', () => {
  test('gives the reference implementation’s pixels', () => {
    expect(Array.from(decodeBlurhash(BLURHASH, 32, 20) ?? [])).toEqual(Array.from(referenceDecode(BLURHASH, 32, 20)));
  });

  test('refuses a malformed hash', () => {
    expect(decodeBlurhash('LEHV6n', 8, 8)).toBeUndefined();
    expect(decodeBlurhash(`${BLURHASH.slice(0, -1)}"`, 8, 8)).toBeUndefined();
    expect(decodeBlurhash('', 8, 8)).toBeUndefined();
  });
});
