/** Instagram (platform `photoshare`): URL forms, og description parsing, the embed page, profiles and the login wall. */
import { matchInstagram } from '../../../lib/platforms/instagram/index';
import { parsePostDescription, shortcodeTime } from '../../../lib/platforms/instagram/post';
import { parseProfileDescription } from '../../../lib/platforms/instagram/user';
import * as fx from '../fixtures/instagram';
import { image, page, redirect, startWorld, type World } from '../harness';

const CODE = fx.CODE;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

async function images() {
  for (const p of ['post_cover.jpg', 'first.jpg', 'second.jpg', 'avatar.jpg', 'avatar2.jpg', 'embed_photo.jpg', 'profile_pic.jpg']) {
    w.server.route(`/scontent.cdninstagram.com/v/${p}`, await image(50, 50));
    w.server.route(`/scontent.cdninstagram.com/v/t51.29350-15/${p}`, await image(50, 50));
  }
  w.server.route('/scontent.cdninstagram.com/t51.2885-15/e35/old_photo.jpg', await image(50, 50));
}

describe('URL forms', () => {
  test.each([
    [`https://www.instagram.com/p/${CODE}/`, 'post'],
    [`https://instagram.com/p/${CODE}`, 'post'],
    [`https://www.instagram.com/reel/${CODE}/?igsh=abc`, 'post'],
    [`https://www.instagram.com/reels/${CODE}/`, 'post'],
    [`https://www.instagram.com/tv/${CODE}/`, 'post'],
    [`https://www.instagram.com/jaimelorentelo/p/${CODE}/`, 'post'],
    ['https://www.instagram.com/teslamotors/', 'user'],
    ['https://m.instagram.com/teslamotors', 'user'],
  ])('%s is a %s', (u, kind) => {
    expect(matchInstagram(new URL(u))?.kind).toBe(kind);
  });
  test.each([
    'https://www.instagram.com/accounts/login/',
    'https://www.instagram.com/explore/tags/x/',
    'https://www.instagram.com/',
    'https://www.instagram.com/stories/x/1/',
  ])('%s is not matched', (u) => {
    expect(matchInstagram(new URL(u))).toBeUndefined();
  });
});

describe('parsers', () => {
  test('the post description: counts, username, day, caption', () => {
    expect(parsePostDescription('152K likes, 784 comments - jaimelorentelo on April 19, 2021: "Nuevo proyecto". ')).toEqual({
      likesCount: 152000,
      commentsCount: 784,
      username: 'jaimelorentelo',
      publishedAt: '2021-04-19T00:00:00.000Z',
      text: 'Nuevo proyecto',
    });
    expect(parsePostDescription('1,234 likes, 5 comments - a.b_c on March 3, 2020')).toMatchObject({ likesCount: 1234, commentsCount: 5, username: 'a.b_c' });
    expect(parsePostDescription('See this Instagram photo by @minaalofficial • 105 likes')).toEqual({ username: 'minaalofficial', likesCount: 105 });
  });
  test('the profile description', () => {
    expect(parseProfileDescription('1M Followers, 12 Following, 1,234 Posts - See Instagram photos and videos from Tesla (@teslamotors)')).toEqual({
      followersCount: 1_000_000,
      followingCount: 12,
      postsCount: 1234,
      name: 'Tesla',
      username: 'teslamotors',
    });
    expect(parseProfileDescription('2.5K Followers, 300 Following, 42 Posts')).toMatchObject({ followersCount: 2500 });
  });
  test('the profile meta description: "… - Name (@handle) on Instagram: "bio""', () => {
    expect(
      parseProfileDescription('1M Followers, 12 Following, 1,234 Posts - Tesla (@teslamotors) on Instagram: "Electric cars, giant batteries and solar"'),
    ).toEqual({
      followersCount: 1_000_000,
      followingCount: 12,
      postsCount: 1234,
      name: 'Tesla',
      username: 'teslamotors',
      bio: 'Electric cars, giant batteries and solar',
    });
    // curly quotes, a bio over several lines with quotes of its own, a name with brackets
    expect(parseProfileDescription('52 Followers, 3 Following, 0 Posts - Ana (Art) (@ana.art) on Instagram: “Painter.\nSays "hi"”')).toEqual({
      followersCount: 52,
      followingCount: 3,
      postsCount: 0,
      name: 'Ana (Art)',
      username: 'ana.art',
      bio: 'Painter.\nSays "hi"',
    });
    // no name
    expect(parseProfileDescription('52 Followers, 3 Following, 0 Posts - @ana.art on Instagram: "Painter"')).toEqual({
      followersCount: 52,
      followingCount: 3,
      postsCount: 0,
      username: 'ana.art',
      bio: 'Painter',
    });
  });
  test('the time in a shortcode', () => {
    expect(shortcodeTime('BWUDBntl3_Z')).toBe('2017-07-09T04:58:10.000Z');
  });
});

