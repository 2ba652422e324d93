/**
 * The page versions carry no live markup. Text that shows a tag (written as entities in the page)
 * stays text in page.md, its heading included; the Markdown holds only what the converter made
 * from the sanitized DOM. Each page.md is rendered by a CommonMark renderer (marked), and the
 * result is checked twice: no element appears that the Markdown did not make, and, loaded in the
 * real Chromium with a canary, nothing runs. page.html is checked against the sanitizer's rules.
 */

import { parseHTML } from 'linkedom';
import { marked } from 'marked';
import { browserAvailable, closeBrowser, withBrowser } from '../../lib/browser/browser';
import { loadConfig } from '../../lib/config';
import { extractPageContent } from '../../lib/page/page-content-dom';

const CONFIG = loadConfig(process.env);
const HAS_BROWSER = browserAvailable(CONFIG);
const inBrowser = HAS_BROWSER ? test : test.skip;
afterAll(() => closeBrowser());

const URL_ = 'https://news.example.test/2024/hostile';
const CANARY = 'window.__ran=(window.__ran||0)+1';
const filler = (n: number) =>
  Array.from({ length: n }, (_, i) => `<p>Paragraph ${i} of the story goes on about kites, wind and paper so that it reads like an article.</p>`).join('');

/** Pages whose text shows tags, written as entities, in every place Markdown could let them through; and real hostile tags. */
const PAGES: Record<string, string> = {
  'text that shows tags': `<p>Try &lt;img src=x onerror="${CANARY}"&gt; and &lt;script&gt;${CANARY}&lt;/script&gt; in text.</p>`,
  'a heading that shows a tag': `<h2>&lt;svg onload="${CANARY}"&gt; heading</h2><p>Under the heading.</p>`,
  'link text that shows a tag': `<p>See <a href="https://ok.example.test/a">&lt;iframe srcdoc="&lt;script&gt;${CANARY}&lt;/script&gt;"&gt;</a> here.</p>`,
  'a javascript: link written as text': `<p>&lt;a href="javascript:${CANARY}"&gt;click me&lt;/a&gt; is text.</p>`,
  'real hostile tags': `<p>x<svg onload="${CANARY}"></svg><iframe srcdoc="<script>${CANARY}</script>"></iframe><img src="x" onerror="${CANARY}"></p>`,
  'an alt and a title that show tags': `<p><img src="https://img.example.test/k.jpg" alt="&lt;img src=x onerror=${CANARY}&gt;" title="&lt;b&gt;t&lt;/b&gt;"></p>`,
  'a blockquote marker and an ampersand in text': `<p>&gt; not a quote &amp;lt;b&amp;gt; AT&amp;T</p>`,
};

function page(name: string, body: string): string {
  return `<!doctype html><html lang="en"><head><title>&lt;script&gt;${CANARY}&lt;/script&gt; ${name}</title></head><body><article><h1>&lt;img src=x onerror=${CANARY}&gt; ${name}</h1>${body}${filler(6)}</article></body></html>`;
}

/** The elements marked makes from Markdown the converter writes: nothing that runs or embeds. */
const MARKDOWN_ELEMENTS = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'a',
  'img',
  'em',
  'strong',
  'code',
  'pre',
  'ul',
  'ol',
  'li',
  'blockquote',
  'hr',
  'br',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'del',
]);

function rendered(markdown: string): { html: string; tags: string[]; doc: any } {
  const html = marked.parse(markdown, { async: false }) as string;
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const tags = [...document.body.querySelectorAll('*')].map((e: any) => String(e.tagName).toLowerCase());
  return { html, tags, doc: document };
}

/** How often the canary ran (or a dialog opened) when `html` is loaded in Chromium with every request refused. */
async function canaryRuns(html: string): Promise<number> {
  return withBrowser(CONFIG, 20_000, async (browser) => {
    const context = await browser.newContext({ javaScriptEnabled: true });
    try {
      const tab = await context.newPage();
      let dialogs = 0;
      tab.on('dialog', (d) => {
        dialogs++;
        void d.dismiss();
      });
      // No network: only inline markup could run.
      await tab.route('**/*', (route) => route.abort());
      await tab.setContent(`<!doctype html><html><body>${html}</body></html>`, { waitUntil: 'load' });
      // An image's error event fires after load: let the event loop turn before reading the canary.
      await tab.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
      const count = await tab.evaluate(() => (globalThis as unknown as { __ran?: number }).__ran ?? 0);
      return count + dialogs;
    } finally {
      await context.close();
    }
  });
}

describe.each(Object.entries(PAGES))('%s', (name, body) => {
  const content = extractPageContent(page(name, body), URL_);

  test('page.md renders to no element the Markdown did not make, and no handler or script', () => {
    expect(content.markdown).not.toBe('');
    const { tags, doc, html } = rendered(content.markdown);
    for (const t of tags) expect(MARKDOWN_ELEMENTS.has(t)).toBe(true);
    for (const el of doc.body.querySelectorAll('*')) {
      for (const attr of el.getAttributeNames()) expect(attr).not.toMatch(/^on/i);
      const href = el.getAttribute('href') ?? el.getAttribute('src') ?? '';
      expect(href).not.toMatch(/^\s*(javascript|data|vbscript):/i);
    }
    // An <img> only for an image of the sanitized DOM (an absolute https address), never from text.
    for (const img of doc.body.querySelectorAll('img')) expect(img.getAttribute('src')).toMatch(/^https:\/\//);
    expect(html).not.toMatch(/<(script|svg|iframe)\b/i);
  });

  test('the text the page showed is still there, as text', () => {
    const { doc } = rendered(content.markdown);
    const text = doc.body.textContent ?? '';
    // The title's heading shows its tag as text; so does a paragraph that showed one.
    expect(text).toContain('<script>window.__ran');
    if (name === 'text that shows tags') expect(text).toContain('<img src=x onerror=');
    if (name === 'a blockquote marker and an ampersand in text') expect(text).toContain('> not a quote &lt;b&gt; AT&T');
    expect(text).toContain(name);
  });

  test('page.html keeps to the sanitizer: no script, no handler, no embed', () => {
    const { document } = parseHTML(content.html);
    expect(document.querySelectorAll('script, iframe, svg, object, embed, style, form').length).toBe(0);
    for (const el of document.querySelectorAll('*')) for (const attr of el.getAttributeNames()) expect(attr).not.toMatch(/^(on|srcdoc$)/i);
  });

  inBrowser('in Chromium, the rendered page.md runs nothing', async () => {
    expect(await canaryRuns(rendered(content.markdown).html)).toBe(0);
  });
});

describe('the checks can fail', () => {
  const unescaped = `x <img src=x onerror="${CANARY}"> y`;
  test('marked passes raw HTML through: an unescaped tag becomes an element', () => {
    expect(rendered(unescaped).tags).toContain('img');
  });
  inBrowser('and its handler runs in Chromium', async () => {
    expect(await canaryRuns(rendered(unescaped).html)).toBeGreaterThan(0);
  });
});
