/**
 * X (platform `microblog`): every URL form, each source (syndication, oEmbed, bot HTML, profile timeline)
 * and each field mapping, deleted/protected posts and the login wall, on loopback fixtures.
 */

import { readdirSync } from 'node:fs';
import { loadConfig } from '../../../lib/config';
import { matchX } from '../../../lib/platforms/x/index';
import { syndicationToken } from '../../../lib/platforms/x/post';
import { mp4 } from '../../media-types/fixtures';
import * as fx from '../fixtures/x';
import { image, json, page, redirect, startWorld, type World } from '../harness';

const ID = fx.POST_ID;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

async function images() {
  for (const p of [
    '/pbs.twimg.com/media/PhotoOne.jpg',
    '/pbs.twimg.com/media/PhotoTwo.jpg',
    '/pbs.twimg.com/profile_images/111/jane_400x400.jpg',
    '/pbs.twimg.com/media/CrawlerPhoto.jpg:large',
    '/pbs.twimg.com/ext_tw_video_thumb/1/pu/img/Poster.jpg',
    '/pbs.twimg.com/profile_banners/12345/1600000000/1500x500',
  ]) {
    w.server.route(p, await image(60, 40));
  }
}

describe('a metadata-only host rule', () => {
  test('the post and its fields, none of its media hosted or stored', async () => {
    const { hostRules } = loadConfig({ LINKPREVIEW_HOST_RULES: 'x.com=metadata-only' });
    const closed = await startWorld({ config: { hostRules } });
    try {
      for (const path of ['/pbs.twimg.com/media/PhotoOne.jpg', '/pbs.twimg.com/media/PhotoTwo.jpg', '/pbs.twimg.com/profile_images/111/jane_400x400.jpg'])
        closed.server.route(path, await image(60, 40));
      closed.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationPhoto()));
      const r = await closed.preview(`https://x.com/jane/status/${ID}`);
      expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_POST', siteName: 'X', themeColor: '#000000', author: { name: 'Jane Doe' } });
      expect(r.microblogPost.text).toContain('Our release notes');
      expect(r.image).toBeUndefined();
      expect(r.microblogPost.media ?? []).toHaveLength(0);
      // Nothing of the site was asked for or stored.
      expect(closed.asked().filter((a) => a.startsWith('/pbs.twimg.com/'))).toEqual([]);
      expect(readdirSync(closed.handler.config.dataDir, { recursive: true }).filter((f) => String(f).includes('.'))).toEqual([]);
    } finally {
      await closed.close();
    }
  });
});

describe('URL forms', () => {
  test.each([
    ['https://x.com/jane/status/1580000000000000001', 'post'],
    ['https://twitter.com/jane/status/1580000000000000001?s=20', 'post'],
    ['https://mobile.twitter.com/jane/status/1580000000000000001', 'post'],
    ['https://www.twitter.com/jane/statuses/1580000000000000001', 'post'],
    ['https://x.com/jane/status/1580000000000000001/photo/1', 'post'],
    ['https://x.com/i/web/status/1580000000000000001', 'post'],
    ['https://x.com/jane', 'user'],
    ['https://twitter.com/jane/', 'user'],
    ['https://mobile.twitter.com/jane', 'user'],
  ])('%s is a %s', (u, kind) => {
    const m = matchX(new URL(u));
    expect(m?.kind).toBe(kind);
    if (kind === 'post') expect(m?.ids.postId).toBe(ID);
    else expect(m?.ids.username).toBe('jane');
  });

  test.each([
    'https://x.com/home',
    'https://x.com/explore',
    'https://x.com/i/flow/login',
    'https://x.com/search?q=a',
    'https://dev.twitter.com/',
    'https://x.com/jane/likes',
    'https://example.com/jane/status/1',
  ])('%s is not matched', (u) => {
    expect(matchX(new URL(u))).toBeUndefined();
  });

  test('the syndication token is derived from the id as the widget does', () => {
    expect(syndicationToken('1222907250383245320')).toBe('2ypvjuw9yg9');
  });

  test('a t.co link is followed and previewed as the post it redirects to', async () => {
    await images();
    w.server.route('/t.co/AbC123', redirect(`/x.com/jane/status/${ID}`));
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationPhoto()));
    const r = await w.preview('https://t.co/AbC123');
    expect(r.type).toBe('MICROBLOG_POST');
    expect(r.ok).toBe(true);
    expect(r.redirected).toBe(true);
    expect(r.redirectionTrail).toEqual(['https://t.co/AbC123', `https://x.com/jane/status/${ID}`]);
    expect(r.microblogPost.text).toContain('Our release notes');
  });
});

