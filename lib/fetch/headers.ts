/**
 * Reading HTTP headers, one way everywhere: a header's value, all headers flattened to strings,
 * and the file name of a Content-Disposition header. Header names are lower case, as Node gives
 * them (got's response headers, IncomingMessage, Playwright).
 */

/** Headers as Node and got hold them: a value, a list of values (Set-Cookie), or nothing. */
export type HeaderBag = Readonly<Record<string, string | string[] | number | undefined>>;

/** One header's value; the first when it came more than once. */
export function header(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v[0] : String(v);
}

/**
 * Every header as one string, names in lower case: repeated values joined by ', ' (RFC 9110),
 * Set-Cookie's by a newline, as its values hold commas (the form Playwright's fulfill takes).
 */
export function flatHeaders(headers: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    out[name] = Array.isArray(v) ? v.join(name === 'set-cookie' ? '\n' : ', ') : String(v);
  }
  return out;
}

/** One parameter of a header value: `name=token` or `name="quoted \"string\""`. */
const PARAM = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"?|[^;]*)/g;

/**
 * The file name a Content-Disposition header gives (RFC 6266): `filename*` (RFC 8187
 * `charset'lang'percent-encoded`, UTF-8 or ISO-8859-1) wins over `filename`; either is reduced
 * to a safe base name (baseFileName). `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf` ->
 * `résumé.pdf`; `attachment; filename="a b.pdf"` -> `a b.pdf`.
 */
export function fileNameFromDisposition(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let plain: string | undefined;
  let extended: string | undefined;
  for (const m of value.matchAll(PARAM)) {
    const name = m[1].toLowerCase();
    const raw = m[2].trim();
    const v = raw.startsWith('"') ? raw.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1') : raw;
    if (name === 'filename*') extended ??= decodeExtValue(v);
    else if (name === 'filename') plain ??= v;
  }
  return baseFileName(extended ?? '') ?? baseFileName(plain ?? '');
}

/** An RFC 8187 ext-value (`UTF-8''a%20b.pdf`); undefined for another charset or a broken encoding. */
function decodeExtValue(v: string): string | undefined {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const charset = m[1].trim().toLowerCase();
  try {
    if (charset === 'utf-8' || charset === '') return decodeURIComponent(m[2]);
    // Each percent-encoded byte is one Latin-1 character.
    if (charset === 'iso-8859-1') return m[2].replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  } catch {
    /* a broken percent-encoding: no name from it */
  }
  return undefined;
}

/** A file name made safe to show: its last path segment, no control characters, at most 255 characters. */
export function baseFileName(name: string): string | undefined {
  const base = (name.split(/[\\/]/).pop() ?? '')
    .replace(/[\u0000-\u001f]/g, '')
    .trim()
    .slice(0, 255);
  return base || undefined;
}
