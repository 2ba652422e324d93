/**
 * The client's player (lib/client/card-element.ts `buildPlayer`, lib/client/card.ts's play
 * button) on the list it shares with the server (lib/client/players.ts): an iframe is rebuilt
 * only on a listed provider's player place (or an origin the page trusts), with only the sandbox
 * tokens linklens emits and only what linklens grants that kind of player; and renderCard writes
 * no image size past its bounds.
 */
import { parseHTML } from 'linkedom';
import { renderCard } from '../../lib/client/card';
import { PLAYER_ALLOW, REFERRER_POLICY, SANDBOX } from '../../lib/client/players';
import type { LinkRecord } from '../../lib/contract/link';
import { embedOf } from '../../lib/embed/html';
import { galleryRecords } from './card-gallery';

interface El {
  getAttribute(name: string): string | null;
  attributes: ArrayLike<{ name: string; value: string }>;
}
type Build = (doc: unknown, html: string, options?: { playerOrigins?: readonly string[] }) => El | undefined;
// Browser code (DOM types, checked by lib/client/tsconfig.json, not by this project's tsc): run here on linkedom's document.
const { buildPlayer } = require('../../lib/client/card-element') as { buildPlayer: Build };
const { document } = parseHTML('<!doctype html><html><body></body></html>');
const WIDE_OPEN =
  'sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-forms allow-storage-access-by-user-activation allow-top-navigation allow-modals allow-presentation" allow="autoplay; camera; clipboard-write; web-share; fullscreen; encrypted-media; picture-in-picture" referrerpolicy="unsafe-url" allowfullscreen';
const frame = (src: string) => `<iframe src="${src}" ${WIDE_OPEN} title="A player"></iframe>`;
const attrs = (el: El | undefined) => (el ? Object.fromEntries(Array.from(el.attributes).map((a) => [a.name, a.value])) : undefined);

describe('buildPlayer: only the list, only what linklens emits', () => {
  test("a listed provider's player: rebuilt with linklens's sandbox, its kind's allow, linklens's referrer policy", () => {
    const video = buildPlayer(document, frame('https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'));
    expect(attrs(video)).toEqual({
      src: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
      title: 'A player',
      sandbox: SANDBOX,
      allow: PLAYER_ALLOW.video.join('; '),
      referrerpolicy: REFERRER_POLICY,
      class: 'll-player',
    });
    const post = buildPlayer(document, frame('https://embed.reddit.com/r/pics/comments/abc123/?embed=true'));
    expect(post?.getAttribute('allow')).toBe('fullscreen');
    expect(post?.getAttribute('sandbox')?.split(' ')).not.toEqual(expect.arrayContaining(['allow-forms']));
  });

  test('the element the server builds passes as it is', () => {
    const embed = embedOf({ type: 'audio', url: 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC', provider: 'Spotify', height: 152 }, 'A song');
    expect(attrs(buildPlayer(document, embed.html))).toMatchObject({ sandbox: SANDBOX, allow: 'autoplay; encrypted-media' });
  });

  test.each([
    ['any other https origin', 'https://evil.example/embed/1'],
    ["a provider's origin off its player paths", 'https://www.youtube.com/redirect?q=https://evil.example'],
    ['an encoded slash and dots', 'https://embed.reddit.com/r/pics/comments/abc123/%2F..%2F..%2Flogin'],
    ["Figma's embed of another site", `https://www.figma.com/embed?url=${encodeURIComponent('https://attacker.example/')}`],
    ['a look-alike host', 'https://player.vimeo.com.evil.example/video/76979871'],
    ['http', 'http://player.vimeo.com/video/76979871'],
  ])('%s: no player', (_name, src) => {
    expect(buildPlayer(document, frame(src))).toBeUndefined();
  });

  test('an origin the page trusts (playerOrigins): built, with what a video may use at most', () => {
    const html = frame('https://videos.partner.example/p/1');
    expect(buildPlayer(document, html)).toBeUndefined();
    const built = buildPlayer(document, html, { playerOrigins: ['https://videos.partner.example'] });
    expect(attrs(built)).toMatchObject({ src: 'https://videos.partner.example/p/1', sandbox: SANDBOX, allow: PLAYER_ALLOW.video.join('; ') });
    // Trusting an origin never opens a listed provider's origin to its other paths.
    expect(buildPlayer(document, frame('https://www.youtube.com/redirect'), { playerOrigins: ['https://www.youtube.com'] })).toBeUndefined();
  });
});

describe('renderCard', () => {
  const records = galleryRecords('https://img.example', 'https://player.example');
  const parse = (html: string) => parseHTML(`<!doctype html><html><body>${html}</body></html>`).document;

  test('a player the client would not build gets no play button; on a trusted origin, or a listed provider, it does', () => {
    expect(parse(renderCard(records.video)).querySelector('button.ll-play')).toBeNull();
    expect(parse(renderCard(records.video, { playerOrigins: ['https://player.example'] })).querySelector('button.ll-play')).not.toBeNull();
    const listed: LinkRecord = {
      ...records.video,
      embed: embedOf({ type: 'video', url: 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', provider: 'YouTube', aspectRatio: 16 / 9 }, 'Ice'),
    };
    expect(parse(renderCard(listed)).querySelector('button.ll-play')).not.toBeNull();
  });

  test('image sizes past the bounds are not written (width="99999999"), the others are, whole', () => {
    const image = records.video.image;
    if (!image?.large) throw new Error('the gallery video has a large image');
    const huge: LinkRecord = { ...records.video, image: { ...image, large: { ...image.large, width: 99_999_999, height: 52_000_000 } } };
    const img = parse(renderCard(huge)).querySelector('img.ll-image');
    expect(img?.getAttribute('width')).toBe(String(image.medium?.width));
    expect(img?.getAttribute('srcset')).not.toContain('99999999');
    const fractional: LinkRecord = { ...records.video, image: { ...image, large: { ...image.large, width: 1200.4, height: 627.6 } } };
    const sized = parse(renderCard(fractional)).querySelector('img.ll-image');
    expect([sized?.getAttribute('width'), sized?.getAttribute('height')]).toEqual(['1200', '628']);
    expect(sized?.getAttribute('srcset')).toContain(' 1200w');
  });
});
