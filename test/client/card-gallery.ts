/**
 * The card gallery: one record of each shape a card must handle (a page with an image, no image,
 * no description, a long title, right to left, a video with a player, a PDF, a platform post, a
 * product, a repository, `ok: false`, and hostile strings everywhere), with hosted images and a
 * player on the origins the test serves. Used by the renderer's unit tests and the browser test.
 */
import type { ImageSet, LinkRecord } from '../../lib/contract/link';
import { embedOf } from '../../lib/embed/html';

/** The sizes the gallery's image server answers (a 1.91:1 image, as og:images are). */
export const IMAGE_SIZES = { thumbnail: [320, 168], medium: [640, 335], large: [1200, 628] } as const;

/** A real blurhash (4 x 3 components), the one blurhash's own README shows. */
export const BLURHASH = 'LEHV6nWB2yk8pyo0adR*.7kCMdnj';

export function imageSet(base: string, name: string, alt?: string): ImageSet {
  const asset = (size: keyof typeof IMAGE_SIZES) => ({ url: `${base}/img/${name}-${size}.png`, width: IMAGE_SIZES[size][0], height: IMAGE_SIZES[size][1] });
  return {
    thumbnail: asset('thumbnail'),
    medium: asset('medium'),
    large: asset('large'),
    original: asset('large'),
    dominantColor: '#4a6b8a',
    blurhash: BLURHASH,
    ...(alt ? { alt } : {}),
  };
}

const HOSTILE = `"><img src=x onerror="window.__pwned='attr'"><script>window.__pwned='script'</script>`;

