/**
 * Counts as platforms print them, in the page's language ("1.2M", "4,69 M de suscriptores",
 * "1.234.567"), and exact counts in accessibility texts.
 */

const MULTIPLIERS: [RegExp, number][] = [
  [/^(k|k\.|tsd\.?|mil|thousand)$/i, 1e3],
  [/^(m|m\.|mn|mio\.?|mln|million|millions|millones)$/i, 1e6],
  [/^(b|bn|md|mrd\.?|billion|billions|mil millones)$/i, 1e9],
];

/**
 * A count as platforms print it, in the page's language: `1,234,567`, `1.234.567`, `1 234 567`,
 * `1.2M`, `4,69 M de suscriptores`, `6,8 K`, `152K`, `1.5 mil`, `2 Mio.`; the first number in
 * the text counts. With a multiplier, one `.` or `,` followed by 1-2 digits is the decimal mark;
 * without one, every separator is a thousands separator. A number passes (rounded, not negative).
 * Undefined when there is no count ("No views").
 */
export function parseCount(raw: string | number | undefined | null): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? Math.round(raw) : undefined;
  if (!raw) return undefined;
  const m = /(\d[\d.,' ]*)\s*([A-Za-z][A-Za-z.]*(?: millones)?)?/.exec(raw.replace(/[\u00a0\u202f\u2009]/g, ' '));
  if (!m) return undefined;
  const digits = m[1].trim();
  const mult = MULTIPLIERS.find(([re]) => re.test((m[2] ?? '').trim()))?.[1];
  if (mult) {
    const dec = /^(\d{1,3}(?:[ .,']\d{3})*|\d+)(?:[.,](\d{1,2}))?$/.exec(digits);
    if (!dec) return undefined;
    const whole = Number(dec[1].replace(/[ .,']/g, ''));
    const frac = dec[2] ? Number(`0.${dec[2]}`) : 0;
    return Math.round((whole + frac) * mult);
  }
  return Number(digits.replace(/[ .,']/g, ''));
}

/** The exact number in an accessibility text ("like this video along with 13,725,279 other people"). */
export function exactCount(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = /(\d{1,3}(?:[,. \u00a0\u202f]\d{3})+|\d+)/.exec(text);
  return m ? Number(m[1].replace(/[,. \u00a0\u202f]/g, '')) : undefined;
}
