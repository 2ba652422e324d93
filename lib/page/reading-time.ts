/**
 * Reading time, the one implementation: PAGE (`page.estimatedReadingTimeInMinutes`), TEXT
 * (`text.estimatedReadingTime`) and PDF documents all count their text here.
 *
 * Words are counted in space-separated scripts; Chinese and Japanese (Han, Hiragana, Katakana)
 * have no spaces, so their characters are counted one by one and read at a characters-a-minute
 * rate. Korean Hangul uses spaces and is counted in words. The rates follow Trauzettel-Klosinski
 * et al. (2012, "Standardized assessment of reading performance"): English about 228 words a
 * minute, Chinese about 255 and Japanese about 357 characters a minute.
 */

/** Words a minute in space-separated scripts. */
export const WORDS_PER_MINUTE = 230;
/** Characters a minute for Chinese/Japanese text (between the Chinese and Japanese figures). */
export const CJK_CHARS_PER_MINUTE = 300;

const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]+/gu;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’_-]*/gu;

export interface TextCounts {
  /** Words outside CJK runs. */
  words: number;
  /** Han, Hiragana and Katakana characters. */
  cjkChars: number;
}

/** Words and CJK characters of a text (a CJK run is never also counted as a word). */
export function countText(text: string): TextCounts {
  const cjkChars = text.match(CJK_CHAR)?.length ?? 0;
  const rest = cjkChars ? text.replace(CJK_RUN, ' ') : text;
  return { words: rest.match(WORD)?.length ?? 0, cjkChars };
}

/** Reading units: words plus CJK characters (what TEXT and PDF callers count as "words"). */
export function countWords(text: string): number {
  const c = countText(text);
  return c.words + c.cjkChars;
}

/** Minutes to read, rounded up; 0 when there is nothing to read. A number is a count of words. */
export function readingMinutes(counts: TextCounts | number): number {
  const c = typeof counts === 'number' ? { words: counts, cjkChars: 0 } : counts;
  const minutes = c.words / WORDS_PER_MINUTE + c.cjkChars / CJK_CHARS_PER_MINUTE;
  return minutes > 0 ? Math.max(1, Math.ceil(minutes - 1e-9)) : 0;
}

/** Scales counts made on a prefix to the whole (a truncated TEXT body, the first pages of a PDF). */
export function scaleCounts(c: TextCounts, factor: number): TextCounts {
  return { words: Math.round(c.words * factor), cjkChars: Math.round(c.cjkChars * factor) };
}
