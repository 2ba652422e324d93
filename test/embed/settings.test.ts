/**
 * The embedded players' settings: the operator's origins (https only, normalized), the off switch
 * (no player and no fetch for one), the `no-embed` host rule on the link, where it led or the
 * player's host (and `deny` on the player's host), Twitch's parents and Dailymotion's player id.
 */
import { ConfigError, loadConfig } from '../../lib/config';
import type { LinkRecord } from '../../lib/contract/link';
import { oembedWorthFetching } from '../../lib/embed/oembed-player';
import { linkPlayer, pagePlayers } from '../../lib/embed/page';
import { fileEmbed, gatedEmbed } from '../../lib/embed/record';
import { parsePageBytes } from '../../lib/extract/parse-page';

const page = (head: string) => parsePageBytes(Buffer.from(`<html><head>${head}</head><body></body></html>`), 'utf-8');
const at = (url: string, head = '') => ({ link: url, finalUrl: url, page: page(head), base: url });

describe('reading the settings', () => {
  test('the defaults: embeds on, no extra origin, no parent, no Dailymotion player', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ embeds: 'on', embedOrigins: [], embedParents: [], dailymotionPlayer: '' });
  });

  test('origins are normalized; http, a path or a bare host is refused, naming the variable', () => {
    expect(loadConfig({ LINKPREVIEW_EMBED_ORIGINS: 'https://Videos.Partner.example/, https://player.example:8443' }).embedOrigins).toEqual([
      'https://videos.partner.example',
      'https://player.example:8443',
    ]);
    for (const bad of ['http://videos.partner.example', 'https://videos.partner.example/embed', 'videos.partner.example', 'https://*.example']) {
      expect(() => loadConfig({ LINKPREVIEW_EMBED_ORIGINS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ LINKPREVIEW_EMBED_ORIGINS: bad })).toThrow(/LINKPREVIEW_EMBED_ORIGINS/);
    }
  });

  test('the switch, the parents and the player id are checked', () => {
    expect(loadConfig({ LINKPREVIEW_EMBEDS: 'off' }).embeds).toBe('off');
    expect(() => loadConfig({ LINKPREVIEW_EMBEDS: 'maybe' })).toThrow(/LINKPREVIEW_EMBEDS/);
    expect(loadConfig({ LINKPREVIEW_EMBED_PARENTS: 'App.Example.com,example.com' }).embedParents).toEqual(['app.example.com', 'example.com']);
    expect(() => loadConfig({ LINKPREVIEW_EMBED_PARENTS: 'https://app.example.com' })).toThrow(/LINKPREVIEW_EMBED_PARENTS/);
    expect(() => loadConfig({ LINKPREVIEW_EMBED_DAILYMOTION_PLAYER: 'x1"><' })).toThrow(/LINKPREVIEW_EMBED_DAILYMOTION_PLAYER/);
  });
});

describe('the off switch', () => {
  const off = loadConfig({ LINKPREVIEW_EMBEDS: 'off' });

  test('no player from the link or the page, and no oEmbed fetch for one', () => {
    expect(
      pagePlayers(at('https://vimeo.com/76979871', '<meta name="twitter:player" content="https://player.vimeo.com/video/76979871">'), off),
    ).toBeUndefined();
    expect(
      gatedEmbed(
        { type: 'video', url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', provider: 'YouTube', aspectRatio: 16 / 9 },
        'A',
        ['https://www.youtube.com/watch?v=dQw4w9WgXcQ'],
        off,
      ),
    ).toBeUndefined();
    const record = { url: 'https://media.example/clip.mp4', type: 'VIDEO', ok: true } as LinkRecord;
    expect(fileEmbed(record, record.url, off)).toBeUndefined();
    expect(fileEmbed(record, record.url, loadConfig({}))?.html).toMatch(/^<video /);
  });

  test('oEmbed is worth fetching for a player only from a player site', () => {
    const on = loadConfig({});
    expect(oembedWorthFetching('https://vimeo.com/api/oembed.json?url=x', on)).toBe(true);
    expect(oembedWorthFetching('https://www.youtube.com/oembed?url=x', on)).toBe(true);
    expect(oembedWorthFetching('https://blog.example/wp-json/oembed/1.0/embed?url=x', on)).toBe(false);
    expect(
      oembedWorthFetching('https://blog.example/wp-json/oembed/1.0/embed?url=x', loadConfig({ LINKPREVIEW_EMBED_ORIGINS: 'https://player.blog.example' })),
    ).toBe(true);
  });
});

describe('the no-embed host rule', () => {
  const rules = (r: string) => loadConfig({ LINKPREVIEW_HOST_RULES: r });

  test("on the link's host: no player for its links, other hosts unchanged", () => {
    const config = rules('vimeo.com=no-embed');
    expect(pagePlayers(at('https://vimeo.com/76979871'), config)).toBeUndefined();
    expect(pagePlayers(at('https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC'), config)?.direct?.provider).toBe('Spotify');
  });

  test('where the link led: none either', () => {
    const config = rules('www.youtube.com=no-embed');
    const found = pagePlayers(
      { link: 'https://short.example/abc', finalUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', page: page(''), base: 'https://www.youtube.com/' },
      config,
    );
    expect(found).toBeUndefined();
  });

  test("on the player's host: no player of it, in any link's record", () => {
    const meta = '<meta name="twitter:player" content="https://www.youtube.com/embed/dQw4w9WgXcQ">';
    const config = rules('youtube-nocookie.com=no-embed');
    expect(linkPlayer('https://www.youtube.com/watch?v=dQw4w9WgXcQ', { config })).toBeUndefined();
    expect(pagePlayers(at('https://blog.example/post', meta), config)).toEqual({});
    expect(pagePlayers(at('https://blog.example/post', meta), loadConfig({}))?.meta?.provider).toBe('YouTube');
  });

  test("deny on the player's host: no player either (a closed deployment allows its players by name)", () => {
    const closed = rules('blog.example=allow;*=deny');
    const meta = '<meta name="twitter:player" content="https://player.vimeo.com/video/76979871">';
    expect(pagePlayers(at('https://blog.example/post', meta), closed)).toEqual({});
    const open = rules('blog.example=allow;player.vimeo.com=allow;*=deny');
    expect(pagePlayers(at('https://blog.example/post', meta), open)?.meta?.url).toBe('https://player.vimeo.com/video/76979871');
  });

  test('a platform link: the gate says no for the link or where it led', () => {
    const player = { type: 'rich' as const, url: 'https://platform.twitter.com/embed/Tweet.html?id=20&dnt=true', provider: 'X', width: 550, height: 600 };
    expect(gatedEmbed(player, 'A post', ['https://x.com/jack/status/20'], rules('x.com=no-embed'))).toBeUndefined();
    expect(gatedEmbed(player, 'A post', ['https://t.co/abc', 'https://x.com/jack/status/20'], rules('x.com=no-embed'))).toBeUndefined();
    expect(gatedEmbed(player, 'A post', ['https://x.com/jack/status/20'], rules('twitter.com=no-embed'))).toBeUndefined();
    expect(gatedEmbed(player, 'A post', ['https://x.com/jack/status/20'], loadConfig({}))?.url).toBe(player.url);
  });
});
