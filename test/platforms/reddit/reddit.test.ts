/** Reddit (platform `forum`): URL forms, posts, share links, communities and users, and what is gone, from the `.json` endpoints. */
import { stableId } from '../../../lib/ids';
import { matchReddit } from '../../../lib/platforms/reddit/index';
import { postType } from '../../../lib/platforms/reddit/post';
import { image, json, page, redirect, startWorld, type World } from '../harness';

// The platform's sources on hosts of their own (the harness maps every host onto the fixture
// server): they answer under /<host>/..., apart from the generic fetch of the same link.
const SOURCES = { LINKPREVIEW_REDDIT_BASE_URL: 'https://rd' };

function listing(post: Record<string, unknown>) {
  return [
    { kind: 'Listing', data: { after: null, dist: 1, children: [{ kind: 't3', data: post }], before: null } },
    { kind: 'Listing', data: { after: null, children: [] } },
  ];
}

function basePost(origin: string, over: Record<string, unknown> = {}) {
  return {
    id: 'k1t3x9',
    name: 't3_k1t3x9',
    title: 'My first paper kite flew for an hour',
    subreddit: 'kites',
    subreddit_id: 't5_2qh0k',
    subreddit_name_prefixed: 'r/kites',
    subreddit_type: 'public',
    subreddit_subscribers: 51234,
    author: 'windfolder',
    author_fullname: 't2_abc12',
    selftext: 'Used 80gsm paper and bamboo skewers.',
    created_utc: 1717236000,
    edited: 1717239600,
    score: 812,
    ups: 812,
    num_comments: 64,
    over_18: false,
    is_self: true,
    is_video: false,
    post_hint: 'self',
    permalink: '/r/kites/comments/k1t3x9/my_first_paper_kite/',
    url: 'https://www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/',
    removed_by_category: null,
    preview: { images: [{ source: { url: `${origin}/img/preview.png?width=640&amp;s=abc`, width: 640, height: 480 } }] },
    ...over,
  };
}

function about(origin: string) {
  return {
    kind: 't5',
    data: {
      display_name: 'kites',
      name: 't5_2qh0k',
      title: 'Kites and kite flying',
      display_name_prefixed: 'r/kites',
      public_description: 'Everything about kites.',
      subscribers: 51234,
      active_user_count: 87,
      accounts_active: 87,
      created_utc: 1201233135,
      over18: false,
      subreddit_type: 'public',
      community_icon: `${origin}/img/icon.png?width=256&amp;s=1`,
      banner_background_image: `${origin}/img/banner.png`,
    },
  };
}

describe('forum matcher: one test per URL form', () => {
  it.each([
    ['https://www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/', 'post', { postId: 'k1t3x9', subreddit: 'kites' }],
    ['https://old.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/', 'post', { postId: 'k1t3x9', subreddit: 'kites' }],
    ['https://new.reddit.com/r/kites/comments/k1t3x9/', 'post', { postId: 'k1t3x9', subreddit: 'kites' }],
    ['https://reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/abcdefg/', 'post', { postId: 'k1t3x9', subreddit: 'kites' }],
    ['https://redd.it/k1t3x9', 'post', { postId: 'k1t3x9' }],
    ['https://www.reddit.com/r/kites/s/Ab12Cd34Ef', 'share', { subreddit: 'kites', share: 'Ab12Cd34Ef' }],
    ['https://www.reddit.com/r/kites/', 'community', { subreddit: 'kites' }],
    ['https://old.reddit.com/r/kites/top/?t=all', 'community', { subreddit: 'kites' }],
    ['https://www.reddit.com/user/windfolder/', 'user', { username: 'windfolder' }],
    ['https://www.reddit.com/u/windfolder', 'user', { username: 'windfolder' }],
    ['https://new.reddit.com/user/windfolder/submitted/', 'user', { username: 'windfolder' }],
  ])('%s', (link, kind, ids) => {
    expect(matchReddit(new URL(link))).toEqual({ kind, ids });
  });
  it.each([
    'https://www.reddit.com/',
    'https://www.reddit.com/settings',
    'https://www.reddit.com/r/',
    'https://notreddit.com/r/kites',
    'https://www.reddit.com/r/kites/comments/',
  ])('does not match %s', (link) => expect(matchReddit(new URL(link))).toBeUndefined());
});

