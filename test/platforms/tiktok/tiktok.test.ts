/** TikTok (platform `clips`): URL forms, short links, the rehydration JSON, SIGI_STATE, oEmbed, removed/private videos and users. */
import { matchTiktok } from '../../../lib/platforms/tiktok/index';
import { clipsIdTime } from '../../../lib/platforms/tiktok/video';
import * as fx from '../fixtures/tiktok';
import { image, json, page, redirect, startWorld, type World } from '../harness';

const ID = fx.VIDEO_ID;
const URL_ = `https://www.tiktok.com/@illojuan/video/${ID}`;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

async function images() {
  for (const p of ['avatar_large.jpeg', 'origin_cover.jpeg', 'oembed_cover.jpeg']) w.server.route(`/p16.tiktokcdn.com/${p}`, await image(36, 64));
}

describe('URL forms', () => {
  test.each([
    [URL_, 'video'],
    [`https://tiktok.com/@illojuan/video/${ID}?is_from_webapp=1`, 'video'],
    [`https://m.tiktok.com/v/${ID}.html`, 'video'],
    [`https://www.tiktok.com/embed/v2/${ID}`, 'video'],
    [`https://www.tiktok.com/@illojuan/photo/${ID}`, 'video'],
    ['https://www.tiktok.com/@illojuan', 'user'],
    ['https://www.tiktok.com/@illo.juan_/', 'user'],
  ])('%s is a %s', (u, kind) => {
    expect(matchTiktok(new URL(u))?.kind).toBe(kind);
  });
  test.each(['https://www.tiktok.com/foryou', 'https://www.tiktok.com/tag/x', 'https://vm.tiktok.com/ZMabc123/'])(
    '%s is not matched (short links are followed first)',
    (u) => {
      expect(matchTiktok(new URL(u))).toBeUndefined();
    },
  );

  test.each(['vm', 'vt'])('a %s.tiktok.com short link is followed and previewed as the video', async (sub) => {
    await images();
    w.server.route(`/${sub}.tiktok.com/ZMabc123/`, redirect(`/www.tiktok.com/@illojuan/video/${ID}?_r=1`));
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page(fx.videoPage()));
    const r = await w.preview(`https://${sub}.tiktok.com/ZMabc123/`);
    expect(r).toMatchObject({ ok: true, type: 'CLIPS_VIDEO', redirected: true });
    expect(r.clipsVideo.text).toBe('La nueva locurilla de fin de año 🔥');
    // the page fetched by the redirect is reused, not fetched twice
    expect(w.seen().filter((s) => s.url.includes(`/video/${ID}`))).toHaveLength(1);
  });
});

describe('videos', () => {
  test('__UNIVERSAL_DATA_FOR_REHYDRATION__: text, time, counts, cover, user with stats', async () => {
    await images();
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page(fx.videoPage()));
    const r = await w.preview(URL_);
    expect(r).toMatchObject({ ok: true, type: 'CLIPS_VIDEO', title: 'IlloJuan on TikTok', description: 'La nueva locurilla de fin de año 🔥' });
    const v = r.clipsVideo;
    expect(v).toMatchObject({
      text: 'La nueva locurilla de fin de año 🔥',
      publishedAt: '2025-11-12T15:36:23.000Z',
      playsCount: 192100,
      likesCount: 25500,
      commentsCount: 146,
      sharesCount: 2156,
    });
    expect(typeof v.id).toBe('number');
    expect(v.media).toHaveLength(1);
    expect(v.media[0]).toMatchObject({ width: 36, height: 64 });
    expect(v.user).toMatchObject({
      username: 'illojuan',
      name: 'IlloJuan',
      bio: 'Saludos desde Almería',
      verified: true,
      visibility: 'PUBLIC',
      followersCount: 783400,
      followingCount: 3,
      likesCount: 3900000,
      url: 'https://www.tiktok.com/@illojuan',
    });
    expect(v.user.avatar).toBeDefined();
    expect(r.image.original.url).toBe(v.media[0].original.url);
    expect(String(w.seen()[0].headers['user-agent'])).toMatch(/facebookexternalhit/);
  });

  test('SIGI_STATE (older pages)', async () => {
    await images();
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page(fx.sigiVideoPage()));
    const r = await w.preview(URL_);
    expect(r.clipsVideo).toMatchObject({ playsCount: 192100, likesCount: 25500, user: { username: 'illojuan', followersCount: 783400 } });
  });

  test('oEmbed when the page has no data: text, author, cover, time from the id', async () => {
    await images();
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page('<html><head><title>TikTok - Make Your Day</title></head><body></body></html>'));
    w.server.route('/www.tiktok.com/oembed', json(fx.oembed()));
    const r = await w.preview(URL_);
    expect(r).toMatchObject({ ok: true, type: 'CLIPS_VIDEO', title: 'IlloJuan on TikTok' });
    expect(r.clipsVideo).toMatchObject({
      text: 'La nueva locurilla de fin de año 🔥',
      publishedAt: clipsIdTime(ID),
      user: { username: 'illojuan', name: 'IlloJuan' },
    });
    expect(r.clipsVideo.media).toHaveLength(1);
  });

  test('a removed video is ok:false 404', async () => {
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page(fx.removedVideoPage()));
    const r = await w.preview(URL_);
    expect(r).toMatchObject({ ok: false, type: 'CLIPS_VIDEO', status: 404 });
    expect(r.title).toBeUndefined();
  });

  test('a private video is ok:false 403', async () => {
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page(fx.privateVideoPage()));
    const r = await w.preview(URL_);
    expect(r).toMatchObject({ ok: false, type: 'CLIPS_VIDEO', status: 403 });
  });

  test('blocked page and no oEmbed: the generic preview', async () => {
    w.server.route(`/www.tiktok.com/@illojuan/video/${ID}`, page('<html><head><title>Access Denied</title></head></html>', 403));
    const r = await w.preview(URL_);
    // The generic preview of the page: a PAGE record with the status seen, not a video.
    expect(r).toMatchObject({
      ok: false,
      type: 'PAGE',
      status: 403,
      url: URL_,
      domain: 'tiktok.com',
      redirected: false,
      redirectionCount: 0,
      redirectionTrail: [URL_],
    });
    // "Access Denied" on a 403 is the wall's placeholder (lib/extract/walls.ts), not the page's title.
    expect(r.title).toBeUndefined();
    expect(r.clipsVideo).toBeUndefined();
  });
});

describe('users', () => {
  test('webapp.user-detail: every field', async () => {
    await images();
    w.server.route('/www.tiktok.com/@illojuan', page(fx.userPage()));
    const r = await w.preview('https://www.tiktok.com/@illojuan');
    expect(r).toMatchObject({ ok: true, type: 'CLIPS_USER', title: 'IlloJuan (@illojuan) | TikTok', description: 'Saludos desde Almería' });
    expect(r.clipsUser).toMatchObject({
      username: 'illojuan',
      name: 'IlloJuan',
      verified: true,
      visibility: 'PUBLIC',
      followersCount: 783400,
      followingCount: 3,
      likesCount: 3900000,
    });
    expect(r.clipsUser.avatar).toBeDefined();
  });
  test('a private account', async () => {
    await images();
    w.server.route('/www.tiktok.com/@illojuan', page(fx.userPage(true)));
    const r = await w.preview('https://www.tiktok.com/@illojuan');
    expect(r.clipsUser.visibility).toBe('PRIVATE');
  });
});
