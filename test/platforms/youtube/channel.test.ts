/** YouTube (platform `videohost`), its channels (VIDEOHOST_USER): the channel page and the Data API. */
import { stableId } from '../../../lib/ids';
import { CHANNEL_ID, channelPage } from '../fixtures/youtube';
import { image, json, page, startWorld, type World } from '../harness';

// The platform's sources on hosts of their own (the harness maps every host onto the fixture
// server): they answer under /<host>/..., apart from the generic fetch of the same link.
const SOURCES = { LINKPREVIEW_YOUTUBE_BASE_URL: 'https://yt', LINKPREVIEW_YOUTUBE_API_URL: 'https://yt-api' };

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
    // A channel is its own author, with the site's name; a profile has no publication date.
    expect(r).toMatchObject({ siteName: 'YouTube', author: { name: 'Paper Skies' } });
    expect(r.publishedAt).toBeUndefined();
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