describe('forum post types', () => {
  it.each([
    [{ is_self: true }, 'TEXT'],
    [{ is_gallery: true, gallery_data: { items: [] }, media_metadata: {} }, 'GALLERY'],
    [{ is_video: true, media: { reddit_video: { fallback_url: 'x' } } }, 'VIDEO'],
    [{ post_hint: 'rich:video' }, 'VIDEO'],
    [{ post_hint: 'image', url: 'https://i.redd.it/a.jpg' }, 'IMAGE'],
    [{ url: 'https://i.imgur.com/abc.png' }, 'IMAGE'],
    [{ post_hint: 'link', url: 'https://example.com/story' }, 'LINK'],
  ])('%j -> %s', (post, type) => expect(postType(post)).toBe(type));
});

describe('forum post from the .json endpoint', () => {
  let w: World;
  let r: any;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/comments/k1t3x9.json', json(listing(basePost(w.origin))));
    w.server.route('/rd/r/kites/about.json', json(about(w.origin)));
    for (const p of ['/img/preview.png', '/img/icon.png', '/img/banner.png']) w.server.route(p, await image(64, 48));
    r = await w.preview('https://old.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/');
  });
  afterAll(() => w.close());

  it('is a FORUM_POST with title, description and image', () => {
    expect(r).toMatchObject({
      ok: true,
      type: 'FORUM_POST',
      status: 200,
      title: 'My first paper kite flew for an hour',
      description: 'Used 80gsm paper and bamboo skewers.',
    });
    expect(r.image.original.url).toMatch(/^http:\/\/assets\.test\//);
  });
  it('asks with its own User-Agent and raw_json=1', () => {
    const req = w.server.requests.find((x) => x.url.startsWith('/rd/comments/'))!;
    expect(req.url).toContain('raw_json=1');
    expect(String(req.headers['user-agent'])).toMatch(/linklens/);
  });
  it.each([
    ['id', stableId('forum:post:t3_k1t3x9')],
    ['xId', 'k1t3x9'],
    ['createdAt', '2024-06-01T10:00:00.000Z'],
    ['publishedAt', '2024-06-01T10:00:00.000Z'],
    ['updatedAt', '2024-06-01T11:00:00.000Z'],
    ['user', { id: stableId('forum:user:t2_abc12'), username: 'windfolder' }],
    ['text', 'Used 80gsm paper and bamboo skewers.'],
    ['likesCount', 812],
    ['commentsCount', 64],
    ['type', 'TEXT'],
  ])('forumPost.%s', (field, value) => {
    expect(r.forumPost[field]).toEqual(value);
  });
  it("forumPost.community from the subreddit's about.json", () => {
    expect(r.forumPost.community).toMatchObject({
      id: stableId('forum:community:t5_2qh0k'),
      name: 'kites',
      title: 'Kites and kite flying',
      description: 'Everything about kites.',
      type: 'public',
      subscribersCount: 51234,
      activeUsersCount: 87,
      createdDate: '2008-01-25T03:52:15.000Z',
      nsfw: false,
    });
    expect(r.forumPost.community.avatar).toBeDefined();
    expect(r.forumPost.community.banner).toBeDefined();
  });
  it('forumPost.media: the preview image hosted (MediaImage), &amp; decoded', () => {
    expect(r.forumPost.media).toHaveLength(1);
    expect(r.forumPost.media[0]).toMatchObject({ width: 64, height: 48, format: expect.any(String) });
    expect(w.asked()).toContain('/img/preview.png?width=640&s=abc');
  });
});

