/** YouTube (platform `videohost`), its videos (VIDEOHOST_VIDEO): every URL form, the watch page, the Data API, oEmbed and the fallbacks. */
import { stableId } from '../../../lib/ids';
import { matchYoutube } from '../../../lib/platforms/youtube/index';
import { CHANNEL_ID, playerResponse, VIDEO_ID, watchPage } from '../fixtures/youtube';
import { image, json, page, redirect, startWorld, type World } from '../harness';

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
    expect(matchYoutube(new URL(link))).toEqual({ kind, ids });
  });

  it.each([
    'https://www.youtube.com/',
    'https://www.youtube.com/watch?v=short',
    'https://www.youtube.com/feed/trending',
    'https://youtu.be/',
    'https://notyoutube.com/watch?v=Ab3_dE-fGh1',
    'https://www.youtube.com/results?search_query=kites',
  ])('does not match %s', (link) => {
    expect(matchYoutube(new URL(link))).toBeUndefined();
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
  it("the card fields: the site, the channel as the author, the video's date", () => {
    expect(r.siteName).toBe('YouTube');
    // The watch page's own theme-color (a platform record keeps what its page declares).
    expect(r.themeColor).toBe('#ffffff');
    expect(r.author).toEqual(expect.objectContaining({ name: r.videohostVideo.user.name }));
    expect(r.author.name).toBeTruthy();
    expect(r.publishedAt).toBe('2021-05-04T16:15:00.000Z');
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