describe('posts from the syndication endpoint', () => {
  test('text, dates, counts, user and photos', async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationPhoto()));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_POST', status: 200, title: 'Jane Doe (@jane) on X', language: 'en' });
    const p = r.microblogPost;
    expect(typeof p.id).toBe('number');
    // display_text_range drops the trailing media link; t.co links are expanded.
    expect(p.text).toBe('Our release notes at https://example.org/post \u{1F680}');
    expect(r.description).toBe(p.text);
    expect(p.createdAt).toBe('2022-10-12T08:30:00.000Z');
    expect(p.publishedAt).toBe('2022-10-12T08:30:00.000Z');
    expect(p).toMatchObject({ likesCount: 1234, commentsCount: 56, repostsCount: 78, quotesCount: 9 });
    expect(p.user).toMatchObject({ username: 'jane', name: 'Jane Doe', verified: true });
    expect(p.user.avatar.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(p.media).toHaveLength(2);
    expect(p.media[0]).toMatchObject({ width: 60, height: 40, format: 'png', alt: 'A paper kite on a blue sky' });
    expect(p.media[1].alt).toBeUndefined();
    expect(r.image.original.url).toBe(p.media[0].original.url);
    // The post's first photo is the record's image, its alt text with it.
    expect(r.image.alt).toBe('A paper kite on a blue sky');
    const synd = w.seen().find((s) => s.url.includes('tweet-result'))!;
    expect(synd.url).toContain(`id=${ID}`);
    expect(synd.url).toContain(`token=${syndicationToken(ID)}`);
    // The photo's large rendition was asked for.
    expect(w.seen().some((s) => s.url.endsWith('PhotoOne.jpg?name=large'))).toBe(true);
  });

  test('the same post keeps the same ids', async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationPhoto()));
    const a = await w.preview(`https://x.com/jane/status/${ID}`);
    const b = await w.preview(`https://twitter.com/jane/status/${ID}`);
    expect(a.microblogPost.id).toBe(b.microblogPost.id);
    expect(a.microblogPost.user.id).toBe(b.microblogPost.user.id);
  });

  test('a video: the best MP4 variant is probed into a Video with the poster as its image', async () => {
    await images();
    const best = await mp4({ seconds: 2, width: 320, height: 240 });
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationVideo()));
    w.server.route('/video.twimg.com/ext_tw_video/1/pu/vid/320x240/best.mp4', { status: 200, headers: { 'content-type': 'video/mp4' }, body: best });
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    const v = r.microblogPost.media[0];
    expect(v).toMatchObject({ width: 320, height: 240, videoCodec: 'h264', hasAudio: true });
    expect(v.duration).toBeCloseTo(2, 0);
    expect(v.image.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(w.seen().some((s) => s.url.includes('low.mp4'))).toBe(false);
    expect(r.image).toBeDefined();
  }, 30_000);

  test('a video that cannot be probed is represented by its poster image', async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.syndicationVideo()));
    // best.mp4 is a 404 on the fixture server
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r.microblogPost.media).toHaveLength(1);
    expect(r.microblogPost.media[0]).toMatchObject({ format: 'png', width: 60 });
  }, 30_000);

  test('a tombstone (protected or withheld post) is ok:false with no invented content', async () => {
    w.server.route('/cdn.syndication.twimg.com/tweet-result', json(fx.TOMBSTONE));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: false, type: 'MICROBLOG_POST', status: 404 });
    expect(r.title).toBeUndefined();
    expect(r.microblogPost).toBeUndefined();
  });

  test('a deleted post (syndication 404, oEmbed 404) is ok:false with status 404', async () => {
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 404, body: '' });
    w.server.route('/publish.twitter.com/oembed', json({ error: 'not found' }, 404));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: false, type: 'MICROBLOG_POST', status: 404 });
    expect(r.title).toBeUndefined();
  });

  test('a protected post (oEmbed 403) is ok:false with status 403', async () => {
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 404, body: '' });
    w.server.route('/publish.twitter.com/oembed', json({ error: 'forbidden' }, 403));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: false, type: 'MICROBLOG_POST', status: 403 });
  });
});

