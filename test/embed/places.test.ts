/**
 * Where a player may live (lib/client/players.ts, the list the server and the client share, and
 * lib/embed/allow.ts): a built-in provider's player origin keeps only the paths the provider
 * states, and an encoded slash or a dot segment refuses the player; Figma's `url` must be a
 * figma.com file; a size above the provider's bounds is scaled down to them; and a site's own
 * player is its registrable domain's (Public Suffix List): `attacker.github.io` gets no player on
 * `victim.github.io`, `docs.example.com` keeps one on `player.example.com`.
 */
import { listedPlayer, PLAYER_LIST, traversal } from '../../lib/client/players';
import { loadConfig } from '../../lib/config';
import { oembedPlayer } from '../../lib/embed/oembed-player';
import { pagePlayers } from '../../lib/embed/page';
import { pagePlayer } from '../../lib/embed/pipeline';
import type { EmbedConfig } from '../../lib/embed/types';
import { parseOEmbed } from '../../lib/extract/oembed-source';
import { parsePageBytes } from '../../lib/extract/parse-page';

const config: EmbedConfig = loadConfig({});
const frame = (src: string, more = '') => parseOEmbed(JSON.stringify({ version: '1.0', type: 'rich', html: `<iframe src="${src}"${more}></iframe>` }));
const page = (head: string) => parsePageBytes(Buffer.from(`<!doctype html><html><head>${head}</head><body><p>Body</p></body></html>`), 'utf-8');
const twitterPlayer = (src: string) => page(`<meta name="twitter:card" content="player"><meta name="twitter:player" content="${src}">`);

describe("a provider's player origin keeps only its player paths", () => {
  test.each([
    ['an encoded slash and dots in a Reddit slug', 'https://embed.reddit.com/r/pics/comments/abc123/%2F..%2F..%2Flogin'],
    ['an encoded backslash', 'https://embed.reddit.com/r/pics/comments/abc123/%5C..%5Clogin'],
    ['a double-encoded slash', 'https://embed.reddit.com/r/pics/comments/abc123/%252F..%252Flogin'],
    ['a dot segment as written', 'https://embed.reddit.com/r/pics/comments/abc123/x/../'],
    ['an encoded dot segment', 'https://www.youtube.com/embed/dQw4w9WgXcQ/%2e%2e/'],
    ['an encoded slash in a Figma file name', 'https://embed.figma.com/design/LKQ4FJ4bTnCSjedbRpk931/a%2F..%2F..%2Flogout'],
    ['a path of the origin that is no player', 'https://embed.reddit.com/login'],
  ])('%s: no player, from an oEmbed answer or from the platform’s own page', (_name, src) => {
    expect(oembedPlayer(frame(src), config)).toBeUndefined();
    // On the link's own site too (reddit.com's page naming embed.reddit.com): the provider's origin decides.
    const link = 'https://www.reddit.com/r/pics/comments/abc123/title/';
    expect(pagePlayers({ link, finalUrl: link, page: twitterPlayer(src), base: link }, config)?.meta).toBeUndefined();
    expect(listedPlayer(src)).toBeUndefined();
  });

  test('the same provider paths, clean, are kept', () => {
    const reddit = 'https://embed.reddit.com/r/pics/comments/abc123/a_title/?embed=true';
    expect(oembedPlayer(frame(reddit), config)).toMatchObject({ url: reddit, provider: 'Reddit' });
    expect(listedPlayer(reddit)?.name).toBe('Reddit');
    expect(listedPlayer('https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ')?.name).toBe('YouTube');
  });

  test('traversal() reads the address as written: dots in any case and encoding, between slashes or backslashes', () => {
    const check = (raw: string) => traversal(raw, new URL(raw));
    expect(check('https://a.example/x/%2E./y')).toBe(true);
    expect(check('https://a.example/x/.%2e/y')).toBe(true);
    expect(check('https://a.example/x\\..\\y')).toBe(true);
    expect(check('https://a.example/x/./y')).toBe(true);
    expect(check('https://a.example/x/caf%C3%A9/..y/v1.2')).toBe(false);
    expect(check('https://a.example/x?next=../../y')).toBe(false);
  });
});

