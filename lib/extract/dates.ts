/**
 * When a page was first published: the `publishedAt` rules (first match wins, in this order) and
 * the date parser they share.
 *
 *  1. JSON-LD `datePublished` of the nodes that describe the page (articles first), then their
 *     `dateCreated` and `uploadDate`;
 *  2. the publication metas of the publishing systems: `article:published_time` (Open Graph),
 *     parsely, sailthru, Dublin Core `dc.date.issued`/`dcterms.issued`/`dcterms.created`,
 *     citation, and the plain `date`/`pubdate`/`publish-date` family;
 *  3. microdata `itemprop=datePublished` (a meta, a `<time>`, any element);
 *  4. a `<time datetime>` the page marks as the publication (`pubdate`, a class naming it, in the
 *     article's header), then the first `<time datetime>` of the page;
 *  5. the date in the URL's path (`/2019/10/19/`, `/2019-10-19-…`, `/20191019/`);
 *  6. only then the modification dates (`dateModified`, `article:modified_time`, …): never when a
 *     publication date exists.
 *
 * A value is read as ISO 8601 (with or without a time and an offset), RFC 2822, a day with a month
 * name in English (`Aug 24, 2016`, `24 August 2016`), a numeric day with the year last in the
 * page's order (`08/10/2016` on an American page, `19.10.2019`), or epoch seconds or milliseconds. It becomes an
 * RFC 3339 date-time that keeps the page's own offset (so its calendar day is the publisher's);
 * a time without an offset is taken as UTC, and a date with no time becomes midnight UTC
 * (`2019-10-19T00:00:00Z`). A date before 1995 or after `now` (the rules' clock) is no publication date.
 */
import { type LdNode, ldTypes } from './json-ld.js';
import type { PageData } from './page-data.js';

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const MIN_YEAR = 1995;
/** A page's clock may run a little ahead of ours. */
const FUTURE_SLACK_MS = 5 * 60_000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** A calendar day and an optional time, as written, with its offset (`Z`, `+02:00`) when it has one. */
interface Parts {
  y: number;
  mo: number;
  d: number;
  time?: { h: number; mi: number; s: number; ms?: string; offset?: string };
}

function validDay(p: Parts): boolean {
  if (p.mo < 1 || p.mo > 12 || p.d < 1 || p.d > 31 || p.y < MIN_YEAR || p.y > 2200) return false;
  return new Date(Date.UTC(p.y, p.mo - 1, p.d)).getUTCDate() === p.d;
}

function offsetOf(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (/^z$/i.test(raw) || /^(etc\/)?(gmt|utc|ut)$/i.test(raw)) return 'Z';
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(raw);
  if (!m) return undefined;
  return m[2] === '00' && (m[3] ?? '00') === '00' ? '+00:00' : `${m[1]}${m[2]}:${m[3] ?? '00'}`;
}