describe('forum post media', () => {
  let w: World;
  afterEach(() => w.close());

  it('GALLERY: every gallery item in order', async () => {
    w = await startWorld({ env: SOURCES });
    const post = basePost(w.origin, {
      is_self: false,
      selftext: '',
      is_gallery: true,
      post_hint: undefined,
      gallery_data: { items: [{ media_id: 'm2' }, { media_id: 'm1' }] },
      media_metadata: {
        m1: { status: 'valid', e: 'Image', m: 'image/png', s: { u: `${w.origin}/img/g1.png?a=1&amp;b=2`, x: 60, y: 40 } },
        m2: { status: 'valid', e: 'Image', m: 'image/png', s: { u: `${w.origin}/img/g2.png`, x: 30, y: 20 } },
      },
    });
    w.server.route('/rd/comments/k1t3x9.json', json(listing(post)));
    w.server.route('/img/g1.png', await image(60, 40));
    w.server.route('/img/g2.png', await image(30, 20));
    const r = await w.preview('https://redd.it/k1t3x9');
    expect(r.forumPost.type).toBe('GALLERY');
    expect(r.forumPost.media.map((m: any) => m.width)).toEqual([30, 60]);
    expect(r.forumPost.text).toBeUndefined();
    expect(r.forumPost.community).toMatchObject({ name: 'kites', subscribersCount: 51234, type: 'public' }); // about.json missing: from the post
  });

  it('IMAGE: the image itself', async () => {
    w = await startWorld({ env: SOURCES });
    const post = basePost(w.origin, {
      is_self: false,
      selftext: '',
      post_hint: 'image',
      url: `${w.origin}/img/full.png`,
      url_overridden_by_dest: `${w.origin}/img/full.png`,
    });
    w.server.route('/rd/comments/k1t3x9.json', json(listing(post)));
    w.server.route('/img/full.png', await image(80, 60));
    const r = await w.preview('https://www.reddit.com/comments/k1t3x9');
    expect(r.forumPost).toMatchObject({ type: 'IMAGE', media: [{ width: 80, height: 60 }] });
  });

  it('VIDEO: the poster frame as media; LINK posts keep the preview image', async () => {
    w = await startWorld({ env: SOURCES });
    const post = basePost(w.origin, {
      is_self: false,
      selftext: '',
      is_video: true,
      post_hint: 'hosted:video',
      media: { reddit_video: { fallback_url: 'https://v.redd.it/x/DASH_720.mp4', duration: 12 } },
    });
    w.server.route('/rd/comments/k1t3x9.json', json(listing(post)));
    w.server.route('/img/preview.png', await image(64, 48));
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/');
    expect(r.forumPost).toMatchObject({ type: 'VIDEO', media: [{ width: 64 }] });
  });
});

describe('forum share links', () => {
  let w: World;
  afterAll(() => w.close());
  it('/r/{sub}/s/{code} follows the redirect to the post', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/r/kites/s/Ab12Cd34Ef', redirect('/rd/r/kites/comments/k1t3x9/my_first_paper_kite/?share_id=xyz', 301));
    w.server.route('/rd/r/kites/comments/k1t3x9/my_first_paper_kite/', page('<html></html>'));
    w.server.route('/rd/comments/k1t3x9.json', json(listing(basePost(w.origin))));
    const r = await w.preview('https://www.reddit.com/r/kites/s/Ab12Cd34Ef');
    expect(r).toMatchObject({ ok: true, type: 'FORUM_POST', redirected: true, redirectionCount: 1 });
    expect(r.redirectionTrail[0]).toBe('https://www.reddit.com/r/kites/s/Ab12Cd34Ef');
    expect(r.redirectionUrl).toBe('https://www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/?share_id=xyz');
    expect(r.forumPost.xId).toBe('k1t3x9');
  });
});

