/**
 * The caller's Accept-Language, read as a language list (RFC 9110 section 12.5.4) and written
 * back clean: the one way a caller's language reaches an outbound request. It is a hint, never a
 * failure: each valid entry is kept, in the caller's order, and everything else is dropped.
 *
 *   Accept-Language = #( language-range [ OWS ";" OWS "q=" qvalue ] )
 *   language-range  = "*" / 1*8ALPHA *( "-" 1*8alphanum )            (RFC 4647 section 2.1)
 *   qvalue          = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 *
 * `de-CH, de;q=0.9,, en;Q=0.5` -> `de-CH,de;q=0.9,en;q=0.5`; `fr\r\nX-Evil: 1, en` -> `en`;
 * nothing valid -> undefined (no header: the fetcher's default goes out). At most
 * MAX_LANGUAGES entries and MAX_LANGUAGE_LIST_CHARS characters come out, and only the first
 * MAX_SCANNED_ENTRIES elements are looked at, however long the value. Only ASCII letters,
 * digits, `-`, `*`, `;`, `=`, `.` and `,` can come out: no CR/LF, control or non-ASCII
 * character, whatever came in. A rule of the request contract (docs/api.md); pure, with no import,
 * so the client package (lib/client) sends what the service would keep.
 */

/** The most entries kept. */
export const MAX_LANGUAGES = 8;
/** The longest list that comes out. */
export const MAX_LANGUAGE_LIST_CHARS = 256;
/** The most comma-separated elements looked at (empty ones included): a huge value costs no more. */
const MAX_SCANNED_ENTRIES = 64;

/** One element of the list, its optional whitespace trimmed: a range, and a weight when it has one. */
const ENTRY = /^(\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)(?:[ \t]*;[ \t]*[qQ]=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?$/;
/** OWS (RFC 9110): spaces and tabs only. */
const OWS = /^[ \t]+|[ \t]+$/g;

/** The valid part of an Accept-Language value as a clean header value, or undefined when nothing is valid. */
export function acceptLanguageList(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const kept: string[] = [];
  let length = 0;
  let from = 0;
  for (let scanned = 0; scanned < MAX_SCANNED_ENTRIES && kept.length < MAX_LANGUAGES && from <= value.length; scanned++) {
    const comma = value.indexOf(',', from);
    const end = comma < 0 ? value.length : comma;
    const entry = cleanEntry(value, from, end);
    from = end + 1;
    if (!entry) continue;
    const added = entry.length + (kept.length ? 1 : 0);
    if (length + added > MAX_LANGUAGE_LIST_CHARS) continue;
    kept.push(entry);
    length += added;
  }
  return kept.length ? kept.join(',') : undefined;
}

/** The element between `from` and `end` written back (`range` or `range;q=x`), or undefined when it is not valid. */
function cleanEntry(value: string, from: number, end: number): string | undefined {
  // Longer than the whole list may be: dropped unread (a 200,000-character element costs nothing).
  if (end - from > MAX_LANGUAGE_LIST_CHARS) return undefined;
  const m = ENTRY.exec(value.slice(from, end).replace(OWS, ''));
  if (!m) return undefined;
  return m[2] === undefined ? m[1] : `${m[1]};q=${m[2]}`;
}