const ISO = /^(\d{4})-?(\d{2})-?(\d{2})(?:[T\s](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(z|[+-]\d{2}(?::?\d{2})?|(?:etc\/)?gmt|utc)?)?$/i;
const SLASHED = /^(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?:[T\s](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
// `08/10/2016`, `19.10.2019 08:50`: the year last, the day and month in the page's order.
const YEAR_LAST = /^(\d{1,2})([/.])(\d{1,2})[/.](\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
// `Tue, 11 Mar 2015 15:46:00 GMT`, `24 August 2016`, `11 March 2015 3:46 PM`
const DAY_MONTH =
  /^(?:[a-z]{3,9},?\s+)?(\d{1,2})(?:st|nd|rd|th)?\.?\s+([a-z]{3,9})\.?,?\s+(\d{4})(?:,?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?\s*(z|gmt|utc|[+-]\d{2}:?\d{2})?)?/i;
// `Aug 24, 2016`, `March 11, 2015 3:46 PM`, `Wednesday, March 11, 2015`
const MONTH_DAY =
  /^(?:[a-z]{3,9},?\s+)?([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?:,?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?\s*(z|gmt|utc|[+-]\d{2}:?\d{2})?)?/i;

/** A time of day as a pattern's groups give it (`ampm`: `am`/`pm` for a 12-hour clock; `zone`: `Z`, `GMT`, `+02:00`). */
interface Clock {
  h?: string;
  mi?: string;
  s?: string;
  ampm?: string;
  zone?: string;
  ms?: string;
}

function withClock(p: Parts, { h, mi, s, ampm, zone, ms }: Clock): Parts {
  if (h === undefined || mi === undefined) return p;
  let hour = Number(h);
  if (ampm) hour = (hour % 12) + (/pm/i.test(ampm) ? 12 : 0);
  if (hour > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return p;
  return { ...p, time: { h: hour, mi: Number(mi), s: Number(s ?? 0), ...(ms ? { ms } : {}), offset: offsetOf(zone) } };
}

function monthNumber(name: string): number | undefined {
  return MONTHS[name.toLowerCase().slice(0, name.length >= 4 && name.toLowerCase().startsWith('sept') ? 4 : 3)];
}

/**
 * The day and month of `a/b/yyyy`: whichever cannot be a month is the day; else `.` puts the day
 * first (as German and most of Europe write it), and `/` the month first only on an English page
 * that is not British, Irish, Indian or Australian.
 */
function dayMonth(a: number, b: number, separator: string, lang: string | undefined): { d: number; mo: number } {
  if (a > 12) return { d: a, mo: b };
  if (b > 12) return { d: b, mo: a };
  const monthFirst = separator === '/' && (!lang || /^en(-(us|ca|ph))?$/i.test(lang));
  return monthFirst ? { d: b, mo: a } : { d: a, mo: b };
}

function parts(value: string, lang?: string): Parts | undefined {
  const v = value.trim().replace(/\s+/g, ' ');
  if (!v || v.length > 80) return undefined;
  let m = ISO.exec(v);
  if (m) return withClock({ y: +m[1], mo: +m[2], d: +m[3] }, { h: m[4], mi: m[5], s: m[6], zone: m[8], ms: m[7] });
  m = SLASHED.exec(v);
  if (m) return withClock({ y: +m[1], mo: +m[2], d: +m[3] }, { h: m[4], mi: m[5], s: m[6] });
  m = YEAR_LAST.exec(v);
  if (m) return withClock({ y: +m[4], ...dayMonth(+m[1], +m[3], m[2], lang) }, { h: m[5], mi: m[6], s: m[7] });
  m = DAY_MONTH.exec(v);
  if (m) {
    const mo = monthNumber(m[2]);
    if (mo) return withClock({ y: +m[3], mo, d: +m[1] }, { h: m[4], mi: m[5], s: m[6], ampm: m[7], zone: m[8] });
  }
  m = MONTH_DAY.exec(v);
  if (m) {
    const mo = monthNumber(m[1]);
    if (mo) return withClock({ y: +m[3], mo, d: +m[2] }, { h: m[4], mi: m[5], s: m[6], ampm: m[7], zone: m[8] });
  }
  if (/^\d{10}(\d{3})?$/.test(v)) {
    const t = new Date(v.length === 10 ? Number(v) * 1000 : Number(v));
    return {
      y: t.getUTCFullYear(),
      mo: t.getUTCMonth() + 1,
      d: t.getUTCDate(),
      time: { h: t.getUTCHours(), mi: t.getUTCMinutes(), s: t.getUTCSeconds(), offset: 'Z' },
    };
  }
  return undefined;
}

function format(p: Parts): string {
  const day = `${p.y}-${pad(p.mo)}-${pad(p.d)}`;
  if (!p.time) return `${day}T00:00:00Z`;
  const { h, mi, s, ms, offset } = p.time;
  return `${day}T${pad(h)}:${pad(mi)}:${pad(s)}${ms ? `.${ms.slice(0, 3).padEnd(3, '0')}` : ''}${offset ?? 'Z'}`;
}

/**
 * A date as an RFC 3339 date-time in the page's own offset, or undefined when it is none, before
 * 1995 or later than `now`.
 */
export function parseDate(value: unknown, now = Date.now(), lang?: string): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const p = parts(String(value), lang);
  if (!p || !validDay(p)) return undefined;
  const out = format(p);
  const at = Date.parse(out);
  return Number.isNaN(at) || at > now + FUTURE_SLACK_MS ? undefined : out;
}

/** A date rule: raw values, first parsable wins. */
export interface DateRule {
  name: string;
  get(page: PageData, ctx: { url: string; ld: LdNode[] }): (string | undefined)[];
}

const PUBLISHED_METAS = [
  'article:published_time',
  'og:article:published_time',
  'article:published',
  'published_time',
  'og:published_time',
  'parsely-pub-date',
  'sailthru.date',
  'dc.date.issued',
  'dcterms.issued',
  'dc.date.created',
  'dcterms.created',
  'citation_publication_date',
  'citation_date',
  'citation_online_date',
  'prism.publicationdate',
  'bt:pubdate',
  'pubdate',
  'publishdate',
  'publish-date',
  'publish_date',
  'pub_date',
  'date',
  'dc.date',
  'dcterms.date',
  'og:pubdate',
  'originalpublicationdate',
  'article.published',
  'article_date_original',
  'cxenseparse:recs:publishtime',
  'datepublished',
];
const MODIFIED_METAS = ['article:modified_time', 'og:updated_time', 'dcterms.modified', 'dc.date.modified', 'last-modified', 'lastmod', 'datemodified'];

function metas(page: PageData, keys: string[]): string[] {
  const out: string[] = [];
  for (const key of keys)
    for (const m of page.metas) if ((m.property === key || m.name === key || m.itemprop?.toLowerCase() === key) && m.content.trim()) out.push(m.content);
  return out;
}

const ldDates = (field: string) => (ld: LdNode[]) =>
  ld.filter((n) => !ldTypes(n).includes('website')).map((n) => (typeof n[field] === 'string' ? (n[field] as string) : undefined));

/** `/2019/10/19/`, `/2019-10-19-title`, `/20191019/`, `/2019/10/title` (the first of the month is not a day: skipped). */
export function urlDate(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const m = /\/((?:19|20)\d{2})[/_-](\d{1,2})[/_-](\d{1,2})(?:[/_.-]|$)/.exec(path) ?? /\/((?:19|20)\d{2})(\d{2})(\d{2})(?:[/_.-]|$)/.exec(path);
  return m ? `${m[1]}-${pad(Number(m[2]))}-${pad(Number(m[3]))}` : undefined;
}

export const DATE_RULES: DateRule[] = [
  { name: 'json-ld datePublished', get: (_p, c) => [...ldDates('datePublished')(c.ld), ...ldDates('dateCreated')(c.ld), ...ldDates('uploadDate')(c.ld)] },
  { name: 'meta published', get: (p) => metas(p, PUBLISHED_METAS) },
  { name: 'microdata datePublished', get: (p) => p.itemprops.filter((i) => i.prop.toLowerCase() === 'datepublished').map((i) => i.value) },
  { name: '<time> published', get: (p) => p.marks.filter((m) => m.kind === 'time' && m.published).map((m) => m.datetime) },
  { name: '<time>', get: (p) => p.marks.filter((m) => m.kind === 'time').map((m) => m.datetime) },
  { name: 'url path', get: (_p, c) => [urlDate(c.url)] },
  {
    name: 'modified',
    get: (p, c) => [
      ...ldDates('dateModified')(c.ld),
      ...metas(p, MODIFIED_METAS),
      ...p.itemprops.filter((i) => i.prop.toLowerCase() === 'datemodified').map((i) => i.value),
    ],
  },
];

/** The publication date by DATE_RULES, with the rule that gave it. */
export function publishedAt(
  page: PageData,
  ctx: { url: string; ld: LdNode[]; now?: number },
  rules: DateRule[] = DATE_RULES,
): { value: string; rule: string } | undefined {
  for (const rule of rules) {
    let values: (string | undefined)[];
    try {
      values = rule.get(page, ctx);
    } catch {
      continue;
    }
    for (const v of values) {
      const value = parseDate(v, ctx.now, page.lang);
      if (value) return { value, rule: rule.name };
    }
  }
  return undefined;
}
