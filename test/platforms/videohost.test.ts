import { stableId } from '../../lib/ids';
import { parseCount } from '../../lib/platforms/shared';
import { matchVideohost } from '../../lib/platforms/videohost';
import { CHANNEL_ID, channelPage, playerResponse, VIDEO_ID, watchPage } from './fixtures/videohost';
import { image, json, page, redirect, startWorld, type World } from './harness';

// The platform's sources on hosts of their own (the harness maps every host onto the fixture
// server): they answer under /<host>/..., apart from the generic fetch of the same link.
const SOURCES = { LINKPREVIEW_YOUTUBE_BASE_URL: 'https://yt', LINKPREVIEW_YOUTUBE_API_URL: 'https://yt-api' };

describe('videohost matcher: one test per URL form', () => {
  it.each([
    ['https://www.youtube.com/watch?v=Ab3_dE-fGh1', 'video', { videoId: VIDEO_ID }],
    ['https://youtube.com/watch?v=Ab3_dE-fGh1&t=42s&list=PL1', 'video', { videoId: VIDEO_ID }],
    ['https://youtu.be/Ab3_dE-fGh1?si=share', 'video', { videoId: VIDEO_ID }],
    ['https://www.youtube.com/shorts/Ab3_dE-fGh1', 'video', { videoId: VIDEO_ID }],
    ['https://www.youtube.com/live/Ab3_dE-fGh1?feature=share', 'video', { videoId: VIDEO_ID }],
    ['https://www.youtube.com/embed/Ab3_dE-fGh1', 'video', { videoId: VIDEO_ID }],
    ['https://www.youtube-nocookie.com/embed/Ab3_dE-fGh1', 'video', { videoId: VIDEO_ID }],
    ['https://m.youtube.com/watch?v=Ab3_dE-fGh1', 'video', { videoId: VIDEO_ID }],
    ['https://music.youtube.com/watch?v=Ab3_dE-fGh1&feature=share', 'video', { videoId: VIDEO_ID }],
    ['https://www.youtube.com/@PaperSkies', 'channel', { handle: '@PaperSkies' }],
    ['https://www.youtube.com/@PaperSkies/videos', 'channel', { handle: '@PaperSkies' }],
    [`https://www.youtube.com/channel/${CHANNEL_ID}`, 'channel', { channelId: CHANNEL_ID }],
    ['https://www.youtube.com/c/PaperSkies', 'channel', { custom: 'PaperSkies' }],
    ['https://www.youtube.com/user/paperskies', 'channel', { user: 'paperskies' }],
  ])('%s', (link, kind, ids) => {
    expect(matchVideohost(new URL(link))).toEqual({ kind, ids });
  });

  it.each([
    'https://www.youtube.com/',
    'https://www.youtube.com/watch?v=short',
    'https://www.youtube.com/feed/trending',
    'https://youtu.be/',
    'https://notyoutube.com/watch?v=Ab3_dE-fGh1',
    'https://www.youtube.com/results?search_query=kites',
  ])('does not match %s', (link) => {
    expect(matchVideohost(new URL(link))).toBeUndefined();
  });
});

describe('videohost counts as printed', () => {
  it.each([
    ['1.2M subscribers', 1_200_000],
    ['4,69 M de suscriptores', 4_690_000],
    ['4,69 millones de suscriptores', 4_690_000],
    ['6,8 K', 6_800],
    ['215 K', 215_000],
    ['13M', 13_000_000],
    ['1,234,567 views', 1_234_567],
    ['1.234.567 Aufrufe', 1_234_567],
    ['345 videos', 345],
    ['No views', undefined],
    ['2 Mio. Abonnenten', 2_000_000],
    ['1.5B views', 1_500_000_000],
  ])('%s -> %s', (text, n) => {
    expect(parseCount(text)).toBe(n);
  });
});