describe('forum community and user', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/r/kites/about.json', json(about(w.origin)));
    w.server.route(
      '/rd/user/windfolder/about.json',
      json({
        kind: 't2',
        data: {
          name: 'windfolder',
          id: 'abc12',
          created_utc: 1420070400,
          link_karma: 1200,
          comment_karma: 3400,
          total_karma: 4650,
          icon_img: `${w.origin}/img/avatar.png?s=1&amp;t=2`,
          snoovatar_img: `${w.origin}/img/snoo.png`,
          subreddit: { title: 'Wind Folder', public_description: 'I fold kites.', banner_img: `${w.origin}/img/ubanner.png` },
        },
      }),
    );
    for (const p of ['/img/icon.png', '/img/banner.png', '/img/avatar.png', '/img/snoo.png', '/img/ubanner.png']) w.server.route(p, await image(40, 40));
  });
  afterAll(() => w.close());

  it('FORUM_COMMUNITY: every field', async () => {
    const r = await w.preview('https://www.reddit.com/r/kites/');
    expect(r).toMatchObject({ ok: true, type: 'FORUM_COMMUNITY', title: 'Kites and kite flying (r/kites)', description: 'Everything about kites.' });
    expect(r.forumCommunity).toMatchObject({
      id: stableId('forum:community:t5_2qh0k'),
      name: 'kites',
      title: 'Kites and kite flying',
      description: 'Everything about kites.',
      type: 'public',
      subscribersCount: 51234,
      activeUsersCount: 87,
      createdDate: '2008-01-25T03:52:15.000Z',
      nsfw: false,
    });
    expect(r.forumCommunity.avatar.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(r.forumCommunity.banner.original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(r.image).toBeDefined();
  });

  it('FORUM_USER: karma split, avatars, banner, joinedAt', async () => {
    const r = await w.preview('https://www.reddit.com/u/windfolder');
    expect(r).toMatchObject({ ok: true, type: 'FORUM_USER', title: 'Wind Folder (u/windfolder)', description: 'I fold kites.' });
    expect(r.forumUser).toMatchObject({
      id: stableId('forum:user:t2_abc12'),
      username: 'windfolder',
      name: 'Wind Folder',
      bio: 'I fold kites.',
      karma: 4650,
      postKarma: 1200,
      commentKarma: 3400,
      joinedAt: '2015-01-01T00:00:00.000Z',
    });
    for (const k of ['avatar', 'flattenedAvatar', 'banner']) expect(r.forumUser[k].original.url).toMatch(/^http:\/\/assets\.test\//);
    expect(w.asked()).toContain('/img/avatar.png?s=1&t=2');
  });
});

describe('forum fallbacks and content that is gone', () => {
  let w: World;
  afterEach(() => w.close());

  it('removed post: ok:false FORUM_POST saying so, not "Reddit - Dive into anything"', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route(
      '/rd/comments/k1t3x9.json',
      json(listing(basePost(w.origin, { selftext: '[removed]', removed_by_category: 'moderator', preview: undefined }))),
    );
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/x/');
    expect(r).toMatchObject({ ok: false, type: 'FORUM_POST', status: 200, description: 'This post was removed by the moderators.' });
    expect(r.forumPost.xId).toBe('k1t3x9');
    expect(r.forumPost.text).toBeUndefined();
  });

  it('deleted post (404 JSON): ok:false FORUM_POST', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/comments/zz9.json', json({ message: 'Not Found', error: 404 }, 404));
    const r = await w.preview('https://www.reddit.com/r/kites/comments/zz9/gone/');
    expect(r).toMatchObject({ ok: false, type: 'FORUM_POST', status: 404 });
    expect(r.title).toBeUndefined();
  });

  it('private subreddit (403 reason private): ok:false FORUM_COMMUNITY', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/r/secretkites/about.json', json({ reason: 'private', message: 'Forbidden', error: 403 }, 403));
    const r = await w.preview('https://www.reddit.com/r/secretkites');
    expect(r).toMatchObject({ ok: false, type: 'FORUM_COMMUNITY', status: 403, description: 'This community is private.' });
  });

  it('banned subreddit (404 reason banned)', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/r/badkites/about.json', json({ reason: 'banned', message: 'Not Found', error: 404 }, 404));
    const r = await w.preview('https://www.reddit.com/r/badkites');
    expect(r).toMatchObject({ ok: false, type: 'FORUM_COMMUNITY', description: 'This community was banned.' });
  });

  it('suspended account: ok:false FORUM_USER', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/user/spammer/about.json', json({ kind: 't2', data: { name: 'spammer', is_suspended: true, awardee_karma: 0 } }));
    const r = await w.preview('https://www.reddit.com/user/spammer');
    expect(r).toMatchObject({ ok: false, type: 'FORUM_USER', description: 'This account has been suspended.', forumUser: { username: 'spammer' } });
  });

  it.each([
    ['429 rate limit', json({ message: 'Too Many Requests', error: 429 }, 429)],
    ['403 HTML block page', page('<html><head><title>Blocked</title></head><body>You have been blocked by network security.</body></html>', 403)],
  ])('%s on the .json: the generic PAGE preview of the same URL', async (_name, answer) => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/comments/k1t3x9.json', answer);
    w.server.route(
      '/www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/',
      page(
        '<html><head><meta property="og:title" content="My first paper kite flew for an hour : r/kites"><meta property="og:site_name" content="Reddit"></head></html>',
      ),
    );
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/');
    expect(r).toMatchObject({ ok: true, type: 'PAGE', title: 'My first paper kite flew for an hour : r/kites' });
  });

  it('the generic preview of a Reddit page uses its own <title> and meta description over the templated og tags', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/rd/comments/k1t3x9.json', json({ message: 'Too Many Requests', error: 429 }, 429));
    w.server.route(
      '/www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/',
      page(`<html lang="en-US"><head>
      <title>My first paper kite flew for an hour : r/kites</title>
      <meta name="description" content="It took two sheets of A4 and a lot of string. Here is how it went…">
      <meta property="og:title" content="From the kites community on Reddit: My first paper kite flew for an hour">
      <meta property="og:description" content="Explore this post and more from the kites community"></head></html>`),
    );
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/my_first_paper_kite/');
    expect(r).toMatchObject({
      ok: true,
      type: 'PAGE',
      title: 'My first paper kite flew for an hour : r/kites',
      description: 'It took two sheets of A4 and a lot of string. Here is how it went…',
    });
  });
});

