/**
 * One answer of the wall corpus: the link, where it ended (`finalUrl`, `trail`), the status, the
 * headers and the body the last URL gave, and whether it is a wall (`wall`: the kind expected, or
 * false for a page that only talks about walls or carries a form).
 */
export interface CorpusCase {
  name: string;
  wall: string | false;
  url: string;
  finalUrl?: string;
  /** Every URL of the fetch, the link first (default: the link and the final URL). */
  trail?: string[];
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** A paragraph repeated into an article's body: real content, as a page that is no wall has. */
export function paragraphs(text: string, times = 8): string {
  return Array.from({ length: times }, (_, i) => `<p>${text} (${i + 1})</p>`).join('');
}