describe('videohost video from the watch page', () => {
  let w: World;
  let r: any;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/yt/watch', page(watchPage(w.origin)));
    for (const p of [`/img/vi/${VIDEO_ID}/maxresdefault.jpg`, '/img/avatar-176.jpg']) w.server.route(p, await image(64, 36));
    r = await w.preview(`https://youtu.be/${VIDEO_ID}`);
  });
  afterAll(() => w.close());

  it('is a VIDEOHOST_VIDEO with the top-level title, description and image', () => {
    expect(r).toMatchObject({ ok: true, type: 'VIDEOHOST_VIDEO', status: 200, title: 'Building a kite from paper };' });
    expect(r.description).toBe('How to fold and fly a paper kite.\nMaterials in the first minute.');
    expect(r.image.original.url).toMatch(/^http:\/\/assets\.test\//);
  });
  it('sends the SOCS consent cookie and asks the configured base URL', () => {
    const req = w.server.requests.find((x) => x.url.startsWith('/yt/watch'))!;
    expect(req.url).toBe(`/yt/watch?v=${VIDEO_ID}`);
    expect(String(req.headers.cookie)).toContain('SOCS=CAI');
  });
  it.each([
    ['id', () => stableId(`videohost:video:${VIDEO_ID}`)],
    ['videoId', () => VIDEO_ID],
    ['title', () => 'Building a kite from paper };'],
    ['duration', () => 754],
    ['viewsCount', () => 1234567],
    ['publishedAt', () => '2021-05-04T16:15:00.000Z'],
    ['likesCount', () => 48213],
    ['commentsCount', () => 3456],
  ])('videohostVideo.%s', (field, value) => {
    expect(r.videohostVideo[field]).toEqual(value());
  });
  it('videohostVideo.description', () => {
    expect(r.videohostVideo.description).toContain('Materials in the first minute.');
  });
  it('videohostVideo.thumbnail is hosted (ImageSet)', () => {
    expect(r.videohostVideo.thumbnail.large.url).toMatch(/^http:\/\/assets\.test\//);
  });
  it('videohostVideo.user is the channel: handle, name, externalId, url, avatar, subscribers, verified', () => {
    const u = r.videohostVideo.user;
    expect(u).toMatchObject({
      id: stableId(`videohost:user:${CHANNEL_ID}`),
      username: '@PaperSkies',
      name: 'Paper Skies',
      externalId: CHANNEL_ID,
      url: 'https://www.youtube.com/@PaperSkies',
      subscribersCount: 1_200_000,
      verified: true,
    });
    expect(u.avatar.thumbnail.url).toMatch(/^http:\/\/assets\.test\//);
  });
});

describe('videohost with YOUTUBE_API_KEY: exact counts from the Data API', () => {
  let w: World;
  afterEach(() => w.close());
  it('API counts win over the page, the key is sent, the rest comes from the page', async () => {
    w = await startWorld({ env: { ...SOURCES, YOUTUBE_API_KEY: 'yt-key' } });
    w.server.route('/yt/watch', page(watchPage(w.origin)));
    w.server.route(
      '/yt-api/videos',
      json({
        items: [
          {
            id: VIDEO_ID,
            snippet: { publishedAt: '2021-05-04T16:15:00Z', channelId: CHANNEL_ID, title: 'API title', channelTitle: 'Paper Skies' },
            statistics: { viewCount: '1234999', likeCount: '48299', commentCount: '3461' },
            contentDetails: { duration: 'PT12M34S' },
          },
        ],
      }),
    );
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r.videohostVideo).toMatchObject({
      viewsCount: 1234999,
      likesCount: 48299,
      commentsCount: 3461,
      duration: 754,
      title: 'Building a kite from paper };',
    });
    expect(w.asked().find((u) => u.startsWith('/yt-api/videos'))).toContain('key=yt-key');
  });
  it("the top-level description is the watch page's one-line summary when it has one; the full text stays on the video", async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/yt/watch', page(watchPage(w.origin, undefined, undefined, 'How to fold and fly a paper kite.Materials in the first…')));
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r.description).toBe('How to fold and fly a paper kite.Materials in the first…');
    expect(r.videohostVideo.description).toBe('How to fold and fly a paper kite.\nMaterials in the first minute.');
  });
  it('the API alone gives the video when the page is blocked', async () => {
    w = await startWorld({ env: { ...SOURCES, YOUTUBE_API_KEY: 'yt-key' } });
    w.server.route('/yt/watch', page('<html><title>Sorry</title></html>', 429));
    w.server.route(
      '/yt-api/videos',
      json({
        items: [
          {
            id: VIDEO_ID,
            snippet: { title: 'API title', description: 'API text', channelId: CHANNEL_ID, channelTitle: 'Paper Skies' },
            statistics: { viewCount: '10' },
            contentDetails: { duration: 'PT1H2S' },
          },
        ],
      }),
    );
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r).toMatchObject({ ok: true, type: 'VIDEOHOST_VIDEO', title: 'API title' });
    expect(r.videohostVideo).toMatchObject({ duration: 3602, viewsCount: 10, user: { username: CHANNEL_ID, externalId: CHANNEL_ID, name: 'Paper Skies' } });
  });
});