describe('post fallbacks', () => {
  test('oEmbed: text, day, user name and username; the time from the id', async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 500, body: 'oops' });
    w.server.route('/publish.twitter.com/oembed', json(fx.oembed()));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_POST', title: 'Jane Doe (@jane) on X', language: 'en' });
    expect(r.microblogPost.text).toBe('Hello & welcome example.org');
    expect(r.microblogPost.user).toMatchObject({ name: 'Jane Doe', username: 'jane' });
    // The time comes from the id (a snowflake), the day from the oEmbed date.
    expect(r.microblogPost.createdAt).toBe(new Date(Number(BigInt(ID) >> 22n) + 1288834974657).toISOString());
    const oe = w.seen().find((s) => s.url.includes('/oembed'))!;
    expect(decodeURIComponent(oe.url)).toContain(`https://twitter.com/jane/status/${ID}`);
  });

  test('bot HTML: og:title gives name and username, og:description the text, og:image the media', async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 503, body: '' });
    w.server.route(`/x.com/jane/status/${ID}`, page(fx.crawlerPost()));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_POST', title: 'Jane Doe (@jane) on X', description: 'Bot-page text of the post \u{1F680}' });
    expect(r.microblogPost.user).toMatchObject({ name: 'Jane Doe', username: 'jane' });
    expect(r.microblogPost.media).toHaveLength(1);
    expect(r.microblogPost.createdAt).toMatch(/^20\d\d-/);
    expect(r.language).toBe('en');
    // The bot page was asked for with the preview-bot User-Agent.
    const req = w.seen().find((s) => s.url === `https://x.com/jane/status/${ID}`)!;
    expect(String(req.headers['user-agent'])).toMatch(/Twitterbot/);
  });

  test("rendered bot HTML with X's generic og:image: the post's own media comes from the markup", async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 503, body: '' });
    w.server.route(
      `/x.com/jane/status/${ID}`,
      page(`<html lang="en"><head><title>Jane Doe on X: "Look at this" / X</title>
      <meta property="og:title" content="Jane Doe on X: &quot;Look at this&quot; / X">
      <meta property="og:image" content="https://abs.twimg.com/rweb/ssr/default/v2/og/image.png"></head>
      <body><img src="https://pbs.twimg.com/profile_images/111/jane_normal.jpg"><div style="background-image: url(&quot;https://pbs.twimg.com/media/PhotoOne.jpg&quot;);"></div>
      <img src="https://pbs.twimg.com/media/PhotoTwo.jpg"></body></html>`),
    );
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r.type).toBe('MICROBLOG_POST');
    expect(r.microblogPost.media).toHaveLength(1);
    expect(w.seen().some((x) => x.url === 'https://pbs.twimg.com/media/PhotoOne.jpg')).toBe(true);
    expect(w.seen().some((x) => x.url.startsWith('https://abs.twimg.com/rweb/'))).toBe(false);
    expect(r.image.original.url).toMatch(/^http:\/\/assets\.test\//);
  });

  test("rendered bot HTML of a text-only post: the declared og:image (X's generic card) is the image", async () => {
    await images();
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 503, body: '' });
    w.server.route('/abs.twimg.com/rweb/ssr/default/v2/og/image.png', await image(120, 63));
    w.server.route(
      `/x.com/jane/status/${ID}`,
      page(`<html lang="en"><head><title>Jane Doe on X: "Just words" / X</title>
      <meta property="og:title" content="Jane Doe on X: &quot;Just words&quot; / X">
      <meta property="og:image" content="https://abs.twimg.com/rweb/ssr/default/v2/og/image.png"></head><body><p>Just words</p></body></html>`),
    );
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    expect(r).toMatchObject({ type: 'MICROBLOG_POST', description: 'Just words' });
    expect(r.microblogPost.media).toBeUndefined();
    expect(w.seen().some((x) => x.url === 'https://abs.twimg.com/rweb/ssr/default/v2/og/image.png')).toBe(true);
    expect(r.image.original.url).toMatch(/^http:\/\/assets\.test\//);
  });

  test('the login wall falls back to the generic preview, marked ok:false, never as a post', async () => {
    w.server.route('/cdn.syndication.twimg.com/tweet-result', { status: 503, body: '' });
    w.server.route(`/x.com/jane/status/${ID}`, redirect('/x.com/i/flow/login?redirect_after_login=%2Fjane'));
    w.server.route('/x.com/i/flow/login', page('<html><head><title>Log in to X / X</title></head><body></body></html>'));
    const r = await w.preview(`https://x.com/jane/status/${ID}`);
    // The generic preview of where the link led: a PAGE record with the status seen, marked ok:false, never
    // with the sign-in page's title (a sign-in wall, lib/extract/walls.ts).
    const login = 'https://x.com/i/flow/login?redirect_after_login=%2Fjane';
    expect(r.title).toBeUndefined();
    expect(r).toMatchObject({
      ok: false,
      type: 'PAGE',
      status: 200,
      url: `https://x.com/jane/status/${ID}`,
      domain: 'x.com',
      redirected: true,
      redirectionUrl: login,
      redirectionCount: 1,
      redirectionTrail: [`https://x.com/jane/status/${ID}`, login],
    });
    expect(r.microblogPost).toBeUndefined();
  });
});

