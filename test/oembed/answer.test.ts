/**
 * A Link record as an oEmbed 1.0 response (lib/oembed/answer.ts), on records built here in the
 * shapes the pipeline gives them (records carry no `embed` from the pipeline yet): the type
 * mapping, the fields every type carries, the thumbnail and photo sizes within maxwidth and
 * maxheight, and the player's size and element. Every answer is checked against the
 * specification's requirements (test/oembed/spec.ts) and openapi.yaml's OEmbed schema.
 */
import type { Embed, ImageSet, LinkRecord } from '../../lib/contract/link';
import { DEFAULT_PLAYER_WIDTH, oembedAnswer, playerSize, sizedHtml } from '../../lib/oembed/answer';
import type { OEmbedBounds } from '../../lib/oembed/request';
import { conformanceErrors } from '../helpers/conformance';
import { oembedSpecErrors } from './spec';

const CDN = 'https://d111111abcdef8.cloudfront.net/assets/9f86d081884c7d65';
/** A 1920 x 1080 source as the image job hosts it: each size fits its box, never upscaled. */
const IMAGE: ImageSet = {
  thumbnail: { width: 320, height: 180, url: `${CDN}/thumbnail.webp` },
  medium: { width: 640, height: 360, url: `${CDN}/medium.webp` },
  large: { width: 1280, height: 720, url: `${CDN}/large.webp` },
  original: { width: 1920, height: 1080, url: `${CDN}/original.webp` },
  dominantColor: '#336699',
};

const page = (over: Partial<LinkRecord> = {}): LinkRecord => ({
  id: 4503599627370495,
  ok: true,
  requestId: 'req-1',
  updatedAt: '2026-03-01T10:00:00.000Z',
  url: 'https://news.example.com/2026/03/harbour',
  domain: 'news.example.com',
  type: 'PAGE',
  status: 200,
  redirected: false,
  title: 'The harbour reopens',
  description: 'Ferries run again from Monday.',
  language: 'en',
  siteName: 'Harbour News',
  author: { name: 'Ann Lee', url: 'https://news.example.com/authors/ann-lee' },
  image: IMAGE,
  ...over,
});

const PLAYER_ATTRS =
  'allow="autoplay; encrypted-media; picture-in-picture; fullscreen" sandbox="allow-scripts allow-same-origin allow-presentation allow-popups" loading="lazy" referrerpolicy="strict-origin-when-cross-origin" title="The harbour reopens"';
/** A player that scales to its column: 100% wide with its aspect ratio, as the Embed schema describes it. */
const scalingVideo: Embed = {
  type: 'video',
  url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
  aspectRatio: 16 / 9,
  provider: 'YouTube',
  html: `<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" width="100%" style="aspect-ratio:16/9;border:0" ${PLAYER_ATTRS}></iframe>`,
};
/** A post at its own fixed size. */
const fixedPost: Embed = {
  type: 'rich',
  url: 'https://embed.social.example/post/1788',
  width: 550,
  height: 700,
  provider: 'Social',
  html: `<iframe src="https://embed.social.example/post/1788" width="550" height="700" style="border:0" ${PLAYER_ATTRS}></iframe>`,
};
/** An audio bar: full width, a fixed height. */
const audioBar: Embed = {
  type: 'audio',
  url: 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC',
  height: 152,
  provider: 'Spotify',
  html: `<iframe src="https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC" width="100%" height="152" style="border:0" ${PLAYER_ATTRS}></iframe>`,
};

/** The answer, checked against the specification and the document before the test looks at it. */
function answer(record: LinkRecord, bounds: OEmbedBounds = {}) {
  const a = oembedAnswer(record, bounds) as Record<string, any>;
  expect(oembedSpecErrors(a, bounds)).toEqual([]);
  expect(conformanceErrors('OEmbed', a)).toEqual([]);
  return a;
}