describe('videohost fallbacks', () => {
  let w: World;
  afterEach(() => w.close());

  it('consent redirect: the interstitial never becomes the preview; oEmbed gives the video', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/yt/watch', redirect('/consent.youtube.com/ml?continue=https://www.youtube.com/watch', 302));
    w.server.route('/consent.youtube.com/ml', page('<html><head><title>Before you continue to YouTube</title></head></html>'));
    w.server.route(
      '/yt/oembed',
      json({
        title: 'Building a kite from paper',
        author_name: 'Paper Skies',
        author_url: 'https://www.youtube.com/@PaperSkies',
        thumbnail_url: `${w.origin}/img/hq.jpg`,
        type: 'video',
      }),
    );
    w.server.route('/img/hq.jpg', await image(48, 36));
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r).toMatchObject({ ok: true, type: 'VIDEOHOST_VIDEO', title: 'Building a kite from paper' });
    expect(r.videohostVideo).toMatchObject({ videoId: VIDEO_ID, user: { username: '@PaperSkies', name: 'Paper Skies' } });
    expect(r.videohostVideo.thumbnail).toBeDefined();
    expect(w.asked().some((u) => u.startsWith('/yt/oembed?url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3D'))).toBe(true);
  });

  it('consent wall and no oEmbed: the generic preview reports the wall as ok:false, not as content', async () => {
    w = await startWorld({ env: SOURCES });
    const consent = page('<html><head><title>Before you continue to YouTube</title></head><body>cookies</body></html>');
    w.server.route('/yt/watch', redirect('/consent.youtube.com/ml?continue=x', 302));
    w.server.route('/yt/oembed', json({ error: 'nope' }, 429));
    w.server.route('/www.youtube.com/watch', redirect('/consent.youtube.com/ml?continue=x', 302));
    w.server.route('/consent.youtube.com/ml', consent);
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r.type).toBe('PAGE');
    expect(r.ok).toBe(false);
    expect(r.title ?? '').not.toMatch(/before you continue/i);
  });

  it('rate limit (429) on the page and oEmbed: the generic PAGE preview of the same URL', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/yt/watch', page('<html><title>429</title></html>', 429));
    w.server.route('/yt/oembed', page('', 429));
    w.server.route('/www.youtube.com/watch', page('<html><head><title>Kite video</title><meta property="og:title" content="Kite video"></head></html>'));
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r).toMatchObject({ ok: true, type: 'PAGE', title: 'Kite video' });
  });

  it("removed video: ok:false VIDEOHOST_VIDEO with the player's reason", async () => {
    w = await startWorld({ env: SOURCES });
    const player = { playabilityStatus: { status: 'ERROR', reason: 'This video has been removed by the uploader' } };
    w.server.route('/yt/watch', page(watchPage(w.origin, player, {})));
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r).toMatchObject({ ok: false, type: 'VIDEOHOST_VIDEO', status: 200, description: 'This video has been removed by the uploader' });
    expect(r.videohostVideo).toEqual({ id: stableId(`videohost:video:${VIDEO_ID}`), videoId: VIDEO_ID });
  });

  it('a player response for another video is not taken for this one', async () => {
    w = await startWorld({ env: SOURCES });
    const other = playerResponse(w.origin);
    (other.videoDetails as any).videoId = 'Zz9_yY-xXw8';
    w.server.route('/yt/watch', page(watchPage(w.origin, other)));
    w.server.route('/yt/oembed', page('', 404));
    w.server.route('/www.youtube.com/watch', page('<html><head><title>Generic</title></head></html>'));
    const r = await w.preview(`https://www.youtube.com/watch?v=${VIDEO_ID}`);
    expect(r.type).toBe('PAGE');
  });
});

