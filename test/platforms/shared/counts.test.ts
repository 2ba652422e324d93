/** Counts as platforms print them, in the page's language (lib/platforms/shared/counts.ts). */
import { parseCount } from '../../../lib/platforms/shared/counts';

describe('videohost counts as printed', () => {
  it.each([
    ['1.2M subscribers', 1_200_000],
    ['4,69 M de suscriptores', 4_690_000],
    ['4,69 millones de suscriptores', 4_690_000],
    ['6,8 K', 6_800],
    ['215 K', 215_000],
    ['13M', 13_000_000],
    ['1,234,567 views', 1_234_567],
    ['1.234.567 Aufrufe', 1_234_567],
    ['345 videos', 345],
    ['No views', undefined],
    ['2 Mio. Abonnenten', 2_000_000],
    ['1.5B views', 1_500_000_000],
  ])('%s -> %s', (text, n) => {
    expect(parseCount(text)).toBe(n);
  });
});