describe('posts', () => {
  test('from the og tags: text, counts, user, date and media', async () => {
    await images();
    w.server.route(`/www.instagram.com/p/${CODE}/`, page(fx.ogPost()));
    w.server.route(`/www.instagram.com/p/${CODE}/embed/captioned/`, page(fx.embedWithJson()));
    const r = await w.preview(`https://www.instagram.com/p/${CODE}/`);
    expect(r).toMatchObject({ ok: true, type: 'PHOTOSHARE_POST', title: 'Jaime Lorente on Instagram: "Nuevo proyecto"' });
    const p = r.photosharePost;
    expect(p).toMatchObject({ text: 'Nuevo proyecto 🎬 gracias a todos', likesCount: 152000, commentsCount: 784 });
    // the top-level description is Instagram's own summary, as every preview shows it; the caption is the post's text
    expect(r.description).toBe('152K likes, 784 comments - jaimelorentelo on April 19, 2021: "Nuevo proyecto 🎬 gracias a todos".');
    // the exact time from the embed data replaces the day of the og description
    expect(p.publishedAt).toBe('2021-04-19T06:18:23.000Z');
    expect(p.user).toMatchObject({ username: 'jaimelorentelo', name: 'Jaime Lorente', verified: true });
    expect(p.user.avatar).toBeDefined();
    expect(p.media).toHaveLength(1);
    expect(r.image).toBeDefined();
    expect(String(w.seen().find((s) => s.url.includes(`/p/${CODE}/`))!.headers['user-agent'])).toMatch(/facebookexternalhit/);
  });

  test('the old og form: "See this Instagram photo by @user • N likes" and the date from the title', async () => {
    await images();
    w.server.route(`/www.instagram.com/p/${CODE}/`, page(fx.oldOgPost()));
    w.server.route(`/www.instagram.com/p/${CODE}/embed/captioned/`, { status: 404, body: '' });
    const r = await w.preview(`https://www.instagram.com/p/${CODE}/`);
    expect(r.photosharePost).toMatchObject({
      likesCount: 105,
      publishedAt: '2016-06-19T04:04:00.000Z',
      user: { username: 'minaalofficial', name: 'Minaal', verified: false },
    });
    // no caption in this form: the record's description is the og description itself
    expect(r.description).toBe('See this Instagram photo by @minaalofficial • 105 likes');
  });

  test('the login redirect falls back to the embed page (JSON): counts, exact time, carousel media', async () => {
    await images();
    w.server.route(`/www.instagram.com/reel/${CODE}/`, redirect('/www.instagram.com/accounts/login/?next=%2Freel%2F'));
    w.server.route('/www.instagram.com/accounts/login/', page(fx.LOGIN_PAGE));
    w.server.route(`/www.instagram.com/p/${CODE}/embed/captioned/`, page(fx.embedWithJson()));
    const r = await w.preview(`https://www.instagram.com/reel/${CODE}/`);
    expect(r).toMatchObject({ ok: true, type: 'PHOTOSHARE_POST' });
    expect(r.title).not.toMatch(/Login/);
    expect(r.photosharePost).toMatchObject({ text: 'Nuevo proyecto 🎬', likesCount: 152345, commentsCount: 784, publishedAt: '2021-04-19T06:18:23.000Z' });
    expect(r.photosharePost.media).toHaveLength(2);
  });

  test('the embed page HTML: caption, username, image, likes', async () => {
    await images();
    w.server.route(`/www.instagram.com/p/${CODE}/`, page(fx.LOGIN_PAGE));
    w.server.route(`/www.instagram.com/p/${CODE}/embed/captioned/`, page(fx.embedHtmlOnly()));
    const r = await w.preview(`https://www.instagram.com/p/${CODE}/`);
    expect(r.photosharePost).toMatchObject({ text: 'Packing for the trip\n#travel', likesCount: 1050, user: { username: 'minaalofficial' } });
    expect(r.photosharePost.publishedAt).toBe(shortcodeTime(CODE));
    expect(r.photosharePost.media).toHaveLength(1);
  });

  test('login wall and no embed: ok:false, never "Login • Instagram"', async () => {
    w.server.route(`/www.instagram.com/p/${CODE}/`, redirect('/www.instagram.com/accounts/login/'));
    w.server.route('/www.instagram.com/accounts/login/', page(fx.LOGIN_PAGE));
    const r = await w.preview(`https://www.instagram.com/p/${CODE}/`);
    expect(r).toMatchObject({ ok: false, type: 'PHOTOSHARE_POST' });
    expect(r.title).toBeUndefined();
    expect(JSON.stringify(r)).not.toMatch(/Login • Instagram/);
  });
});

