/**
 * A page's player as the jobs step settles it (lib/embed/pipeline.ts): the link's own player
 * first, with no fetch; oEmbed's when it was fetched for the fields; the page's metas; oEmbed
 * fetched for the player alone only when nothing else gave one and its endpoint is a player
 * site's, dropped (and aborted) when the rest of the record is ready first; a remembered player
 * is used without a fetch, after the allow list checked it again. No timers: the order of
 * promises decides.
 */
import { loadConfig } from '../../lib/config';
import { type PagePlayerSources, pagePlayer } from '../../lib/embed/pipeline';
import type { Player } from '../../lib/embed/types';
import type { OEmbedData } from '../../lib/extract/rules';

const config = loadConfig({});
const VIMEO = '<iframe src="https://player.vimeo.com/video/76979871" width="640" height="360"></iframe>';
const vimeo: OEmbedData = { type: 'video', provider_name: 'Vimeo', html: VIMEO };
const direct: Player = { type: 'video', url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', provider: 'YouTube', aspectRatio: 16 / 9 };
const meta: Player = { type: 'video', url: 'https://player.example-news.com/embed/1', provider: 'player.example-news.com', aspectRatio: 16 / 9 };

/** A deferred promise. */
function later<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function sources(more: Partial<PagePlayerSources>) {
  const asked: { url: string; signal: AbortSignal }[] = [];
  const s: PagePlayerSources = {
    found: {},
    othersReady: new Promise(() => {}),
    fetchOEmbed: async (url, signal) => {
      asked.push({ url, signal });
      return vimeo;
    },
    ...more,
  };
  return { s, asked };
}

const ENDPOINT = 'https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F76979871';

test("the link's own player: no fetch", async () => {
  const { s, asked } = sources({ found: { direct, meta }, oembedUrl: ENDPOINT });
  expect(await pagePlayer(s, config)).toEqual({ player: direct });
  expect(asked).toEqual([]);
});

test("oEmbed fetched for the fields: its player over the page's metas; none in it: the metas'", async () => {
  const withOne = sources({ found: { meta }, oembed: Promise.resolve(vimeo), oembedUrl: ENDPOINT });
  expect((await pagePlayer(withOne.s, config)).player?.url).toBe('https://player.vimeo.com/video/76979871');
  const withNone = sources({ found: { meta }, oembed: Promise.resolve({ type: 'rich', html: '<blockquote>Hi</blockquote>' }), oembedUrl: ENDPOINT });
  expect(await pagePlayer(withNone.s, config)).toEqual({ player: meta });
  expect([...withOne.asked, ...withNone.asked]).toEqual([]);
});

test("the page's metas: no fetch", async () => {
  const { s, asked } = sources({ found: { meta }, oembedUrl: ENDPOINT });
  expect(await pagePlayer(s, config)).toEqual({ player: meta });
  expect(asked).toEqual([]);
});

test('nothing else: oEmbed fetched for the player, beside the jobs, and remembered', async () => {
  const { s, asked } = sources({ oembedUrl: ENDPOINT });
  const out = await pagePlayer(s, config);
  expect(asked.map((a) => a.url)).toEqual([ENDPOINT]);
  expect(out.player?.url).toBe('https://player.vimeo.com/video/76979871');
  expect(out.fetched).toEqual(out.player);
});

test('the rest of the record ready first: the fetch is dropped and aborted, the record does not wait', async () => {
  const answer = later<OEmbedData | undefined>();
  const ready = later<void>();
  const asked: AbortSignal[] = [];
  const { s } = sources({
    oembedUrl: ENDPOINT,
    othersReady: ready.promise,
    fetchOEmbed: (_url, signal) => {
      asked.push(signal);
      return answer.promise;
    },
  });
  const settled = pagePlayer(s, config);
  ready.resolve();
  expect(await settled).toEqual({});
  expect(asked).toHaveLength(1);
  expect(asked[0].aborted).toBe(true);
  answer.resolve(vimeo);
});

test('an endpoint on no player site, a wall or embeds off: no fetch', async () => {
  const blog = sources({ oembedUrl: 'https://blog.example/wp-json/oembed/1.0/embed?url=x' });
  expect(await pagePlayer(blog.s, config)).toEqual({});
  const wall = sources({ found: undefined, oembedUrl: ENDPOINT });
  expect(await pagePlayer(wall.s, config)).toEqual({});
  expect([...blog.asked, ...wall.asked]).toEqual([]);
});

test('a remembered player: used without a fetch, if the allow list still takes it', async () => {
  const kept: Player = { type: 'video', url: 'https://player.vimeo.com/video/76979871', provider: 'Vimeo', aspectRatio: 16 / 9 };
  const { s, asked } = sources({ oembedUrl: ENDPOINT, remembered: Promise.resolve(kept) });
  expect(await pagePlayer(s, config)).toEqual({ player: kept });
  expect(asked).toEqual([]);
  // The operator has since turned the player's host off: the memo's player is not used, oEmbed is asked (and its player dropped too).
  const off = loadConfig({ LINKPREVIEW_HOST_RULES: 'player.vimeo.com=no-embed' });
  const again = sources({ oembedUrl: ENDPOINT, remembered: Promise.resolve(kept) });
  expect(await pagePlayer(again.s, off)).toEqual({});
});
