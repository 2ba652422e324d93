/**
 * The built-in players (lib/embed/players/): each provider's link gives the player address its
 * provider documents, with the id taken from the link (and, for Bluesky and Bandcamp, from a page
 * shaped like the provider's); an address on a provider's player origin found in an oEmbed answer
 * shaped like the provider's is kept, rebuilt where the provider's entry says so.
 */
import { loadConfig } from '../../lib/config';
import { oembedPlayer } from '../../lib/embed/oembed-player';
import { linkPlayer, pagePlayers } from '../../lib/embed/page';
import type { EmbedConfig } from '../../lib/embed/types';
import { parseOEmbed } from '../../lib/extract/oembed-source';
import { parsePageBytes } from '../../lib/extract/parse-page';

const config: EmbedConfig = loadConfig({});
const withEnv = (env: Record<string, string>): EmbedConfig => loadConfig(env);
const page = (head: string) => parsePageBytes(Buffer.from(`<!doctype html><html><head>${head}</head><body><p>Body</p></body></html>`), 'utf-8');

describe('a link of a provider: its player, the id from the link', () => {
  test.each([
    ['YouTube watch', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', 'YouTube'],
    ['YouTube short link', 'https://youtu.be/dQw4w9WgXcQ?si=abc', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', 'YouTube'],
    ['Vimeo', 'https://vimeo.com/76979871', 'https://player.vimeo.com/video/76979871', 'Vimeo'],
    ['Vimeo unlisted (privacy hash)', 'https://vimeo.com/791813674/2c9cfc5030', 'https://player.vimeo.com/video/791813674?h=2c9cfc5030', 'Vimeo'],
    ['Vimeo in a channel', 'https://vimeo.com/channels/staffpicks/55073825', 'https://player.vimeo.com/video/55073825', 'Vimeo'],
    ['Spotify track', 'https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC?si=x', 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC', 'Spotify'],
    [
      'Spotify album (localized)',
      'https://open.spotify.com/intl-de/album/42jcZtPYrmZJhqTbUhLApi',
      'https://open.spotify.com/embed/album/42jcZtPYrmZJhqTbUhLApi',
      'Spotify',
    ],
    [
      'SoundCloud track',
      'https://soundcloud.com/frankzappa/it-must-be-a-camel',
      'https://w.soundcloud.com/player/?url=https%3A%2F%2Fsoundcloud.com%2Ffrankzappa%2Fit-must-be-a-camel',
      'SoundCloud',
    ],
    [
      'SoundCloud set',
      'https://soundcloud.com/erik-satie/sets/gymnopedies',
      'https://w.soundcloud.com/player/?url=https%3A%2F%2Fsoundcloud.com%2Ferik-satie%2Fsets%2Fgymnopedies',
      'SoundCloud',
    ],
    [
      'Apple Music album',
      'https://music.apple.com/jp/album/back-to-the-80s/1458246986',
      'https://embed.music.apple.com/jp/album/back-to-the-80s/1458246986',
      'Apple Music',
    ],
    [
      'Apple Music song in an album',
      'https://music.apple.com/us/album/gypsy-woman/1434891258?i=1434891369&ls=1',
      'https://embed.music.apple.com/us/album/gypsy-woman/1434891258?i=1434891369',
      'Apple Music',
    ],
    [
      'Apple Podcasts show',
      'https://podcasts.apple.com/us/podcast/fiction-fixation/id1585974420',
      'https://embed.podcasts.apple.com/us/podcast/fiction-fixation/id1585974420',
      'Apple Podcasts',
    ],
    [
      'Apple Podcasts episode',
      'https://podcasts.apple.com/us/podcast/fiction-fixation/id1585974420?i=1000650000001',
      'https://embed.podcasts.apple.com/us/podcast/fiction-fixation/id1585974420?i=1000650000001',
      'Apple Podcasts',
    ],
    ['TED', 'https://www.ted.com/talks/jake_barton_the_museum_of_you', 'https://embed.ted.com/talks/jake_barton_the_museum_of_you', 'TED'],
    ['Loom', 'https://www.loom.com/share/0808e55f94a24992b2de488ac56d3815', 'https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815', 'Loom'],
    ['CodePen', 'https://codepen.io/dudleystorey/pen/HrFBx', 'https://codepen.io/dudleystorey/embed/HrFBx?default-tab=result', 'CodePen'],
    [
      'Figma design with a node',
      'https://www.figma.com/design/nrPSsILSYjesyc5UHjYYa4/Sample-File?node-id=5-3&t=abc',
      'https://embed.figma.com/design/nrPSsILSYjesyc5UHjYYa4?node-id=5-3&embed-host=linklens',
      'Figma',
    ],
    [
      'Figma (legacy /file/)',
      'https://www.figma.com/file/LKQ4FJ4bTnCSjedbRpk931/Sample-File',
      'https://embed.figma.com/design/LKQ4FJ4bTnCSjedbRpk931?embed-host=linklens',
      'Figma',
    ],
    ['X post', 'https://x.com/jack/status/20', 'https://platform.twitter.com/embed/Tweet.html?id=20&dnt=true', 'X'],
    ['Instagram post', 'https://www.instagram.com/p/CkYXXhlt5N7/', 'https://www.instagram.com/p/CkYXXhlt5N7/embed/', 'Instagram'],
    ['Instagram reel', 'https://www.instagram.com/reel/C1a2b3c4d5E/', 'https://www.instagram.com/reel/C1a2b3c4d5E/embed/', 'Instagram'],
    ['TikTok video', 'https://www.tiktok.com/@scout2015/video/6718335390845095173', 'https://www.tiktok.com/player/v1/6718335390845095173', 'TikTok'],
    [
      'Reddit post',
      'https://www.reddit.com/r/Kotlin/comments/1icz7k8/whats_the_name_of_this_concurrency_concept/',
      'https://embed.reddit.com/r/Kotlin/comments/1icz7k8/?embed=true',
      'Reddit',
    ],
  ])('%s', (_name, link, address, provider) => {
    expect(linkPlayer(link, { config })).toMatchObject({ url: address, provider });
  });

  test('their kinds and sizes: a video scales, an audio bar has its height, a post a box', () => {
    expect(linkPlayer('https://vimeo.com/76979871', { config })).toEqual({
      type: 'video',
      url: 'https://player.vimeo.com/video/76979871',
      provider: 'Vimeo',
      aspectRatio: 16 / 9,
    });
    expect(linkPlayer('https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC', { config })).toMatchObject({ type: 'audio', height: 152 });
    expect(linkPlayer('https://open.spotify.com/playlist/44CgBWWr6nlpy7bdZS8ZmN', { config })).toMatchObject({ type: 'audio', height: 352 });
    expect(linkPlayer('https://music.apple.com/us/album/eartha/1450438412', { config })).toMatchObject({ type: 'audio', height: 450 });
    expect(linkPlayer('https://music.apple.com/es/music-video/just-the-way-you-are/576670472', { config })).toMatchObject({
      type: 'video',
      aspectRatio: 16 / 9,
    });
    expect(linkPlayer('https://www.youtube.com/shorts/dQw4w9WgXcQ', { config })).toMatchObject({ type: 'video', width: 315, height: 560 });
    expect(linkPlayer('https://x.com/jack/status/20', { config })).toMatchObject({ type: 'rich', width: 550, height: 600 });
  });

  test.each([
    ['a YouTube channel', 'https://www.youtube.com/@veritasium'],
    ['a Vimeo profile', 'https://vimeo.com/staff'],
    ['a Spotify user', 'https://open.spotify.com/user/spotify'],
    ['a SoundCloud profile', 'https://soundcloud.com/frankzappa'],
    ["SoundCloud's own page", 'https://soundcloud.com/discover/sets'],
    ['a TED speaker', 'https://www.ted.com/speakers/jake_barton'],
    ['GitHub (no player)', 'https://github.com/nodejs/node'],
    ['Amazon (no player)', 'https://www.amazon.com/dp/B08N5WRWNW'],
    ['an X profile', 'https://x.com/jack'],
    ['a look-alike host', 'https://vimeo.com.evil.example/76979871'],
  ])('%s: no player', (_name, link) => {
    expect(linkPlayer(link, { config })).toBeUndefined();
  });
});

describe('Twitch: its parents are the setting', () => {
  test('no LINKPREVIEW_EMBED_PARENTS: no Twitch player', () => {
    expect(linkPlayer('https://www.twitch.tv/videos/2687468093', { config })).toBeUndefined();
  });

  test.each([
    [
      'a video',
      'https://www.twitch.tv/videos/2687468093',
      'https://player.twitch.tv/?video=2687468093&parent=app.example.com&parent=example.com&autoplay=false',
    ],
    ['a channel', 'https://www.twitch.tv/monstercat', 'https://player.twitch.tv/?channel=monstercat&parent=app.example.com&parent=example.com&autoplay=false'],
    [
      'a clip',
      'https://clips.twitch.tv/RacySweetJackalBlargNaut-Aurg1DNlYiUgIhJd',
      'https://clips.twitch.tv/embed?clip=RacySweetJackalBlargNaut-Aurg1DNlYiUgIhJd&parent=app.example.com&parent=example.com&autoplay=false',
    ],
    [
      "a channel's clip",
      'https://www.twitch.tv/uhsnow/clip/BlitheHedonisticQuailWutFace-0LqwKOVTwqmrSA_e',
      'https://clips.twitch.tv/embed?clip=BlitheHedonisticQuailWutFace-0LqwKOVTwqmrSA_e&parent=app.example.com&parent=example.com&autoplay=false',
    ],
  ])('%s: one parent per configured domain', (_name, link, address) => {
    const ctx = { config: withEnv({ LINKPREVIEW_EMBED_PARENTS: 'app.example.com, example.com' }) };
    expect(linkPlayer(link, ctx)).toMatchObject({ url: address, provider: 'Twitch', type: 'video' });
  });

  test("a page's Twitch player gets the configured parents, its own dropped", () => {
    const html = page(
      '<meta property="og:video:url" content="https://player.twitch.tv/?video=v2687468093&parent=meta.tag&player=facebook"><meta property="og:video:type" content="text/html">',
    );
    const found = pagePlayers(
      { link: 'https://news.example/story', finalUrl: 'https://news.example/story', page: html, base: 'https://news.example/story' },
      withEnv({ LINKPREVIEW_EMBED_PARENTS: 'app.example.com' }),
    );
    expect(found?.meta?.url).toBe('https://player.twitch.tv/?video=2687468093&parent=app.example.com&autoplay=false');
  });
});

describe('Dailymotion: the player id is the setting', () => {
  test('with LINKPREVIEW_EMBED_DAILYMOTION_PLAYER: the link plays in that player', () => {
    const ctx = { config: withEnv({ LINKPREVIEW_EMBED_DAILYMOTION_PLAYER: 'xjrxe' }) };
    expect(linkPlayer('https://www.dailymotion.com/video/x8tzf3o', ctx)?.url).toBe('https://geo.dailymotion.com/player/xjrxe.html?video=x8tzf3o');
    expect(linkPlayer('https://dai.ly/x8tzf3o', ctx)?.url).toBe('https://geo.dailymotion.com/player/xjrxe.html?video=x8tzf3o');
    expect(linkPlayer('https://www.dailymotion.com/video/x10bix2_ircam-mani-feste-2013_creation', ctx)?.url).toBe(
      'https://geo.dailymotion.com/player/xjrxe.html?video=x10bix2',
    );
  });

  test("without it: none from the link, but the page's own Dailymotion player is kept", () => {
    expect(linkPlayer('https://www.dailymotion.com/video/x8tzf3o', { config })).toBeUndefined();
    const html = page(
      '<meta name="twitter:player" content="https://geo.dailymotion.com/player/xkdl1.html?video=x8tzf3o"><meta name="twitter:player:width" content="1280"><meta name="twitter:player:height" content="720">',
    );
    const url = 'https://www.dailymotion.com/video/x8tzf3o';
    expect(pagePlayers({ link: url, finalUrl: url, page: html, base: url }, config)?.meta).toMatchObject({
      url: 'https://geo.dailymotion.com/player/xkdl1.html?video=x8tzf3o',
      provider: 'Dailymotion',
      aspectRatio: 1280 / 720,
    });
  });
});

describe('players a page names', () => {
  test("Bluesky: the author's DID from the post page's at:// link", () => {
    const url = 'https://bsky.app/profile/haoqun.dev/post/3lbf3etdjxc24';
    const html = page(
      `<meta property="og:title" content="Haoqun Jiang (@haoqun.dev)"><link rel="alternate" type="application/json+oembed" href="https://embed.bsky.app/oembed?format=json&url=at%3A%2F%2Fdid%3Aplc%3Aoiawuf6mbqiigagveorctrsj%2Fapp.bsky.feed.post%2F3lbf3etdjxc24"><link rel="alternate" href="at://did:plc:oiawuf6mbqiigagveorctrsj/app.bsky.feed.post/3lbf3etdjxc24">`,
    );
    expect(linkPlayer(url, { config })).toBeUndefined();
    expect(linkPlayer(url, { config, page: html })).toMatchObject({
      type: 'rich',
      provider: 'Bluesky',
      url: 'https://embed.bsky.app/embed/did:plc:oiawuf6mbqiigagveorctrsj/app.bsky.feed.post/3lbf3etdjxc24',
    });
    // A link that names the DID needs no page.
    const byDid = 'https://bsky.app/profile/did:plc:oiawuf6mbqiigagveorctrsj/post/3lbf3etdjxc24';
    expect(linkPlayer(byDid, { config })?.url).toBe('https://embed.bsky.app/embed/did:plc:oiawuf6mbqiigagveorctrsj/app.bsky.feed.post/3lbf3etdjxc24');
  });

  test("Bluesky: another post's at:// link is not this post's DID", () => {
    const html = page('<link rel="alternate" href="at://did:plc:someoneelse/app.bsky.feed.post/3zzzzzzzzzzzz">');
    expect(linkPlayer('https://bsky.app/profile/haoqun.dev/post/3lbf3etdjxc24', { config, page: html })).toBeUndefined();
  });

  test("Bandcamp: the album and track of the page's EmbeddedPlayer, in linklens's own player", () => {
    const url = 'https://decembersongs.bandcamp.com/track/silent-night';
    const html = page(
      '<meta property="og:title" content="Silent Night, by December Songs"><meta property="twitter:site" content="@bandcamp"><meta property="twitter:player" content="https://bandcamp.com/EmbeddedPlayer/v=2/album=2512341234/track=998877665/size=large/linkcol=0084B4/notracklist=true/twitter=true/"><meta property="twitter:player:width" content="350"><meta property="twitter:player:height" content="467">',
    );
    expect(linkPlayer(url, { config, page: html })).toEqual({
      type: 'audio',
      provider: 'Bandcamp',
      url: 'https://bandcamp.com/EmbeddedPlayer/album=2512341234/size=large/tracklist=false/artwork=small/track=998877665/transparent=true/',
      height: 120,
    });
    expect(linkPlayer(url, { config })).toBeUndefined();
  });

  test("a page's twitter:player on the link's own site, with its size", () => {
    const url = 'https://www.example-news.com/video/123';
    const html = page(
      '<meta name="twitter:card" content="player"><meta name="twitter:player" content="https://player.example-news.com/embed/123"><meta name="twitter:player:width" content="640"><meta name="twitter:player:height" content="360">',
    );
    expect(pagePlayers({ link: url, finalUrl: url, page: html, base: url }, config)).toEqual({
      meta: {
        type: 'video',
        url: 'https://player.example-news.com/embed/123',
        provider: 'player.example-news.com',
        width: 640,
        height: 360,
        aspectRatio: 640 / 360,
      },
    });
  });

  test("an og:video page of type text/html (YouTube's), moved to the no-cookie host", () => {
    const url = 'https://blog.example/post';
    const html = page(
      '<meta property="og:video" content="https://cdn.example/file.mp4"><meta property="og:video:type" content="video/mp4"><meta property="og:video:url" content="https://www.youtube.com/embed/dQw4w9WgXcQ"><meta property="og:video:secure_url" content="https://www.youtube.com/embed/dQw4w9WgXcQ"><meta property="og:video:type" content="text/html"><meta property="og:video:width" content="1280"><meta property="og:video:height" content="720">',
    );
    expect(pagePlayers({ link: url, finalUrl: url, page: html, base: url }, config)?.meta).toMatchObject({
      url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
      provider: 'YouTube',
    });
  });

  test("a twitter:player on another site that is on no list: none; an operator's origin: kept", () => {
    const url = 'https://www.example-news.com/video/123';
    const html = page('<meta name="twitter:player" content="https://videos.partner.example/p/123">');
    expect(pagePlayers({ link: url, finalUrl: url, page: html, base: url }, config)).toEqual({});
    const extra = withEnv({ LINKPREVIEW_EMBED_ORIGINS: 'https://videos.partner.example' });
    expect(pagePlayers({ link: url, finalUrl: url, page: html, base: url }, extra)?.meta?.url).toBe('https://videos.partner.example/p/123');
  });
});

describe('oEmbed answers shaped like the providers', () => {
  const answer = (o: Record<string, unknown>) => parseOEmbed(JSON.stringify({ version: '1.0', ...o }));

  test("YouTube's: the iframe's embed address, moved to the no-cookie host, its start kept", () => {
    const o = answer({
      type: 'video',
      provider_name: 'YouTube',
      width: 200,
      height: 113,
      html: '<iframe width="200" height="113" src="https://www.youtube.com/embed/dQw4w9WgXcQ?start=42&feature=oembed" frameborder="0" allow="accelerometer; autoplay; clipboard-write; encrypted-media; gyroscope; picture-in-picture; web-share" referrerpolicy="strict-origin-when-cross-origin" allowfullscreen title="Rick Astley - Never Gonna Give You Up"></iframe>',
    });
    expect(oembedPlayer(o, config)).toEqual({
      type: 'video',
      url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?start=42',
      provider: 'YouTube',
      aspectRatio: 16 / 9,
    });
  });

  test("Vimeo's: the player address with its privacy hash, the size of the iframe", () => {
    const o = answer({
      type: 'video',
      provider_name: 'Vimeo',
      width: 640,
      height: 360,
      html: '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e&amp;app_id=122963" width="640" height="360" frameborder="0" allow="autoplay; fullscreen; picture-in-picture; clipboard-write; encrypted-media; web-share" referrerpolicy="strict-origin-when-cross-origin" title="The New Vimeo Player"></iframe>',
    });
    expect(oembedPlayer(o, config)).toEqual({
      type: 'video',
      url: 'https://player.vimeo.com/video/76979871?h=8272103f6e',
      provider: 'Vimeo',
      width: 640,
      height: 360,
      aspectRatio: 640 / 360,
    });
  });

  test("Spotify's and SoundCloud's: the player addresses, their own heights", () => {
    const spotify = answer({
      type: 'rich',
      provider_name: 'Spotify',
      width: 456,
      height: 152,
      html: '<iframe style="border-radius: 12px" width="100%" height="152" title="Spotify Embed: Mr. Brightside" frameborder="0" allowfullscreen allow="autoplay; clipboard-write; encrypted-media; fullscreen; picture-in-picture" loading="lazy" src="https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC?utm_source=oembed"></iframe>',
    });
    expect(oembedPlayer(spotify, config)).toEqual({
      type: 'audio',
      url: 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC',
      provider: 'Spotify',
      height: 152,
    });
    const soundcloud = answer({
      type: 'rich',
      provider_name: 'SoundCloud',
      width: '100%',
      height: 400,
      html: '<iframe width="100%" height="400" scrolling="no" frameborder="no" src="https://w.soundcloud.com/player/?visual=true&url=https%3A%2F%2Fapi.soundcloud.com%2Ftracks%2F293&show_artwork=true"></iframe>',
    });
    expect(oembedPlayer(soundcloud, config)).toEqual({
      type: 'audio',
      url: 'https://w.soundcloud.com/player/?url=https%3A%2F%2Fapi.soundcloud.com%2Ftracks%2F293',
      provider: 'SoundCloud',
      height: 166,
    });
  });

  test("TED's, Loom's, CodePen's, Figma's: kept on their player origins", () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [
        {
          type: 'video',
          width: 854,
          height: 480,
          html: '<iframe src="https://embed.ted.com/talks/jake_barton_the_museum_of_you" width="854" height="480" frameborder="0" scrolling="no" allowfullscreen></iframe>',
        },
        'https://embed.ted.com/talks/jake_barton_the_museum_of_you',
        'TED',
      ],
      [
        {
          type: 'video',
          width: 1280,
          height: 960,
          html: '<iframe src="https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815" frameborder="0" width="1280" height="960" webkitallowfullscreen mozallowfullscreen allowfullscreen></iframe>',
        },
        'https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815',
        'Loom',
      ],
      [
        {
          type: 'rich',
          width: 800,
          height: 300,
          html: '<iframe id="cp_embed_HrFBx" src="https://codepen.io/dudleystorey/embed/preview/HrFBx?default-tab=result&height=300" title="Pen" scrolling="no" frameborder="0" height="300" allowtransparency="true" class="cp_embed_iframe" style="width: 100%; overflow: hidden;"></iframe>',
        },
        'https://codepen.io/dudleystorey/embed/preview/HrFBx?default-tab=result&height=300',
        'CodePen',
      ],
      [
        {
          type: 'rich',
          width: 800,
          height: 450,
          html: '<iframe width="800" height="450" src="https://www.figma.com/embed?embed_host=oembed&url=https%3A%2F%2Fwww.figma.com%2Ffile%2FLKQ4FJ4bTnCSjedbRpk931" allowfullscreen></iframe>',
        },
        'https://www.figma.com/embed?embed_host=oembed&url=https%3A%2F%2Fwww.figma.com%2Ffile%2FLKQ4FJ4bTnCSjedbRpk931',
        'Figma',
      ],
    ];
    for (const [o, url, provider] of cases) expect(oembedPlayer(answer(o), config)).toMatchObject({ url, provider });
  });

  test("X's, TikTok's and Bluesky's answers (a blockquote and a script): no player", () => {
    const blockquote = (html: string) => answer({ type: 'rich', html });
    expect(
      oembedPlayer(
        blockquote(
          '<blockquote class="twitter-tweet"><p>Hi</p><a href="https://twitter.com/jack/status/20">March 21, 2006</a></blockquote>\n<script async src="https://platform.twitter.com/widgets.js" charset="utf-8"></script>',
        ),
        config,
      ),
    ).toBeUndefined();
    expect(
      oembedPlayer(
        blockquote(
          '<blockquote class="bluesky-embed" data-bluesky-uri="at://did:plc:oiawuf6mbqiigagveorctrsj/app.bsky.feed.post/3lbf3etdjxc24"><p lang="en">manifest.build</p></blockquote><script async src="https://embed.bsky.app/static/embed.js" charset="utf-8"></script>',
        ),
        config,
      ),
    ).toBeUndefined();
    expect(
      oembedPlayer(
        blockquote(
          '<blockquote class="tiktok-embed" cite="https://www.tiktok.com/@scout2015/video/6718335390845095173" data-video-id="6718335390845095173"><section></section></blockquote> <script async src="https://www.tiktok.com/embed.js"></script>',
        ),
        config,
      ),
    ).toBeUndefined();
  });
});
