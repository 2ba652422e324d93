/**
 * Each platform's own player (lib/platforms/<site>/player.ts): the address on the platform's
 * player host with the id the link names (a Reddit post's subreddit from the post when the link
 * names none, a share link's post from where it led); none for what is not a post or a video,
 * and none at all for GitHub, Amazon and Etsy.
 */
import { PLATFORMS } from '../../lib/platforms/index';
import type { Platform, PlatformPreview } from '../../lib/platforms/types';

const byName = (name: string): Platform => {
  const found = PLATFORMS.find((p) => p.name === name) as Platform | undefined;
  if (!found) throw new Error(`no platform ${name}`);
  return found;
};

function playerOf(name: string, link: string, preview?: PlatformPreview) {
  const platform = byName(name);
  const url = new URL(link);
  const match = platform.match(url);
  if (!match) throw new Error(`${name} does not match ${link}`);
  return platform.player?.(url, match, preview);
}

const preview = (fields: PlatformPreview['fields'], trail?: string[]): PlatformPreview => ({
  type: 'FORUM_POST',
  ok: true,
  status: 200,
  fields,
  ...(trail ? { trail } : {}),
});

test('YouTube: the no-cookie embed of the video, 16:9; a Short in a portrait box', () => {
  expect(playerOf('videohost', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ')).toEqual({
    type: 'video',
    url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
    provider: 'YouTube',
    aspectRatio: 16 / 9,
  });
  expect(playerOf('videohost', 'https://youtube.com/shorts/abcdefghijk')).toEqual({
    type: 'video',
    url: 'https://www.youtube-nocookie.com/embed/abcdefghijk',
    provider: 'YouTube',
    width: 315,
    height: 560,
  });
  expect(playerOf('videohost', 'https://www.youtube.com/@veritasium')).toBeUndefined();
});

test("X: the post's Tweet.html, whatever host or form the link has", () => {
  for (const link of ['https://x.com/jack/status/20', 'https://twitter.com/jack/status/20?s=20', 'https://mobile.twitter.com/i/web/status/20']) {
    expect(playerOf('microblog', link)).toEqual({
      type: 'rich',
      url: 'https://platform.twitter.com/embed/Tweet.html?id=20&dnt=true',
      provider: 'X',
      width: 550,
      height: 600,
    });
  }
  expect(playerOf('microblog', 'https://x.com/jack')).toBeUndefined();
});

test("Instagram: the post's embed page, in its own form (p, reel, tv)", () => {
  expect(playerOf('photoshare', 'https://www.instagram.com/p/CkYXXhlt5N7/')?.url).toBe('https://www.instagram.com/p/CkYXXhlt5N7/embed/');
  expect(playerOf('photoshare', 'https://www.instagram.com/natgeo/reel/C1a2b3c4d5E/')?.url).toBe('https://www.instagram.com/reel/C1a2b3c4d5E/embed/');
  expect(playerOf('photoshare', 'https://www.instagram.com/reels/C1a2b3c4d5E/')?.url).toBe('https://www.instagram.com/reel/C1a2b3c4d5E/embed/');
  expect(playerOf('photoshare', 'https://www.instagram.com/natgeo/')).toBeUndefined();
});

test("TikTok: the Embed Player's address of the video", () => {
  expect(playerOf('clips', 'https://www.tiktok.com/@scout2015/video/6718335390845095173?lang=en')).toEqual({
    type: 'video',
    url: 'https://www.tiktok.com/player/v1/6718335390845095173',
    provider: 'TikTok',
    width: 325,
    height: 578,
  });
  expect(playerOf('clips', 'https://www.tiktok.com/embed/v2/6718335390845095173')?.url).toBe('https://www.tiktok.com/player/v1/6718335390845095173');
  expect(playerOf('clips', 'https://www.tiktok.com/@scout2015')).toBeUndefined();
});

describe('Reddit', () => {
  test('a post link names its subreddit', () => {
    expect(playerOf('forum', 'https://www.reddit.com/r/lotus/comments/abc123/some_title/')).toEqual({
      type: 'rich',
      url: 'https://embed.reddit.com/r/lotus/comments/abc123/?embed=true',
      provider: 'Reddit',
      width: 640,
      height: 500,
    });
  });

  test('a /comments/<id> or redd.it link: the subreddit from the post as the platform read it', () => {
    expect(playerOf('forum', 'https://redd.it/abc123')).toBeUndefined();
    const post = preview({ forumPost: { id: 1, community: { name: 'lotus' } } });
    expect(playerOf('forum', 'https://redd.it/abc123', post)?.url).toBe('https://embed.reddit.com/r/lotus/comments/abc123/?embed=true');
    expect(playerOf('forum', 'https://www.reddit.com/comments/abc123', post)?.url).toBe('https://embed.reddit.com/r/lotus/comments/abc123/?embed=true');
  });

  test('a share link: the post it led to', () => {
    const post = preview({ forumPost: { id: 1 } }, ['https://www.reddit.com/r/lotus/s/AbCdEf12', 'https://www.reddit.com/r/lotus/comments/xyz789/title/']);
    expect(playerOf('forum', 'https://www.reddit.com/r/lotus/s/AbCdEf12', post)?.url).toBe('https://embed.reddit.com/r/lotus/comments/xyz789/?embed=true');
    expect(playerOf('forum', 'https://www.reddit.com/r/lotus/s/AbCdEf12')).toBeUndefined();
  });

  test('a subreddit or a user: none', () => {
    expect(playerOf('forum', 'https://www.reddit.com/r/lotus/')).toBeUndefined();
    expect(playerOf('forum', 'https://www.reddit.com/user/spez')).toBeUndefined();
  });
});

test('GitHub, Amazon and Etsy have no player', () => {
  for (const name of ['codehost', 'retailer', 'marketplace']) {
    const platform = PLATFORMS.find((p) => p.name === name) as Platform | undefined;
    expect(platform).toBeDefined();
    expect(platform?.player).toBeUndefined();
  }
});
