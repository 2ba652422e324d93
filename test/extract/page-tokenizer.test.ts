import { Parser, Tokenizer } from 'htmlparser2';
import { PageTokenizer } from '../../lib/extract/page-tokenizer';

/** Every event of a parse, with the tokenizer's positions, for `html` written in chunks of `size` characters. */
function events(html: string, size: number, tokenizer: typeof Tokenizer): string[] {
  const out: string[] = [];
  const at = () => `${parser.startIndex}-${parser.endIndex}`;
  const parser: Parser = new Parser(
    {
      onopentag: (name, attrs) => out.push(`open ${name} ${JSON.stringify(attrs)} ${at()}`),
      onclosetag: (name, implied) => out.push(`close ${name} ${implied} ${at()}`),
      ontext: (text) => out.push(`text ${JSON.stringify(text)} ${at()}`),
      oncomment: (text) => out.push(`comment ${JSON.stringify(text)} ${at()}`),
      onprocessinginstruction: (name, data) => out.push(`pi ${name} ${data} ${at()}`),
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true, Tokenizer: tokenizer },
  );
  for (let i = 0; i < html.length; i += size) parser.write(html.slice(i, i + size));
  parser.end();
  return out;
}

const PAGES = [
  '<!doctype html><html lang="en"><head><title>A &amp; B &notit; &#x27;q&#39;</title>' +
    '<meta property="og:title" content="Tom &amp; Jerry&apos;s &quot;day&quot; &copy2024">' +
    "<meta name='description' content='single &lt;quoted&gt; value &amp'>" +
    '<script>if (a < b && c > d) { x = "</scr" + "ipt>"; }</script><style>p{content:"<&>"}</style>' +
    '<!-- a comment with <tags> & ampersands --></head>',
  '<body><p>Text with &amp; entities &nbsp;and &unknown; and &#128512; and a lone & sign.</p>' +
    '<a href="/x?a=1&b=2&amp;c=3" class=unquoted&amp;value data-x=\'{"k":"v & w"}\'>link</a>' +
    '<div hidden>hidden</div><textarea>&lt;raw&gt; <b>not a tag</b></textarea><title>t &amp; t</title>' +
    '<![CDATA[ cdata ]]><?xml version="1.0"?><br/><img src="a.png" alt="a &gt; b"></body></html>',
  `<html><body>${'<p class="c">para &amp; text</p>\n'.repeat(200)}<script type="application/ld+json">{"a":"<b>"}</script>` +
    `${'x'.repeat(5000)}&amp;${'y'.repeat(3000)}<p title="${'&quot;'.repeat(50)}">end</p></body></html>`,
  'no tags at all & just text &amp; entities',
  '<p>unterminated &amp',
  '<div title="unterminated &amp value',
  '<script>never closed < < <',
  '<!-- never closed comment & <',
];

describe('PageTokenizer: the same tokens as htmlparser2 own tokenizer', () => {
  test('its faster scans are in place', () => {
    for (const method of ['stateText', 'handleInAttributeValue', 'fastForwardTo', 'write']) {
      expect(Object.hasOwn(PageTokenizer.prototype, method)).toBe(true);
    }
  });

  test.each(PAGES.map((html, i) => [i, html]))('page %i, written whole and in chunks of every size from 1 to 40', (_i, html) => {
    const sizes = [html.length || 1, ...Array.from({ length: 40 }, (_, k) => k + 1), 1000];
    for (const size of sizes) expect(events(html as string, size, PageTokenizer)).toEqual(events(html as string, size, Tokenizer));
  });
});
