/**
 * The card's fields in the record through the real handler and local adapters, in every answer
 * form: a page's site name, author, publication date and theme colour (the manifest's name and
 * colour where the page states none), the image's alt text, each checked against openapi.yaml by the
 * test helpers.
 */
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';
import { jpeg } from '../media/fixtures';

let site: FixtureServer;
let svc: TestHandler;
const json = (o: unknown) => JSON.stringify(o);

beforeAll(async () => {
  site = await startFixtureServer({
    '/2024/01/02/story': {
      body: html(
        `<title>Kites over the bay | Harbour Times</title><meta property="og:title" content="Kites over the bay">
         <meta name="description" content="A festival."><meta name="theme-color" content="rgb(0, 51, 102)">
         <meta property="og:image" content="/kites.jpg"><meta property="og:image:alt" content="Red kites over a blue bay">
         <script type="application/ld+json">${json({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Kites over the bay', datePublished: '2024-01-02T09:30:00+01:00', author: { '@type': 'Person', name: 'Ines Duarte', url: '/people/ines' } })}</script>`,
        '<p>Body</p>',
        'en',
      ),
    },
    '/app': { body: html('<title>Kite planner</title><link rel="manifest" href="/manifest.json">', '<p>An app.</p>', 'en') },
    '/kites.jpg': { headers: { 'content-type': 'image/jpeg' }, body: await jpeg(800, 420, '#cc2233') },
    '/manifest.json': { headers: { 'content-type': 'application/manifest+json' }, body: json({ name: 'Kite Planner', theme_color: '#A0522D', icons: [] }) },
  });
  svc = createTestHandler();
});
afterAll(async () => {
  await site.close();
  svc.cleanup();
});

test('a page: site name from its title, author with its page, its own date and colour', async () => {
  const res = await svc.post(json({ link: site.url('/2024/01/02/story') }));
  expect(res.statusCode).toBe(200);
  expect(res.json).toMatchObject({
    ok: true,
    siteName: 'Harbour Times',
    author: { name: 'Ines Duarte', url: site.url('/people/ines') },
    publishedAt: '2024-01-02T09:30:00+01:00',
    themeColor: '#003366',
  });
  // The hosted image carries the page's description of it, and its placeholders.
  expect(res.json.image).toMatchObject({ alt: 'Red kites over a blue bay', dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/) });
  expect(typeof res.json.image.blurhash).toBe('string');
});

test("a page that states neither: the web app manifest's name and theme colour", async () => {
  const res = await svc.post(json({ link: site.url('/app') }));
  expect(res.json).toMatchObject({ ok: true, siteName: 'Kite Planner', themeColor: '#a0522d' });
  expect(res.json.author).toBeUndefined();
  // The same page again (from the page memo, the icon remembered): the same facts.
  const again = await svc.post(json({ link: site.url('/app') }));
  expect(again.json).toMatchObject({ siteName: 'Kite Planner', themeColor: '#a0522d' });
});

test('the multipart answer carries them as parts', async () => {
  const res = await svc.post(json({ link: site.url('/2024/01/02/story') }), { accept: 'multipart/form-data' });
  expect(res.statusCode).toBe(200);
  const body = String(res.body);
  expect(body).toContain('name="siteName"');
  expect(body).toContain('Harbour Times');
  expect(body).toContain('name="author"');
  expect(body).toContain('"name":"Ines Duarte"');
  expect(body).toContain('name="publishedAt"');
});