/** The gallery's records by name: `base` serves the images and icons, `player` is the stand-in player origin. */
export function galleryRecords(base: string, player: string): Record<string, LinkRecord> {
  const common = { updatedAt: '2026-11-27T10:00:00.000Z', status: 200, redirected: false, redirectionCount: 0, redirectionTrail: [] };
  const icon = { url: `${base}/img/icon.png`, width: 32, height: 32, backgroundColor: '#ffffff' };
  let next = 1;
  const page = (name: string, extra: Partial<LinkRecord>): LinkRecord => ({
    id: next++,
    ok: true,
    url: `https://news.example/${name}`,
    domain: 'news.example',
    type: 'PAGE',
    title: 'Lake ice report: the thaw came two weeks early this year',
    description: 'Measurements from forty lakes show the ice broke up earlier than in any year since records began.',
    siteName: 'Northern News',
    icon,
    language: 'en',
    ...common,
    ...extra,
  });
  return {
    'page-image': page('page-image', {
      author: { name: 'Ana Lindqvist' },
      publishedAt: '2019-10-19T23:30:00-07:00',
      image: imageSet(base, 'lake', 'A frozen lake at dawn, cracks across the ice'),
      page: { estimatedReadingTimeInMinutes: 6 },
    }),
    'no-image': page('no-image', { author: { name: 'Ana Lindqvist' }, publishedAt: '2024-03-02T00:00:00Z' }),
    'no-description': page('no-description', { description: undefined, image: imageSet(base, 'lake') }),
    'long-title': page('long-title', {
      title: `${'A very long headline that keeps going well past any reasonable length for a card '.repeat(4)}Supercalifragilisticexpialidocious_${'x'.repeat(120)}`,
      description: `${'word '.repeat(120)}https://example.com/${'segment/'.repeat(30)}`,
      image: imageSet(base, 'lake', 'Lake'),
    }),
    rtl: page('rtl', {
      url: 'https://news.example/ar/1',
      title: 'تقرير جليد البحيرة: جاء الذوبان مبكرا بأسبوعين هذا العام',
      description: 'تظهر القياسات من أربعين بحيرة أن الجليد تكسر في وقت أبكر من أي عام منذ بدء السجلات.',
      siteName: 'أخبار الشمال',
      language: 'ar',
      author: { name: 'سارة' },
      image: imageSet(base, 'lake', 'بحيرة متجمدة'),
    }),
    video: {
      id: next++,
      ok: true,
      url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      domain: 'youtube.com',
      type: 'VIDEOHOST_VIDEO',
      title: 'Ice breaking on the lake, filmed from the shore',
      description: 'Four minutes of the lake ice breaking up in spring.',
      siteName: 'YouTube',
      author: { name: 'Lake Watch', url: 'https://www.youtube.com/@lakewatch' },
      publishedAt: '2025-04-01T08:00:00Z',
      icon,
      image: imageSet(base, 'lake', 'The lake, half thawed'),
      videohostVideo: { id: 1, videoId: 'dQw4w9WgXcQ', duration: 754 },
      // The element the service builds (lib/embed/html.ts), on the test's stand-in player origin.
      embed: embedOf({ type: 'video', url: `${player}/embed/dQw4w9WgXcQ`, provider: 'YouTube', aspectRatio: 16 / 9 }, 'Ice breaking on the lake'),
      ...common,
    },
    pdf: {
      id: next++,
      ok: true,
      url: 'https://lakes.example/report-2025.pdf',
      domain: 'lakes.example',
      type: 'DOCUMENT',
      title: 'Annual lake ice report 2025',
      description: 'The full report with tables for every lake.',
      document: { title: 'Annual lake ice report 2025', pageCount: 48, isEncrypted: false, type: 'PDF', image: imageSet(base, 'page') },
      ...common,
    },
    post: {
      id: next++,
      ok: true,
      url: 'https://x.com/lakewatch/status/1',
      domain: 'x.com',
      type: 'MICROBLOG_POST',
      title: 'Lake Watch on X',
      description: 'The ice is gone from the north bay today, two weeks early. Photos from this morning.',
      siteName: 'X',
      author: { name: 'Lake Watch', url: 'https://x.com/lakewatch' },
      publishedAt: '2025-04-02T06:12:00Z',
      image: imageSet(base, 'lake', 'Open water in the north bay'),
      microblogPost: { id: 1, text: 'The ice is gone from the north bay today.' },
      ...common,
    },
    product: {
      id: next++,
      ok: true,
      url: 'https://www.amazon.com/dp/B000000001',
      domain: 'amazon.com',
      type: 'RETAILER_PRODUCT',
      title: 'Ice auger, 8 inch, hand-powered',
      description: 'A steel hand auger for ice up to 1 m thick.',
      siteName: 'Amazon',
      image: imageSet(base, 'page', 'The auger'),
      retailerProduct: { productId: 'B000000001', price: 49.99, currency: 'USD' },
      ...common,
    },
    repository: {
      id: next++,
      ok: true,
      url: 'https://github.com/lakewatch/ice-data',
      domain: 'github.com',
      type: 'CODEHOST_REPOSITORY',
      title: 'lakewatch/ice-data',
      description: 'Ice-out dates for 40 lakes since 1850.',
      siteName: 'GitHub',
      codehostRepository: { name: 'ice-data', starsCount: 12345, languages: [{ name: 'Python', color: '#3572a5', percentage: 90 }] },
      ...common,
    },
    failed: { ...common, id: next++, ok: false, url: 'https://intranet.example/private/doc', domain: 'intranet.example', type: 'UNKNOWN', status: 403, icon },
    hostile: {
      id: next++,
      ok: true,
      url: `https://evil.example/?q=${encodeURIComponent(HOSTILE)}`,
      domain: `evil.example${HOSTILE}`,
      type: 'PAGE',
      title: `Title ${HOSTILE}`,
      description: `Description </p>${HOSTILE}<a href="javascript:window.__pwned='href'">x</a>`,
      siteName: `Site ${HOSTILE}`,
      author: { name: `Author ${HOSTILE}` },
      publishedAt: `2020-01-01${HOSTILE}`,
      language: `en"><script>window.__pwned='lang'</script>`,
      themeColor: `#fff${HOSTILE}`,
      icon: { url: `javascript:window.__pwned='icon'`, width: 16, height: 16, backgroundColor: `red;background:url(javascript:1)${HOSTILE}` },
      image: {
        ...imageSet(base, 'lake', `Alt ${HOSTILE}`),
        blurhash: `${BLURHASH}"><script>window.__pwned='blurhash'</script>`,
        dominantColor: `#000;${HOSTILE}`,
      },
      embed: {
        type: 'rich',
        url: `${player}/embed/hostile`,
        provider: `Provider ${HOSTILE}`,
        html: `<script>window.__pwned='embed'</script><iframe src="javascript:window.parent.__pwned='iframe'" onload="window.__pwned='onload'" srcdoc="<script>parent.__pwned='srcdoc'</script>"></iframe>`,
      },
      ...common,
    },
  };
}
