/**
 * Players in whole previews (docs/embeds.md), through the real handler on real host names (the
 * platform harness maps every host onto the loopback fixture server): a YouTube link previewed
 * generically and a page whose og:video is a YouTube player get the no-cookie player; a page's
 * twitter:player on its own site is kept; an oEmbed answer fetched for the fields gives its
 * iframe's player; a VIDEO file gets a native <video> with the hosted poster; a YouTube video
 * through its platform gets its player; `no-embed` takes them away. Every answer is checked
 * against openapi.yaml by the harness (the Embed object has no other property).
 */
import { loadConfig } from '../../lib/config';
import { httpApiEvent, TEST_KEY } from '../helpers/service';
import * as fx from '../media-types/fixtures';
import { oembedSpecErrors } from '../oembed/spec';
import { VIDEO_ID, watchPage } from '../platforms/fixtures/youtube';
import { image, json, page, startWorld, type World } from '../platforms/harness';

jest.setTimeout(60_000);

/** The platform's own source on a host of its own: the generic fetch of a youtube.com link answers apart. */
const SOURCES = { LINKPREVIEW_YOUTUBE_BASE_URL: 'https://yt' };
const OTHER_VIDEO = 'Zz9_yX-wVu8';

const html = (head: string, body = '<p>Words of the page.</p>') => page(`<!doctype html><html lang="en"><head>${head}</head><body>${body}</body></html>`);

async function routes(w: World): Promise<void> {
  // The platform's watch page knows VIDEO_ID only; OTHER_VIDEO's platform sources fail (404).
  w.server.route(`/yt/watch?v=${VIDEO_ID}`, page(watchPage(w.origin)));
  for (const p of [`/img/vi/${VIDEO_ID}/maxresdefault.jpg`, '/img/avatar-176.jpg']) w.server.route(p, await image(64, 36));
  w.server.route(
    `/www.youtube.com/watch?v=${OTHER_VIDEO}`,
    html(
      `<title>Folding a paper crane - YouTube</title><meta property="og:title" content="Folding a paper crane"><meta property="og:description" content="Step by step.">`,
    ),
  );
  w.server.route(
    '/www.example-news.com/video/7',
    html(
      '<title>Harbour fireworks</title><meta property="og:title" content="Harbour fireworks"><meta name="description" content="The fireworks over the harbour."><meta name="twitter:card" content="player"><meta name="twitter:player" content="https://player.example-news.com/embed/7"><meta name="twitter:player:width" content="640"><meta name="twitter:player:height" content="360">',
    ),
  );
  w.server.route(
    '/blog.example-crafts.com/posts/kites',
    html(
      `<title>Our kite video</title><meta property="og:title" content="Our kite video"><meta name="description" content="We made a video."><meta property="og:video:url" content="https://www.youtube.com/embed/${OTHER_VIDEO}"><meta property="og:video:type" content="text/html"><meta property="og:video:width" content="1280"><meta property="og:video:height" content="720">`,
    ),
  );
  w.server.route(
    '/www.example-talks.com/watch',
    html(
      '<title>A talk</title><meta name="description" content="A talk about kites."><link rel="alternate" type="application/json+oembed" href="https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F76979871">',
    ),
  );
  w.server.route(
    '/vimeo.com/api/oembed.json',
    json({
      type: 'video',
      version: '1.0',
      provider_name: 'Vimeo',
      title: 'Kites over the bay',
      width: 640,
      height: 360,
      html: '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e&amp;app_id=122963" width="640" height="360" frameborder="0" allow="autoplay; fullscreen" title="Kites over the bay"></iframe><script src="https://player.vimeo.com/api/player.js"></script>',
    }),
  );
  w.server.route('/media.example-news.com/clip.mp4', fx.serveBytes(await fx.mp4({ seconds: 4 }), 'video/mp4'));
}

