/**
 * The caller's Accept-Language as a language list (lib/contract/accept-language.ts): valid entries
 * kept in the caller's order with their weights, every kind of garbage dropped, the output
 * bounded however long the value. Through the handler, the local server and the Lambda: see
 * test/http/accept-language-paths.test.ts.
 */
import { acceptLanguageList, MAX_LANGUAGE_LIST_CHARS, MAX_LANGUAGES } from '../../lib/contract/accept-language';

/** What may come out: ASCII tags, weights and commas, nothing else. */
const CLEAN = /^[A-Za-z0-9*;=.,-]*$/;

describe('acceptLanguageList: valid lists are kept', () => {
  test.each([
    ['de', 'de'],
    ['de-CH', 'de-CH'],
    ['de-CH,de;q=0.9,en;q=0.8', 'de-CH,de;q=0.9,en;q=0.8'],
    ['de-CH, de;q=0.9 , en ;q=0.8', 'de-CH,de;q=0.9,en;q=0.8'],
    ['\tfr-FR;\tq=0.5', 'fr-FR;q=0.5'],
    ['en;Q=0.7', 'en;q=0.7'],
    ['*', '*'],
    ['fr, *;q=0.1', 'fr,*;q=0.1'],
    ['zh-Hant-TW, sr-Latn-RS;q=0.4', 'zh-Hant-TW,sr-Latn-RS;q=0.4'],
    ['x-klingon, i-enochian', 'x-klingon,i-enochian'],
    ['de-1996', 'de-1996'],
    ['en;q=1, fr;q=1.000, it;q=0, es;q=0., pt;q=0.123', 'en;q=1,fr;q=1.000,it;q=0,es;q=0.,pt;q=0.123'],
    [',, de ,,', 'de'],
  ])('%j -> %j', (value, clean) => {
    expect(acceptLanguageList(value)).toBe(clean);
  });

  test('nothing, or nothing valid, is undefined', () => {
    for (const value of [undefined, '', '   ', ',,,', ';q=0.5', 'de\r\n', '日本語', '\u2028']) expect(acceptLanguageList(value)).toBeUndefined();
  });
});

describe('acceptLanguageList: garbage is dropped, the rest kept', () => {
  test.each([
    ['CR/LF inside an entry', 'de\r\nX-Injected: 1, fr', 'fr'],
    ['a bare LF', 'de\nfr, en', 'en'],
    ['CR/LF between entries', 'de,\r\n fr, en', 'de,en'],
    ['U+2028 and U+2029', 'de\u2028, fr\u2029, en', 'en'],
    ['non-ASCII letters', 'fr, español, 日本語, ja', 'fr,ja'],
    ['Latin-1 bytes as Node reads them', 'de, \u00e2\u0080\u00a8, en', 'de,en'],
    ['control characters', 'de\u0000, fr\u0007, it\u007f, en', 'en'],
    ['NUL in a weight', 'de;q=0.5\u0000, en', 'en'],
    ['a subtag longer than 8', 'de-abcdefghi, en', 'en'],
    ['a primary tag longer than 8 or not letters', 'abcdefghi, 12, en', 'en'],
    ['an empty subtag', 'de--CH, de-, -de, en', 'en'],
    ['an underscore (a locale, not a tag)', 'de_CH, de', 'de'],
    ['a weight above 1', 'de;q=1.5, en;q=2', undefined],
    ['a weight with 4 decimals', 'de;q=0.1234, en', 'en'],
    ['a weight that is not a number', 'de;q=abc, fr;q=, it;q=.5, en', 'en'],
    ['another parameter', 'de;level=1, fr;q=0.5;x=1, en', 'en'],
    ['a quoted string', '"de", en', 'en'],
    ['spaces inside a tag', 'de CH, en', 'en'],
    ['a header line smuggled in', 'en\r\n\r\nGET /admin HTTP/1.1', undefined],
  ])('%s', (_name, value, clean) => {
    expect(acceptLanguageList(value)).toBe(clean);
  });
});

describe('acceptLanguageList: bounded', () => {
  test(`at most ${MAX_LANGUAGES} entries, the caller's first ones`, () => {
    const tags = Array.from({ length: 20 }, (_, i) => `l${String.fromCharCode(97 + i)}`);
    expect(acceptLanguageList(tags.join(','))).toBe(tags.slice(0, MAX_LANGUAGES).join(','));
  });

  test(`at most ${MAX_LANGUAGE_LIST_CHARS} characters: an entry that does not fit is dropped, a shorter one after it kept`, () => {
    const long = Array.from({ length: 28 }, () => 'abcdefgh').join('-'); // 251 characters
    const out = acceptLanguageList(`${long}, zh-Hant-TW, en`);
    expect(out).toBe(`${long},en`);
    expect(out?.length).toBeLessThanOrEqual(MAX_LANGUAGE_LIST_CHARS);
  });

  test('200,000 characters: a bounded, clean answer, at once', () => {
    const values = [
      'a'.repeat(200_000),
      `de,${'x'.repeat(200_000)},fr`,
      `${'de-CH,'.repeat(40_000)}`,
      `${','.repeat(200_000)}en`,
      `en,${'\r\n'.repeat(100_000)}`,
      `${'日本'.repeat(100_000)},en`,
      `${'de-'.repeat(66_666)}de`,
    ];
    const started = performance.now();
    const outs = values.map(acceptLanguageList);
    expect(performance.now() - started).toBeLessThan(500);
    expect(outs).toEqual([undefined, 'de,fr', Array(MAX_LANGUAGES).fill('de-CH').join(','), undefined, 'en', 'en', undefined]);
    for (const out of outs) if (out) expect(out.length).toBeLessThanOrEqual(MAX_LANGUAGE_LIST_CHARS);
  });

  test('whatever comes in, only ASCII tags, weights and commas come out', () => {
    const alphabet = ['de', 'en-US', '*', ';', 'q=0.5', 'q=', ',', ' ', '\t', '\r', '\n', '\u2028', 'é', '\u0000', '-', '"', 'x'.repeat(9)];
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      const value = Array.from({ length: 1 + (next() % 12) }, () => alphabet[next() % alphabet.length]).join('');
      const out = acceptLanguageList(value);
      if (out === undefined) continue;
      expect(out).toMatch(CLEAN);
      // The clean list reads back as itself.
      expect(acceptLanguageList(out)).toBe(out);
    }
  });
});
