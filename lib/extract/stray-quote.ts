/**
 * How htmlparser2 reads an attribute value with a stray quote inside it, and how to tell that it
 * did: the parser (lib/extract/parse-page.ts) marks such a meta `cut` (PageData's MetaTag), and the
 * field rules then look for the whole text elsewhere on the page (lib/extract/rules.ts `uncut`).
 */

/**
 * Whether a stray quote inside the value of attribute `key` ended that value early. htmlparser2
 * ends a quoted value at the first matching quote and reads what follows as attribute names:
 * `content="Mayor opens the "new" bridge, crowds cheer"` gives content "Mayor opens the " and the
 * attributes `new"`, `bridge,`, `crowds`, `cheer"` (valueless, in that order, right after
 * `content`). The value's own closing quote always lands in that run, in a name (`cheer"`) or,
 * after an `=`, at the end of a value (`b=c"`). A run of valueless names that ends at a real
 * attribute without any quote is left alone.
 */
export function cutByStrayQuote(a: Record<string, string>, key: string): boolean {
  const keys = Object.keys(a);
  let i = keys.indexOf(key);
  if (i < 0) return false;
  for (i++; i < keys.length; i++) {
    const k = keys[i];
    if (/["']/.test(k) || /["']$/.test(a[k])) return true;
    if (a[k] !== '') return false;
  }
  return false;
}
