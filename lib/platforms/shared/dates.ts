/**
 * The platforms' dates (epoch seconds or ms, date strings) as UTC date-times, to the second.
 */

/**
 * A date-time in UTC (`2017-04-14T16:02:38.000Z`): from seconds or ms since the epoch (a number,
 * or a string of 9-13 digits) or a date string (`2017-04-14` is midnight UTC). Undefined when it
 * is not a date, or outside 1995-2200 (a misread, not a time any platform stamps).
 */
export function isoDate(v: unknown): string | undefined {
  let d: Date | undefined;
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) d = new Date(v < 1e12 ? v * 1000 : v);
  else if (typeof v === 'string' && /^\d{9,13}$/.test(v.trim())) return isoDate(Number(v.trim()));
  else if (typeof v === 'string' && v.trim()) d = new Date(v.trim());
  if (!d || Number.isNaN(d.getTime())) return undefined;
  const y = d.getUTCFullYear();
  if (y < 1995 || y > 2200) return undefined;
  return d.toISOString();
}

/** Whole seconds (the platforms' own precision). */
export function toSecond(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, '.000Z');
}