describe('link: a page without a player', () => {
  test('version, type, title, author, provider and the thumbnail (medium without bounds)', () => {
    expect(answer(page())).toEqual({
      version: '1.0',
      type: 'link',
      title: 'The harbour reopens',
      author_name: 'Ann Lee',
      author_url: 'https://news.example.com/authors/ann-lee',
      provider_name: 'Harbour News',
      provider_url: 'https://news.example.com/',
      thumbnail_url: `${CDN}/medium.webp`,
      thumbnail_width: 640,
      thumbnail_height: 360,
    });
  });

  test('the thumbnail is the largest hosted size within maxwidth and maxheight, and none when none fits', () => {
    const thumb = (b: OEmbedBounds) => {
      const a = answer(page(), b);
      return a.thumbnail_url === undefined ? 'none' : `${a.thumbnail_width}x${a.thumbnail_height}`;
    };
    expect(thumb({ maxwidth: 1280 })).toBe('1280x720');
    expect(thumb({ maxwidth: 2000, maxheight: 2000 })).toBe('1280x720'); // never the original
    expect(thumb({ maxwidth: 1279 })).toBe('640x360');
    expect(thumb({ maxheight: 359 })).toBe('320x180');
    expect(thumb({ maxwidth: 400, maxheight: 400 })).toBe('320x180');
    expect(thumb({ maxwidth: 319 })).toBe('none');
    expect(thumb({ maxwidth: 600, maxheight: 100 })).toBe('none');
  });

  test("without siteName the provider is the domain; without an author or image, no such fields; the provider is the final URL's origin", () => {
    const a = answer(
      page({
        siteName: undefined,
        author: undefined,
        image: undefined,
        redirected: true,
        redirectionUrl: 'https://www.harbour.example:8443/story?id=1',
      }),
    );
    expect(a).toEqual({
      version: '1.0',
      type: 'link',
      title: 'The harbour reopens',
      provider_name: 'news.example.com',
      provider_url: 'https://www.harbour.example:8443/',
    });
  });
});

describe('photo: an IMAGE link', () => {
  const image = page({ type: 'IMAGE', url: 'https://photos.example.org/p/harbour.jpg', domain: 'photos.example.org', siteName: undefined, author: undefined });

  test('the largest hosted size within the bounds (large without any)', () => {
    const size = (b: OEmbedBounds) => {
      const a = answer(image, b);
      expect(a.type).toBe('photo');
      return `${a.url.split('/').pop()} ${a.width}x${a.height}`;
    };
    expect(size({})).toBe('large.webp 1280x720');
    expect(size({ maxwidth: 700 })).toBe('medium.webp 640x360');
    expect(size({ maxwidth: 700, maxheight: 200 })).toBe('thumbnail.webp 320x180');
  });

  test('bounds under the thumbnail: the thumbnail, its display size scaled down to them', () => {
    expect(answer(image, { maxwidth: 100 })).toMatchObject({ type: 'photo', url: `${CDN}/thumbnail.webp`, width: 100, height: 56 });
    expect(answer(image, { maxwidth: 300, maxheight: 90 })).toMatchObject({ width: 160, height: 90 });
  });

  test('an IMAGE link whose image could not be hosted is a link', () => {
    expect(answer({ ...image, image: undefined }).type).toBe('link');
  });
});

describe('video and rich: a record with a player', () => {
  test('a video player that scales: maxwidth wide (or the default), the height from its ratio, within maxheight', () => {
    expect(answer(page({ embed: scalingVideo }))).toMatchObject({ type: 'video', width: DEFAULT_PLAYER_WIDTH, height: 360 });
    expect(answer(page({ embed: scalingVideo }), { maxwidth: 500 })).toMatchObject({ width: 500, height: 281 });
    expect(answer(page({ embed: scalingVideo }), { maxwidth: 800, maxheight: 300 })).toMatchObject({ width: 533, height: 300 });
  });

  test("its element gets the answer's size: width and height set, the 100% and the aspect ratio gone, the rest kept", () => {
    const { html } = answer(page({ embed: scalingVideo }), { maxwidth: 500 });
    expect(html).toBe(`<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" ${PLAYER_ATTRS} width="500" height="281" style="border:0"></iframe>`);
  });

  test('a fixed-size post is rich, at its size, scaled down (never up) to the bounds', () => {
    expect(answer(page({ embed: fixedPost }), { maxwidth: 1000 })).toMatchObject({ type: 'rich', width: 550, height: 700 });
    expect(answer(page({ embed: fixedPost }), { maxwidth: 400 })).toMatchObject({ width: 400, height: 509 });
    const short = answer(page({ embed: fixedPost }), { maxheight: 350 });
    expect(short).toMatchObject({ width: 275, height: 350 });
    expect(short.html).toContain('width="275" height="350"');
    expect(short.html).not.toContain('width="550"');
  });

  test('an audio bar is rich: maxwidth (or the default) wide, its own height', () => {
    expect(answer(page({ embed: audioBar }), { maxwidth: 500 })).toMatchObject({ type: 'rich', width: 500, height: 152 });
    expect(answer(page({ embed: audioBar }))).toMatchObject({ width: DEFAULT_PLAYER_WIDTH, height: 152 });
    expect(answer(page({ embed: audioBar }), { maxheight: 100 })).toMatchObject({ height: 100 });
  });

  test('an image viewer (embed type photo) is rich: its html is a player, not an image address', () => {
    const viewer: Embed = { ...fixedPost, type: 'photo', provider: 'Photos' };
    expect(answer(page({ embed: viewer })).type).toBe('rich');
  });

  test('a VIDEO file link: the native <video> sized by attributes; an AUDIO file link: the <audio> by its style', () => {
    const file: Embed = {
      type: 'video',
      url: 'https://files.example.net/clip.mp4',
      width: 1280,
      height: 720,
      provider: 'files.example.net',
      html: '<video controls preload="none" src="https://files.example.net/clip.mp4" poster="https://cdn.example/p.webp" width="1280" height="720"></video>',
    };
    const video = answer(page({ type: 'VIDEO', embed: file }), { maxwidth: 640 });
    expect(video).toMatchObject({ type: 'video', width: 640, height: 360 });
    expect(video.html).toBe(
      '<video controls preload="none" src="https://files.example.net/clip.mp4" poster="https://cdn.example/p.webp" width="640" height="360"></video>',
    );
    const sound: Embed = {
      type: 'audio',
      url: 'https://files.example.net/song.mp3',
      height: 54,
      provider: 'files.example.net',
      html: '<audio controls preload="none" src="https://files.example.net/song.mp3"></audio>',
    };
    const audio = answer(page({ type: 'AUDIO', embed: sound }), { maxwidth: 480 });
    expect(audio).toMatchObject({ type: 'rich', width: 480, height: 54 });
    expect(audio.html).toBe('<audio controls preload="none" src="https://files.example.net/song.mp3" style="width:480px"></audio>');
  });
});

