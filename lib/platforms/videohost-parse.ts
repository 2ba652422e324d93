/**
 * Reading YouTube pages: the JSON objects the page embeds (`ytInitialPlayerResponse`,
 * `ytInitialData`), found by walking a balanced object instead of a regex (the objects are
 * megabytes long and contain `};` inside strings), and the counts YouTube prints in the page's
 * language ("1.2M subscribers", "4,69 M de suscriptores", "like this video along with 13,725,279
 * other people").
 */

export type Json = Record<string, unknown>;

/** The JSON object assigned to `name` in the page (`var name = {...};` or `window["name"] = {...};`). */
export function embeddedJson(html: string, name: string): Json | undefined {
  const markers = [`var ${name} = `, `${name} = `, `window["${name}"] = `, `${name}=`];
  for (const marker of markers) {
    let from = 0;
    for (;;) {
      const at = html.indexOf(marker, from);
      if (at < 0) break;
      from = at + marker.length;
      let i = from;
      while (i < html.length && /\s/.test(html[i])) i++;
      if (html[i] !== '{') continue;
      const end = balancedEnd(html, i);
      if (end < 0) continue;
      try {
        const v = JSON.parse(html.slice(i, end));
        if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
      } catch {
        /* not JSON: try the next occurrence */
      }
    }
  }
  return undefined;
}

/** The index after the `}` closing the object that opens at `start`, or -1. */
function balancedEnd(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Follows a path of keys and indexes; undefined when any step is missing. */
export function at(obj: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** Every value stored under `key` anywhere in the tree (depth-first, in document order), up to `limit`. */
export function findAll(obj: unknown, key: string, limit = 50): unknown[] {
  const out: unknown[] = [];
  const stack: unknown[] = [obj];
  let visited = 0;
  while (stack.length && out.length < limit && visited < 2_000_000) {
    const cur = stack.pop();
    visited++;
    if (cur === null || typeof cur !== 'object') continue;
    if (Array.isArray(cur)) {
      for (let i = cur.length - 1; i >= 0; i--) stack.push(cur[i]);
      continue;
    }
    const rec = cur as Json;
    if (key in rec) out.push(rec[key]);
    const keys = Object.keys(rec);
    for (let i = keys.length - 1; i >= 0; i--) if (keys[i] !== key) stack.push(rec[keys[i]]);
  }
  return out;
}

export function findFirst(obj: unknown, key: string): unknown {
  return findAll(obj, key, 1)[0];
}

/** The text of a YouTube text object: `{simpleText}`, `{runs:[{text}]}` or `{content}`; plain strings pass. */
export function ytText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() || undefined;
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Json;
  if (typeof o.simpleText === 'string') return o.simpleText.trim() || undefined;
  if (typeof o.content === 'string') return o.content.trim() || undefined;
  if (Array.isArray(o.runs)) {
    const s = o.runs.map((r) => (r && typeof (r as Json).text === 'string' ? (r as Json).text : '')).join('');
    return s.trim() || undefined;
  }
  return undefined;
}

const MULTIPLIERS: [RegExp, number][] = [
  [/^(k|tsd\.?|mil|thousand|k\.)$/i, 1e3],
  [/^(m|mn|mio\.?|millones|million|millions|mln|m\.)$/i, 1e6],
  [/^(b|bn|md|mrd\.?|billion|billions|mil millones)$/i, 1e9],
];

/**
 * A count as YouTube prints it: "1,234,567", "1.234.567", "1 234 567", "1.2M", "4,69 M",
 * "6,8 K", "215 K", "13M". With a multiplier, one `.` or `,` followed by 1-2 digits is the
 * decimal mark; without one, every separator is a thousands separator. Undefined when the text
 * has no number ("No views").
 */
export function parseCount(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const t = text.replace(/[\u00a0\u202f\u2009]/g, ' ');
  const m = /(\d[\d.,' ]*)\s*([A-Za-z][A-Za-z.]*(?: millones)?)?/.exec(t);
  if (!m) return undefined;
  const digits = m[1].trim();
  const suffix = (m[2] ?? '').trim();
  const mult = MULTIPLIERS.find(([re]) => re.test(suffix))?.[1];
  if (mult) {
    const dec = /^(\d{1,3}(?:[ .,']\d{3})*|\d+)(?:[.,](\d{1,2}))?$/.exec(digits);
    if (!dec) return undefined;
    const whole = Number(dec[1].replace(/[ .,']/g, ''));
    const frac = dec[2] ? Number(`0.${dec[2]}`) : 0;
    return Math.round((whole + frac) * mult);
  }
  const n = Number(digits.replace(/[ .,']/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

/** The exact number in an accessibility text ("like this video along with 13,725,279 other people"). */
export function exactCount(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = /(\d{1,3}(?:[,. \u00a0\u202f]\d{3})+|\d+)/.exec(text);
  return m ? Number(m[1].replace(/[,. \u00a0\u202f]/g, '')) : undefined;
}

/** ISO 8601 durations of the Data API ("PT1H2M3S", "P1DT2S") in seconds. */
export function isoDurationSeconds(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(s);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}

/** A date-time string in UTC (`2017-04-14T16:02:38.000Z`) from anything Date understands. */
export function isoDate(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const d = new Date(typeof v === 'number' ? v : /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The largest of a YouTube thumbnail list (`[{url, width, height}]`). */
export function largestThumbnail(list: unknown): string | undefined {
  if (!Array.isArray(list)) return undefined;
  let best: { url: string; area: number } | undefined;
  for (const t of list) {
    const o = t as Json;
    if (!o || typeof o.url !== 'string') continue;
    const area = (Number(o.width) || 0) * (Number(o.height) || 0);
    if (!best || area >= best.area) best = { url: o.url, area };
  }
  if (!best) return undefined;
  return best.url.startsWith('//') ? `https:${best.url}` : best.url;
}
