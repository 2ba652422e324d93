/**
 * Reading YouTube pages: the JSON objects the page embeds (`ytInitialPlayerResponse`,
 * `ytInitialData`), found by walking a balanced object instead of a regex (the objects are
 * megabytes long and contain `};` inside strings), YouTube's text objects, thumbnails and the
 * Data API's durations. Counts and dates are read by ../shared/counts.ts and ../shared/dates.ts.
 */
import type { Json } from '../shared/json.js';

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

/** ISO 8601 durations of the Data API ("PT1H2M3S", "P1DT2S") in seconds. */
export function isoDurationSeconds(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(s);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
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