describe("Figma's www.figma.com/embed: its url is a figma.com file", () => {
  test.each([
    ['another site', 'https://attacker.example/'],
    ['figma.com as a user name', 'https://www.figma.com@attacker.example/file/LKQ4FJ4bTnCSjedbRpk931'],
    ['a figma.com page that is no file', 'https://www.figma.com/logout'],
    ['http', 'http://www.figma.com/file/LKQ4FJ4bTnCSjedbRpk931'],
    ['a look-alike host', 'https://www.figma.com.attacker.example/file/LKQ4FJ4bTnCSjedbRpk931'],
    ['a dot segment in it', 'https://www.figma.com/file/LKQ4FJ4bTnCSjedbRpk931/%2e%2e/%2e%2e/logout'],
  ])('%s: no player', (_name, target) => {
    const src = `https://www.figma.com/embed?embed_host=oembed&url=${encodeURIComponent(target)}`;
    expect(oembedPlayer(frame(src), config)).toBeUndefined();
    expect(listedPlayer(src)).toBeUndefined();
  });

  test('none, or two: no player; one figma.com file: kept', () => {
    expect(oembedPlayer(frame('https://www.figma.com/embed?embed_host=oembed'), config)).toBeUndefined();
    const file = encodeURIComponent('https://www.figma.com/file/LKQ4FJ4bTnCSjedbRpk931');
    expect(oembedPlayer(frame(`https://www.figma.com/embed?url=${file}&url=${encodeURIComponent('https://attacker.example/')}`), config)).toBeUndefined();
    expect(oembedPlayer(frame(`https://www.figma.com/embed?embed_host=oembed&url=${file}`), config)).toMatchObject({ provider: 'Figma' });
  });
});

describe("a size above the provider's bounds is scaled down to them", () => {
  test("a Reddit post, a CodePen pen, an X post, a Loom video: within their bounds, a box's ratio kept", () => {
    const { maxWidth, maxHeight } = PLAYER_LIST.reddit;
    expect(oembedPlayer(frame('https://embed.reddit.com/r/pics/comments/abc123/', ' width="1200" height="3000"'), config)).toMatchObject({
      width: Math.floor(1200 * (maxHeight / 3000)),
      height: maxHeight,
    });
    expect(maxWidth).toBeLessThan(1200);
    expect(oembedPlayer(frame('https://codepen.io/dudleystorey/embed/HrFBx', ' height="3900"'), config)).toMatchObject({
      height: PLAYER_LIST.codepen.maxHeight,
    });
    const x = oembedPlayer(frame('https://platform.twitter.com/embed/Tweet.html?id=20', ' width="3000" height="600"'), config);
    expect(x).toMatchObject({ width: PLAYER_LIST.x.maxWidth, height: Math.floor(600 * (PLAYER_LIST.x.maxWidth / 3000)) });
    const loom = parseOEmbed(
      JSON.stringify({
        version: '1.0',
        type: 'video',
        html: '<iframe src="https://www.loom.com/embed/0808e55f94a24992b2de488ac56d3815" width="3960" height="2970"></iframe>',
      }),
    );
    expect(oembedPlayer(loom, config)).toMatchObject({ width: 2880, height: 2160, aspectRatio: 3960 / 2970 });
  });

  test("within its bounds, a size is kept; an operator's origin keeps its size (no provider bounds)", () => {
    expect(oembedPlayer(frame('https://embed.reddit.com/r/pics/comments/abc123/', ' width="640" height="900"'), config)).toMatchObject({
      width: 640,
      height: 900,
    });
    const extra = loadConfig({ LINKPREVIEW_EMBED_ORIGINS: 'https://videos.partner.example' });
    expect(oembedPlayer(frame('https://videos.partner.example/p/1', ' width="1200" height="3000"'), extra)).toMatchObject({ width: 1200, height: 3000 });
  });
});

describe("a site's own player is its registrable domain's (Public Suffix List)", () => {
  /** The page's player as the record settles it: the page step, then the pipeline. */
  async function settled(link: string, playerSrc: string) {
    const found = pagePlayers({ link, finalUrl: link, page: twitterPlayer(playerSrc), base: link }, config);
    return (await pagePlayer({ found, othersReady: Promise.resolve(), fetchOEmbed: async () => undefined }, config)).player;
  }

  test('a page on attacker.github.io gets no player on victim.github.io (github.io is a public suffix)', async () => {
    expect(await settled('https://attacker.github.io/post', 'https://victim.github.io/player/1')).toBeUndefined();
    expect(await settled('https://attacker.github.io/post', 'https://github.io/player/1')).toBeUndefined();
  });

  test('docs.example.com keeps its player on player.example.com; its own github.io host keeps its own', async () => {
    expect(await settled('https://docs.example.com/guide', 'https://player.example.com/embed/1')).toMatchObject({
      url: 'https://player.example.com/embed/1',
      provider: 'player.example.com',
    });
    expect(await settled('https://victim.github.io/post', 'https://victim.github.io/player/1')).toMatchObject({ url: 'https://victim.github.io/player/1' });
  });
});