describe('the parts, alone', () => {
  test('playerSize: a player with neither size nor ratio is 16:9; with only a width, that width at most', () => {
    expect(playerSize({}, {})).toEqual({ width: 640, height: 360 });
    expect(playerSize({ width: 400 }, {})).toEqual({ width: 400, height: 225 });
    expect(playerSize({ width: 400 }, { maxwidth: 300 })).toEqual({ width: 300, height: 169 });
  });

  test('sizedHtml: single-quoted and unquoted sizes replaced; anything that is not an iframe, video or audio left alone', () => {
    expect(
      sizedHtml("<iframe src='https://p.example/e' width=100% height='300' style='aspect-ratio: 4/3; border: 0'></iframe>", { width: 200, height: 150 }),
    ).toBe(`<iframe src='https://p.example/e' width="200" height="150" style="border: 0"></iframe>`);
    expect(sizedHtml('<iframe data-width="9" src="https://p.example/e"></iframe>', { width: 2, height: 1 })).toBe(
      '<iframe data-width="9" src="https://p.example/e" width="2" height="1"></iframe>',
    );
    const other = '<blockquote class="post"><p>Hi</p></blockquote>';
    expect(sizedHtml(other, { width: 10, height: 10 })).toBe(other);
  });

  test("sizedHtml: a title (or any value) holding ' width=…', ' height=…' or ' style=…' keeps its text", () => {
    const html =
      '<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" style="width:100%;aspect-ratio:1.7778;border:0" title="YouTube: Bridge width=300 height=&quot;20&quot; style=\'x\' opens" loading="lazy"></iframe>';
    expect(sizedHtml(html, { width: 640, height: 360 })).toBe(
      '<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" title="YouTube: Bridge width=300 height=&quot;20&quot; style=\'x\' opens" loading="lazy" width="640" height="360" style="border:0"></iframe>',
    );
  });

  test('the checks can fail: a photo without its url, a thumbnail without its height, a size over maxwidth', () => {
    const bad = { version: '1.0', type: 'photo', width: 10, height: 10, thumbnail_url: 'x', thumbnail_width: 3 };
    expect(oembedSpecErrors(bad).join('\n')).toMatch(/needs url[\s\S]*thumbnail fields come together/);
    expect(conformanceErrors('OEmbed', bad).join('\n')).toMatch(/url[\s\S]*thumbnail_height/);
    expect(oembedSpecErrors({ version: '1.0', type: 'video', html: '<iframe></iframe>', width: 700, height: 10 }, { maxwidth: 600 })).toEqual([
      'video width 700 > maxwidth 600',
    ]);
    expect(conformanceErrors('OEmbed', { version: '1.0', type: 'rich', width: 1, height: 1 }).join()).toMatch(/html/);
  });
});