describe('app-only OAuth when REDDIT_CLIENT_ID/SECRET are set', () => {
  // The default token and OAuth URLs (www.reddit.com/api/v1/access_token, oauth.reddit.com) are
  // mapped onto the fixture server by the harness, under /<host>/<path>.
  let w: World;
  afterEach(() => w.close());

  it('gets a client_credentials token by POST and calls the OAuth host with it', async () => {
    w = await startWorld({ env: { ...SOURCES, REDDIT_CLIENT_ID: 'cid', REDDIT_CLIENT_SECRET: 'csecret' } });
    const seen: { method?: string; auth?: string; body: string }[] = [];
    w.server.route('/www.reddit.com/api/v1/access_token', (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, auth: req.headers.authorization, body });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'tok-123', token_type: 'bearer', expires_in: 3600 }));
      });
    });
    w.server.route('/oauth.reddit.com/comments/k1t3x9.json', json(listing(basePost(w.origin))));
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/my_first_kite/');
    expect(r.type).toBe('FORUM_POST');
    expect(seen).toEqual([{ method: 'POST', auth: `Basic ${Buffer.from('cid:csecret').toString('base64')}`, body: 'grant_type=client_credentials' }]);
    const call = w.server.requests.find((x) => x.url.startsWith('/oauth.reddit.com/comments/'))!;
    expect(call.headers.authorization).toBe('Bearer tok-123');
    expect(w.asked().some((u) => u.startsWith('/rd/comments/'))).toBe(false);
  });

  it('falls back to the key-less .json when the token call fails', async () => {
    w = await startWorld({ env: { ...SOURCES, REDDIT_CLIENT_ID: 'denied-client', REDDIT_CLIENT_SECRET: 'x' } });
    w.server.route('/www.reddit.com/api/v1/access_token', json({ error: 401 }, 401));
    w.server.route('/rd/comments/k1t3x9.json', json(listing(basePost(w.origin))));
    const r = await w.preview('https://www.reddit.com/r/kites/comments/k1t3x9/my_first_kite/');
    expect(r.type).toBe('FORUM_POST');
    expect(w.asked().some((u) => u.startsWith('/rd/comments/k1t3x9.json'))).toBe(true);
  });
});