describe('videohost channels', () => {
  let w: World;
  let r: any;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/yt/@PaperSkies', page(channelPage(w.origin)));
    for (const p of ['/img/avatar-900.jpg', '/img/banner-2560.jpg']) w.server.route(p, await image(60, 40));
    r = await w.preview('https://www.youtube.com/@PaperSkies');
  });
  afterAll(() => w.close());

  it('is a VIDEOHOST_USER with title, description and the avatar as image', () => {
    expect(r).toMatchObject({ ok: true, type: 'VIDEOHOST_USER', title: 'Paper Skies', description: 'Kites, gliders and everything that flies on paper.' });
    expect(r.image).toBeDefined();
  });
  it.each([
    ['id', stableId(`videohost:user:${CHANNEL_ID}`)],
    ['username', '@PaperSkies'],
    ['name', 'Paper Skies'],
    ['description', 'Kites, gliders and everything that flies on paper.'],
    ['externalId', CHANNEL_ID],
    ['url', 'https://www.youtube.com/@PaperSkies'],
    ['subscribersCount', 1_200_000],
    ['videosCount', 345],
    ['isFamilySafe', true],
    ['verified', true],
    ['visibility', 'PUBLIC'],
  ])('videohostUser.%s', (field, value) => {
    expect(r.videohostUser[field]).toEqual(value);
  });
  it('videohostUser.avatar and banner are hosted', () => {
    expect(r.videohostUser.avatar.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(r.videohostUser.banner.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(w.asked()).toEqual(expect.arrayContaining(['/img/avatar-900.jpg', '/img/banner-2560.jpg']));
  });

  it('the older c4TabbedHeader layout, localized counts (/channel/UC…)', async () => {
    const w2 = await startWorld({ env: SOURCES });
    try {
      w2.server.route(`/yt/channel/${CHANNEL_ID}`, page(channelPage(w2.origin, 'c4')));
      const r2 = await w2.preview(`https://www.youtube.com/channel/${CHANNEL_ID}`);
      expect(r2.videohostUser).toMatchObject({ username: '@PaperSkies', subscribersCount: 4_690_000, videosCount: 6_800, verified: true });
    } finally {
      await w2.close();
    }
  });

  it('joinedAt and viewsCount from the Data API when YOUTUBE_API_KEY is set', async () => {
    const w2 = await startWorld({ env: { ...SOURCES, YOUTUBE_API_KEY: 'k' } });
    try {
      w2.server.route('/yt/user/paperskies', page(channelPage(w2.origin)));
      w2.server.route(
        '/yt-api/channels',
        json({
          items: [
            {
              id: CHANNEL_ID,
              snippet: { title: 'Paper Skies', publishedAt: '2012-03-01T10:00:00Z', customUrl: '@paperskies' },
              statistics: { viewCount: '98765432', subscriberCount: '1210000', videoCount: '346', hiddenSubscriberCount: false },
            },
          ],
        }),
      );
      const r2 = await w2.preview('https://www.youtube.com/user/paperskies');
      expect(r2.videohostUser).toMatchObject({ joinedAt: '2012-03-01T10:00:00.000Z', viewsCount: 98765432, subscribersCount: 1210000, videosCount: 346 });
      expect(w2.asked().find((u) => u.startsWith('/yt-api/channels'))).toContain(`id=${CHANNEL_ID}`);
    } finally {
      await w2.close();
    }
  });

  it('a channel that does not exist (404): the generic preview, ok:false', async () => {
    const w2 = await startWorld({ env: SOURCES });
    try {
      w2.server.route('/yt/@nobody', page('<html><title>404</title></html>', 404));
      w2.server.route('/www.youtube.com/@nobody', page('<html><head><title>404 Not Found</title></head></html>', 404));
      const r2 = await w2.preview('https://www.youtube.com/@nobody');
      expect(r2).toMatchObject({ ok: false, type: 'PAGE', status: 404 });
    } finally {
      await w2.close();
    }
  });
});