describe('with players on', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    await routes(w);
  });
  afterAll(() => w.close());

  test('a YouTube link previewed generically (its platform sources failed): the no-cookie player', async () => {
    const r = await w.preview(`https://www.youtube.com/watch?v=${OTHER_VIDEO}`);
    expect(r).toMatchObject({ ok: true, type: 'PAGE', title: 'Folding a paper crane' });
    expect(r.embed).toMatchObject({ type: 'video', url: `https://www.youtube-nocookie.com/embed/${OTHER_VIDEO}`, provider: 'YouTube', aspectRatio: 1.7778 });
    expect(r.embed.html).toBe(
      `<iframe src="https://www.youtube-nocookie.com/embed/${OTHER_VIDEO}" style="width:100%;aspect-ratio:1.7778;border:0" allow="autoplay; encrypted-media; fullscreen; picture-in-picture" sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox" loading="lazy" referrerpolicy="strict-origin-when-cross-origin" title="YouTube: Folding a paper crane"></iframe>`,
    );
  });

  test("a page whose og:video is YouTube's player: the no-cookie player", async () => {
    const r = await w.preview('https://blog.example-crafts.com/posts/kites');
    expect(r.embed).toMatchObject({ url: `https://www.youtube-nocookie.com/embed/${OTHER_VIDEO}`, provider: 'YouTube' });
  });

  test("a page's twitter:player on its own site: kept, with its size", async () => {
    const r = await w.preview('https://www.example-news.com/video/7');
    expect(r.embed).toEqual({
      type: 'video',
      url: 'https://player.example-news.com/embed/7',
      provider: 'player.example-news.com',
      width: 640,
      height: 360,
      aspectRatio: 1.7778,
      html: expect.stringMatching(/^<iframe src="https:\/\/player\.example-news\.com\/embed\/7" /),
    });
  });

  test("oEmbed fetched for the record's fields: its iframe's player, nothing else of its markup", async () => {
    const r = await w.preview('https://www.example-talks.com/watch');
    expect(r.title).toBe('Kites over the bay');
    expect(r.embed).toMatchObject({ type: 'video', url: 'https://player.vimeo.com/video/76979871?h=8272103f6e', provider: 'Vimeo', width: 640, height: 360 });
    expect(r.embed.html).not.toMatch(/<script|app_id|player\.js/);
  });

  test('a VIDEO file link: a native <video>, the hosted frame as its poster', async () => {
    const r = await w.preview('https://media.example-news.com/clip.mp4');
    expect(r).toMatchObject({ ok: true, type: 'VIDEO' });
    const poster = r.image?.large?.url;
    expect(poster).toMatch(/^http:\/\/assets\.test\//);
    expect(r.embed).toMatchObject({ type: 'video', url: 'https://media.example-news.com/clip.mp4', provider: 'media.example-news.com' });
    expect(r.embed.html).toBe(
      `<video controls preload="none" src="https://media.example-news.com/clip.mp4" poster="${poster}" style="width:100%;aspect-ratio:${r.embed.aspectRatio}"></video>`,
    );
    expect(r.embed.aspectRatio).toBeCloseTo(r.video.width / r.video.height, 3);
  });

  test("a YouTube video through its platform: the platform's player, titled with the video", async () => {
    const r = await w.preview(`https://youtu.be/${VIDEO_ID}`);
    expect(r).toMatchObject({ ok: true, type: 'VIDEOHOST_VIDEO' });
    expect(r.embed).toMatchObject({ type: 'video', url: `https://www.youtube-nocookie.com/embed/${VIDEO_ID}`, provider: 'YouTube', aspectRatio: 1.7778 });
    expect(r.embed.html).toContain('title="YouTube: Building a kite from paper };"');
  });

  test('a page with no player: no embed', async () => {
    w.server.route('/www.example-news.com/about', html('<title>About us</title><meta name="description" content="Who we are.">'));
    const r = await w.preview('https://www.example-news.com/about');
    expect(r.ok).toBe(true);
    expect(r.embed).toBeUndefined();
  });
});

describe('GET /oembed of a link with a player: the player element, sized to maxwidth', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    await routes(w);
  });
  afterAll(() => w.close());

  test('a YouTube link: a video answer whose html is the service-built iframe at 480 x 270', async () => {
    const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.alloc(0), 'GET', '/oembed');
    event.rawQueryString = new URLSearchParams({ url: `https://www.youtube.com/watch?v=${OTHER_VIDEO}`, maxwidth: '480' }).toString();
    const res = (await w.handler.invoke(event)) as { statusCode: number; body: string };
    expect(res.statusCode).toBe(200);
    const answer = JSON.parse(res.body);
    expect(oembedSpecErrors(answer, { maxwidth: 480 })).toEqual([]);
    expect(answer).toMatchObject({ version: '1.0', type: 'video', title: 'Folding a paper crane', width: 480, height: 270 });
    expect(answer.html).toMatch(new RegExp(`^<iframe src="https://www\\.youtube-nocookie\\.com/embed/${OTHER_VIDEO}" `));
    expect(answer.html).toMatch(/ width="480" height="270"/);
    expect(answer.html).toContain('sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox"');
    expect(answer.html).not.toMatch(/<script|aspect-ratio/);
  });
});

describe('the no-embed host rule', () => {
  let w: World;
  beforeAll(async () => {
    const { hostRules } = loadConfig({ LINKPREVIEW_HOST_RULES: 'example-news.com=no-embed;youtu.be=no-embed' });
    w = await startWorld({ env: SOURCES, config: { hostRules } });
    await routes(w);
  });
  afterAll(() => w.close());

  test('a page, a file and a platform link of its hosts: their records, without a player', async () => {
    const news = await w.preview('https://www.example-news.com/video/7');
    expect(news).toMatchObject({ ok: true, title: 'Harbour fireworks' });
    expect(news.embed).toBeUndefined();
    const file = await w.preview('https://media.example-news.com/clip.mp4');
    expect(file).toMatchObject({ ok: true, type: 'VIDEO' });
    expect(file.embed).toBeUndefined();
    const video = await w.preview(`https://youtu.be/${VIDEO_ID}`);
    expect(video).toMatchObject({ ok: true, type: 'VIDEOHOST_VIDEO' });
    expect(video.embed).toBeUndefined();
  });

  test('another host: its player as before', async () => {
    const r = await w.preview('https://blog.example-crafts.com/posts/kites');
    expect(r.embed?.provider).toBe('YouTube');
  });
});