describe('users', () => {
  test('from the profile timeline: every user field', async () => {
    await images();
    w.server.route('/syndication.twitter.com/srv/timeline-profile/screen-name/jane', page(fx.timelineProfile()));
    const r = await w.preview('https://x.com/jane');
    expect(r).toMatchObject({
      ok: true,
      type: 'MICROBLOG_USER',
      title: 'Jane Doe (@jane) on X',
      description: 'Release engineer. Blog: https://blog.example.org',
    });
    const u = r.microblogUser;
    expect(u).toMatchObject({
      username: 'jane',
      name: 'Jane Doe',
      bio: 'Release engineer. Blog: https://blog.example.org',
      url: 'https://jane.example.org',
      location: 'Lisbon',
      verified: true,
      protected: false,
      sensitive: false,
      followersCount: 4321,
      followingCount: 210,
      postsCount: 9876,
      joinedAt: '2012-03-21T20:50:14.000Z',
    });
    expect(u.avatar.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(u.cover.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(r.image.original.url).toBe(u.avatar.original.url);
  });

  test('a protected account', async () => {
    await images();
    w.server.route('/syndication.twitter.com/srv/timeline-profile/screen-name/jane', page(fx.timelineProfile({ ...fx.timelineUser(), protected: true })));
    const r = await w.preview('https://twitter.com/jane');
    expect(r.microblogUser.protected).toBe(true);
  });

  test("rendered profile HTML with X's generic og:image: the avatar is the header's large profile image", async () => {
    await images();
    w.server.route('/syndication.twitter.com/srv/timeline-profile/screen-name/jane', page(fx.timelineProfile({ screen_name: 'someone_else' })));
    w.server.route(
      '/x.com/jane',
      page(`<html lang="en"><head><title>Jane Doe (@jane) / X</title>
      <meta property="og:title" content="Jane Doe (@jane) / X">
      <meta property="og:image" content="https://abs.twimg.com/rweb/ssr/default/v2/og/image.png"></head>
      <body><img src="https://pbs.twimg.com/profile_images/999/someone_normal.jpg"><img src="https://pbs.twimg.com/profile_images/111/jane_400x400.jpg"></body></html>`),
    );
    const r = await w.preview('https://x.com/jane');
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_USER' });
    expect(r.microblogUser.avatar).toBeDefined();
    expect(w.seen().some((x) => x.url === 'https://pbs.twimg.com/profile_images/111/jane_400x400.jpg')).toBe(true);
    expect(w.seen().some((x) => x.url.includes('someone_normal'))).toBe(false);
  });

  test('rendered profile HTML without og:description: bio, counters and join date from its ProfilePage schema', async () => {
    await images();
    w.server.route('/syndication.twitter.com/srv/timeline-profile/screen-name/jane', page(fx.timelineProfile({ screen_name: 'someone_else' })));
    const schema = (who: string, bio: string) =>
      JSON.stringify({
        '@context': 'http://schema.org',
        '@type': 'ProfilePage',
        dateCreated: '2010-01-02T11:14:31.000Z',
        mainEntity: {
          '@type': 'Person',
          additionalName: who,
          description: `${bio}  \nSecond line`,
          homeLocation: { '@type': 'Place', name: 'Lisbon' },
          image: { '@type': 'ImageObject', contentUrl: 'https://pbs.twimg.com/profile_images/111/jane_400x400.jpg' },
          interactionStatistic: [
            { '@type': 'InteractionCounter', interactionType: 'https://schema.org/FollowAction', name: 'Follows', userInteractionCount: 3893 },
            { '@type': 'InteractionCounter', interactionType: 'https://schema.org/SubscribeAction', name: 'Friends', userInteractionCount: 406 },
            { '@type': 'InteractionCounter', interactionType: 'https://schema.org/WriteAction', name: 'Tweets', userInteractionCount: 23961 },
          ],
        },
      });
    w.server.route(
      '/x.com/jane',
      page(`<html lang="en"><head><title>Jane Doe (@jane) / X</title>
      <meta property="og:title" content="Jane Doe (@jane) / X">
      <script type="application/ld+json">${schema('someone_else', 'Not Jane')}</script>
      <script type="application/ld+json">${schema('Jane', 'Release engineering & tea')}</script></head><body></body></html>`),
    );
    const r = await w.preview('https://x.com/jane');
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_USER', description: 'Release engineering & tea\nSecond line' });
    expect(r.microblogUser).toMatchObject({
      username: 'jane',
      bio: 'Release engineering & tea\nSecond line',
      location: 'Lisbon',
      followersCount: 3893,
      followingCount: 406,
      postsCount: 23961,
      joinedAt: '2010-01-02T11:14:31.000Z',
    });
    expect(w.seen().some((x) => x.url === 'https://pbs.twimg.com/profile_images/111/jane_400x400.jpg')).toBe(true);
  });

  test('from the bot HTML when the timeline has nothing', async () => {
    await images();
    w.server.route('/syndication.twitter.com/srv/timeline-profile/screen-name/jane', page(fx.timelineProfile({ screen_name: 'someone_else' })));
    w.server.route('/x.com/jane', page(fx.crawlerProfile()));
    const r = await w.preview('https://x.com/jane');
    expect(r).toMatchObject({ ok: true, type: 'MICROBLOG_USER', title: 'Jane Doe (@jane) on X' });
    expect(r.microblogUser).toMatchObject({ username: 'jane', name: 'Jane Doe', bio: 'Writes about release engineering.' });
    expect(r.microblogUser.avatar).toBeDefined();
    // the 200x200 og:image is swapped for the 400x400 rendition
    expect(w.seen().some((s) => s.url.endsWith('jane_400x400.jpg'))).toBe(true);
  });
});
