/**
 * htmlparser2's tokenizer, with its character-by-character scans done by String#indexOf: the
 * parse of a page (lib/extract/parse-page.ts) gives exactly the same tokens, sooner.
 *
 * With entities decoded, htmlparser2 12 (pinned in package.json) looks at every character of a
 * text and of a quoted attribute value in its state loop, only to find the next `<` (or quote) or
 * `&`; and it skips a script, a style or a comment to its next `<` with a loop of charCodeAt
 * (`fastForwardTo`). Those scans were a third of a page's parse. Here the same positions are found
 * with indexOf (native, vectorised), each character's search remembered until it is passed, so a
 * chunk is scanned once per character sought. No callback runs between the positions skipped, so
 * the tokens, their positions and the parser's pauses are the same.
 *
 * The overrides are set on a subclass's prototype, so any other user of htmlparser2 keeps the
 * original; they name htmlparser2's internal methods (stateText, handleInAttributeValue,
 * fastForwardTo), so a version of htmlparser2 without them parses as before, only slower
 * (test/extract/page-tokenizer.test.ts tells).
 */
import { Tokenizer } from 'htmlparser2';

/** The tokenizer's own state that the overrides read and move (private in its typings). */
interface Internals {
  buffer: string;
  offset: number;
  index: number;
  decodeEntities: boolean;
  /** The searches of the current chunk, by character sought. */
  nextOf?: Map<number, NextChar>;
  stateText(c: number): void;
  handleInAttributeValue(c: number, quote: number): void;
  fastForwardTo(c: number): boolean;
  write(chunk: string): void;
}

const LT = 0x3c;
const AMP = 0x26;

/** Where a character next occurs in a chunk: searched once, and again only once passed. */
class NextChar {
  private at = -1;
  private from = Number.POSITIVE_INFINITY;
  constructor(private readonly ch: string) {}

  /** The first position at or after `from` (relative to the chunk), -1 when none. */
  find(buffer: string, from: number): number {
    // The last search is still the answer when it started at or before `from` and found nothing, or something at or after it.
    if (from < this.from || (this.at !== -1 && this.at < from)) {
      this.from = from;
      this.at = buffer.indexOf(this.ch, from);
    }
    return this.at;
  }
}

function nextOf(t: Internals, c: number, from: number): number {
  t.nextOf ??= new Map();
  let search = t.nextOf.get(c);
  if (!search) {
    search = new NextChar(String.fromCharCode(c));
    t.nextOf.set(c, search);
  }
  return search.find(t.buffer, from);
}

/**
 * Moves the index to just before the first of `a` or `b` after it (the state loop then steps
 * onto it), or to the chunk's last character when neither comes.
 */
function skipToEither(t: Internals, a: number, b: number): void {
  const from = t.index + 1 - t.offset;
  const i = nextOf(t, a, from);
  const j = nextOf(t, b, from);
  const next = i === -1 ? j : j === -1 ? i : Math.min(i, j);
  t.index = (next === -1 ? t.buffer.length : next) + t.offset - 1;
}

export class PageTokenizer extends Tokenizer {}

const base = Tokenizer.prototype as unknown as Internals;
const page = PageTokenizer.prototype as unknown as Internals;

if (typeof base.stateText === 'function' && typeof base.handleInAttributeValue === 'function' && typeof base.fastForwardTo === 'function') {
  page.write = function (this: Internals, chunk: string): void {
    // A new chunk: the searches of the last one are void.
    this.nextOf?.clear();
    base.write.call(this, chunk);
  };
  page.stateText = function (this: Internals, c: number): void {
    if (this.decodeEntities && c !== LT && c !== AMP) skipToEither(this, LT, AMP);
    else base.stateText.call(this, c);
  };
  page.handleInAttributeValue = function (this: Internals, c: number, quote: number): void {
    if (this.decodeEntities && c !== quote && c !== AMP) skipToEither(this, quote, AMP);
    else base.handleInAttributeValue.call(this, c, quote);
  };
  page.fastForwardTo = function (this: Internals, c: number): boolean {
    const at = nextOf(this, c, this.index + 1 - this.offset);
    // Not in this chunk: the chunk's last character (the state loop steps past it, as after htmlparser2's own loop).
    this.index = at === -1 ? this.buffer.length + this.offset - 1 : at + this.offset;
    return at !== -1;
  };
}
