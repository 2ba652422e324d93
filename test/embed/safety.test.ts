/**
 * Hostile providers (docs/embeds.md): whatever an oEmbed answer's markup or a page's player meta
 * holds (scripts, event handlers, javascript: and data: sources, srcdoc, nested frames, an origin
 * on no list, a protocol-relative or http address), the record gets no player or a clean one:
 * linklens's own element, with exactly its own attributes and every value escaped.
 */
import { Parser } from 'htmlparser2';
import { escapeHtml } from '../../lib/client/escape';
import { loadConfig } from '../../lib/config';
import { embedOf, iframeHtml, nativeHtml } from '../../lib/embed/html';
import { oembedPlayer } from '../../lib/embed/oembed-player';
import type { EmbedConfig, Player } from '../../lib/embed/types';
import { parseOEmbed } from '../../lib/extract/oembed-source';

const config: EmbedConfig = loadConfig({});
const answer = (html: string, more: Record<string, unknown> = {}) => parseOEmbed(JSON.stringify({ version: '1.0', type: 'video', html, ...more }));

/** Every element of some markup, with its attributes as a parser reads them. */
function elements(html: string): { name: string; attrs: Record<string, string> }[] {
  const out: { name: string; attrs: Record<string, string> }[] = [];
  const parser = new Parser({ onopentag: (name, attrs) => out.push({ name, attrs }) }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return out;
}

const IFRAME_ATTRIBUTES = ['allow', 'loading', 'referrerpolicy', 'sandbox', 'src', 'style', 'title'];

describe("an oEmbed answer's markup", () => {
  test.each([
    ['a script beside the iframe', '<iframe src="https://player.vimeo.com/video/76979871"></iframe><script>alert(1)</script>'],
    [
      'event handlers on the iframe',
      '<iframe src="https://player.vimeo.com/video/76979871" onload="alert(1)" onerror="alert(2)" style="position:fixed;inset:0"></iframe>',
    ],
    [
      'a wrapper with handlers',
      '<div onclick="alert(1)" style="padding:56.25% 0 0 0;position:relative"><iframe src="https://player.vimeo.com/video/76979871" name="x" csp="none"></iframe></div>',
    ],
  ])('%s: a clean player, nothing of the markup copied', (_name, html) => {
    const player = oembedPlayer(answer(html), config);
    expect(player?.url).toBe('https://player.vimeo.com/video/76979871');
    const embed = embedOf(player as Player, 'A video');
    const els = elements(embed.html);
    expect(els.map((e) => e.name)).toEqual(['iframe']);
    expect(Object.keys(els[0].attrs).sort()).toEqual(IFRAME_ATTRIBUTES);
    expect(embed.html).not.toMatch(/<script|alert|onload|onclick|onerror|position|csp|name=/i);
  });

  test.each([
    ['a javascript: source', '<iframe src="javascript:alert(document.cookie)"></iframe>'],
    ['a javascript: source with an allowed host in it', '<iframe src="javascript://player.vimeo.com/%0aalert(1)"></iframe>'],
    ['a data: source', '<iframe src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></iframe>'],
    ['srcdoc over an allowed source', '<iframe src="https://player.vimeo.com/video/76979871" srcdoc="<script>alert(1)</script>"></iframe>'],
    ['two frames, one allowed', '<iframe src="https://player.vimeo.com/video/76979871"></iframe><iframe src="https://evil.example/"></iframe>'],
    ['an origin on no list', '<iframe src="https://evil.example/embed/76979871"></iframe>'],
    ['a look-alike of an allowed origin', '<iframe src="https://player.vimeo.com.evil.example/video/76979871"></iframe>'],
    ['an allowed origin, a path that is no player', '<iframe src="https://www.youtube.com/redirect?q=https://evil.example"></iframe>'],
    ['credentials in the address', '<iframe src="https://user:pass@player.vimeo.com/video/76979871"></iframe>'],
    ['http on a port of its own', '<iframe src="http://player.vimeo.com:8080/video/76979871"></iframe>'],
    ['no frame at all', '<object data="https://player.vimeo.com/video/76979871"></object><embed src="https://player.vimeo.com/video/76979871">'],
    ['a frame with no source', '<iframe></iframe>'],
  ])('%s: no player', (_name, html) => {
    expect(oembedPlayer(answer(html), config)).toBeUndefined();
  });

  test("a frame nested in an allowed one: the allowed one alone (a frame's content is text to the parser, as to a browser)", () => {
    const player = oembedPlayer(answer('<iframe src="https://player.vimeo.com/video/76979871"><iframe src="https://evil.example/"></iframe></iframe>'), config);
    expect(player?.url).toBe('https://player.vimeo.com/video/76979871');
    expect(embedOf(player as Player).html).not.toContain('evil');
    expect(
      oembedPlayer(answer('<iframe src="https://evil.example/"><iframe src="https://player.vimeo.com/video/76979871"></iframe></iframe>'), config),
    ).toBeUndefined();
  });

  test('a protocol-relative or http address on an allowed origin: made https', () => {
    expect(oembedPlayer(answer('<iframe src="//player.vimeo.com/video/76979871"></iframe>'), config)?.url).toBe('https://player.vimeo.com/video/76979871');
    expect(oembedPlayer(answer('<iframe src="http://player.vimeo.com/video/76979871"></iframe>'), config)?.url).toBe('https://player.vimeo.com/video/76979871');
  });

  test('markup past the cap is not read; a size that is no number is not believed', () => {
    const long = `<iframe src="https://player.vimeo.com/video/76979871"></iframe>${' '.repeat(70_000)}`;
    expect(oembedPlayer(answer(long), config)).toBeUndefined();
    const odd = oembedPlayer(
      answer('<iframe src="https://player.vimeo.com/video/76979871" width="100%" height="-5"></iframe>', { width: 'wide', height: 1e9 }),
      config,
    );
    expect(odd).toEqual({ type: 'video', url: 'https://player.vimeo.com/video/76979871', provider: 'Vimeo', aspectRatio: 16 / 9 });
  });

  test("an operator's origin with a hostile provider name: the name escaped in the title", () => {
    const extra = loadConfig({ LINKPREVIEW_EMBED_ORIGINS: 'https://videos.partner.example' });
    const player = oembedPlayer(answer('<iframe src="https://videos.partner.example/p/1"></iframe>', { provider_name: '"><script>alert(1)</script>' }), extra);
    expect(player?.provider).toBe('"><script>alert(1)</script>');
    const html = embedOf(player as Player, 'Clip').html;
    expect(html).not.toContain('<script');
    expect(elements(html)).toHaveLength(1);
    expect(elements(html)[0].attrs.title).toBe('"><script>alert(1)</script>: Clip');
  });
});

describe("linklens's element", () => {
  const player: Player = { type: 'video', url: "https://player.vimeo.com/video/1?h=abc&x='", provider: 'Vimeo', aspectRatio: 16 / 9 };

  test('a title with quotes and angle brackets stays one attribute value', () => {
    const title = `"Quotes" & 'apostrophes' <b>bold</b> </iframe><script>alert(1)</script>`;
    const html = iframeHtml(player, title);
    expect(html).not.toMatch(/<script|<b>|<\/iframe><script/);
    const [el] = elements(html);
    expect(elements(html)).toHaveLength(1);
    expect(el.attrs.title).toBe(`Vimeo: ${title}`);
    expect(el.attrs.src).toBe(player.url);
  });

  test('the fixed attributes: allow only what the kind needs, the sandbox, lazy loading, the referrer policy', () => {
    const [video] = elements(iframeHtml(player));
    expect(video.attrs).toEqual({
      src: player.url,
      style: 'width:100%;aspect-ratio:1.7778;border:0',
      allow: 'autoplay; encrypted-media; fullscreen; picture-in-picture',
      sandbox: 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox',
      loading: 'lazy',
      referrerpolicy: 'strict-origin-when-cross-origin',
      title: 'Vimeo player',
    });
    const [audio] = elements(
      iframeHtml({ type: 'audio', url: 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC', provider: 'Spotify', height: 152 }),
    );
    expect(audio.attrs.allow).toBe('autoplay; encrypted-media');
    expect(audio.attrs.style).toBe('width:100%;height:152px;border:0');
    const [post] = elements(iframeHtml({ type: 'rich', url: 'https://platform.twitter.com/embed/Tweet.html?id=20', provider: 'X', width: 550, height: 600 }));
    expect(post.attrs.allow).toBe('fullscreen');
    expect(post.attrs.style).toBe('width:100%;max-width:550px;height:600px;border:0');
  });

  test('a long title is cut', () => {
    expect(elements(iframeHtml(player, 'word '.repeat(100)))[0].attrs.title.length).toBeLessThanOrEqual(200);
  });

  test('the record gives the aspect ratio to four places', () => {
    expect(embedOf(player).aspectRatio).toBe(1.7778);
  });

  test('a native element: controls, no preload, the address and the poster, escaped', () => {
    const html = nativeHtml(
      { type: 'video', url: 'https://media.example/clip.mp4?a="b"', provider: 'media.example', aspectRatio: 2 },
      'https://assets.example/x/large.webp?"><script>',
    );
    const [el] = elements(html);
    expect(elements(html)).toHaveLength(1);
    expect(el).toEqual({
      name: 'video',
      attrs: {
        controls: '',
        preload: 'none',
        src: 'https://media.example/clip.mp4?a="b"',
        poster: 'https://assets.example/x/large.webp?"><script>',
        style: 'width:100%;aspect-ratio:2',
      },
    });
    expect(elements(nativeHtml({ type: 'audio', url: 'https://media.example/a.mp3', provider: 'media.example' }, 'https://assets.example/p.webp'))[0]).toEqual({
      name: 'audio',
      attrs: { controls: '', preload: 'none', src: 'https://media.example/a.mp3', style: 'width:100%' },
    });
  });

  test('escapeHtml escapes every character that could end a value or open a tag', () => {
    expect(escapeHtml(`&"'<>\``)).toBe('&amp;&quot;&#39;&lt;&gt;&#96;');
  });
});

test('an autoplay parameter is dropped from a kept address: a preview never plays by itself', () => {
  const config = loadConfig({ LINKPREVIEW_EMBED_ORIGINS: 'https://videos.partner.example' });
  const kept = (src: string) => oembedPlayer(parseOEmbed(JSON.stringify({ type: 'video', html: `<iframe src="${src}"></iframe>` })), config)?.url;
  expect(kept('https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815?autoplay=1&hide_owner=true')).toBe(
    'https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815?hide_owner=true',
  );
  expect(kept('https://videos.partner.example/p/1?auto_play=true&t=3')).toBe('https://videos.partner.example/p/1?t=3');
  expect(kept('https://www.tiktok.com/player/v1/6718335390845095173?autoplay=1')).toBe('https://www.tiktok.com/player/v1/6718335390845095173');
});