describe('users', () => {
  test('counts from the og description, name, avatar, verified, bio, url, visibility', async () => {
    await images();
    w.server.route('/www.instagram.com/teslamotors/', page(fx.profile()));
    const r = await w.preview('https://www.instagram.com/teslamotors/');
    expect(r).toMatchObject({ ok: true, type: 'PHOTOSHARE_USER', title: 'Tesla (@teslamotors) • Instagram photos and videos' });
    expect(r.photoshareUser).toMatchObject({
      username: 'teslamotors',
      name: 'Tesla',
      verified: true,
      followersCount: 1_000_000,
      followingCount: 12,
      postsCount: 1234,
      visibility: 'PUBLIC',
      bio: 'Electric cars, giant batteries and solar',
      url: 'https://www.tesla.com/',
    });
    expect(r.photoshareUser.avatar).toBeDefined();
  });

  test('the bio from the meta description when only it carries one (og:description has none)', async () => {
    await images();
    w.server.route('/www.instagram.com/teslamotors/', page(fx.profile({ metaBio: 'Accelerating the world’s transition to sustainable energy' })));
    const r = await w.preview('https://www.instagram.com/teslamotors/');
    expect(r).toMatchObject({
      ok: true,
      type: 'PHOTOSHARE_USER',
      description: '1M Followers, 12 Following, 1,234 Posts - See Instagram photos and videos from Tesla (@teslamotors)',
    });
    expect(r.photoshareUser).toMatchObject({
      username: 'teslamotors',
      name: 'Tesla',
      followersCount: 1_000_000,
      bio: 'Accelerating the world’s transition to sustainable energy',
    });
  });

  test('a private account', async () => {
    await images();
    w.server.route('/www.instagram.com/teslamotors', page(fx.profile({ priv: true })));
    const r = await w.preview('https://www.instagram.com/teslamotors');
    expect(r.photoshareUser.visibility).toBe('PRIVATE');
  });

  test('the login redirect is ok:false', async () => {
    w.server.route('/www.instagram.com/teslamotors/', redirect('/www.instagram.com/accounts/login/'));
    w.server.route('/www.instagram.com/accounts/login/', page(fx.LOGIN_PAGE));
    const r = await w.preview('https://www.instagram.com/teslamotors/');
    expect(r).toMatchObject({ ok: false, type: 'PHOTOSHARE_USER' });
    expect(r.title).toBeUndefined();
  });
});
