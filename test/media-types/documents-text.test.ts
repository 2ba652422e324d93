/**
 * DOCUMENT (PDF) and TEXT links end to end through the real local server: PDFs written by hand
 * (plain, without Info, encrypted with and without a user password, a Flate bomb, a zip posing as
 * a PDF), text, markdown, CSV and JSON. Every field of the spec's Document and Text objects is
 * checked, and the raw-text assets are fetched back.
 */
import { deflateRawSync } from 'node:zlib';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import * as fx from './fixtures';
import { expectImageSet, fetchAsset, preview, type Server, startServer } from './helpers';

let fixture: FixtureServer;
let server: Server;
const pdfs: Record<string, Buffer> = {};

/** A zip whose one entry inflates to `size` zero bytes. */
function zipBomb(size: number): Buffer {
  const data = deflateRawSync(Buffer.alloc(size), { level: 9 });
  const name = Buffer.from('bomb.bin');
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(8, 8);
  h.writeUInt32LE(0, 14);
  h.writeUInt32LE(data.length, 18);
  h.writeUInt32LE(size, 22);
  h.writeUInt16LE(name.length, 26);
  return Buffer.concat([h, name, data]);
}

const FRENCH = [
  'Notes de voyage',
  'Le matin, nous avons quitté la ville avant le lever du soleil pour rejoindre la montagne.',
  'Les chemins étaient encore humides et la brume couvrait toute la vallée jusqu’à midi.',
  'Nous sommes arrivés au refuge vers le soir, fatigués mais heureux de cette longue journée.',
].join('\n');

beforeAll(async () => {
  pdfs.report = fx.makePdf({ pages: fx.proseDocument(5), title: 'Quarterly River Report', author: 'Ann Hydrologist', modDate: 'D:20240102030405Z' });
  pdfs.noInfo = fx.makePdf({ pages: fx.proseDocument(2, 'Heading Without Info') });
  pdfs.numbers = fx.makePdf({ pages: [['12 34 56'], ['78 90']] });
  pdfs.locked = fx.makePdf({ pages: fx.proseDocument(2), title: 'Secret Plans', userPassword: 'letmein' });
  pdfs.ownerOnly = fx.makePdf({ pages: fx.proseDocument(2), title: 'Open But Encrypted', userPassword: '' });
  pdfs.bomb = fx.makePdf({ pages: fx.proseDocument(1), title: 'Bomb', bombBytes: 64 * 1024 * 1024 });
  pdfs.long = fx.makePdf({ pages: fx.proseDocument(12), title: 'Twelve Page Survey' });
  fixture = await startFixtureServer({
    '/docs/report.pdf': fx.serveBytes(pdfs.report, 'application/pdf'),
    '/plain/report.pdf': fx.serveBytes(pdfs.report, 'application/octet-stream', { range: false }),
    '/docs/no-info.pdf': fx.serveBytes(pdfs.noInfo, 'application/pdf'),
    '/docs/numbers-only.pdf': fx.serveBytes(pdfs.numbers, 'application/pdf'),
    '/docs/locked.pdf': fx.serveBytes(pdfs.locked, 'application/pdf'),
    '/docs/owner-only.pdf': fx.serveBytes(pdfs.ownerOnly, 'application/pdf'),
    '/docs/bomb.pdf': fx.serveBytes(pdfs.bomb, 'application/pdf'),
    '/docs/cut.pdf': fx.serveBytes(pdfs.report.subarray(0, Math.floor(pdfs.report.length / 2)), 'application/pdf'),
    '/docs/zip.pdf': fx.serveBytes(zipBomb(32 * 1024 * 1024), 'application/pdf'),
    // Answered once (the main fetch, which reads the first 8 KiB); the document job's download of
    // the whole file is cut off, so the job cannot finish and the record has what the prefix says.
    '/docs/once/survey.pdf': (() => {
      let served = 0;
      const serve = fx.serveBytes(pdfs.long, 'application/pdf', { range: false });
      return (req: Parameters<typeof serve>[0], res: Parameters<typeof serve>[1]): void => {
        if (served++ === 0) serve(req, res);
        else req.socket.destroy();
      };
    })(),
    '/docs/fake.pdf': fx.serveBytes(Buffer.from('%PDF-1.7\nthis is not really a pdf at all\n%%EOF\n'), 'application/pdf'),
    '/text/notes.txt': fx.serveBytes(Buffer.from(FRENCH, 'utf8'), 'text/plain; charset=utf-8'),
    '/text/readme.md': fx.serveBytes(
      Buffer.from(`# Linklens Readme\n\n${'This service describes links for people who share them in chats and feeds. '.repeat(60)}`),
      'text/markdown',
    ),
    '/text/data.csv': fx.serveBytes(Buffer.from('id,name,score\n1,ann,3\n2,bob,5\n'), 'text/csv'),
    '/text/data.json': fx.serveBytes(Buffer.from('{"items":[1,2,3],"name":"sample"}'), 'application/json'),
    '/text/empty.txt': fx.serveBytes(Buffer.alloc(0), 'text/plain'),
  });
  // The main fetch reads 8 KiB: PDFs larger than that are downloaded again by the document job.
  server = await startServer({ maxPageBytes: 8 * 1024, maxMediaBytes: 4 * 1024 * 1024 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  server?.cleanup();
  await fixture?.close();
});

async function expectReport(r: any): Promise<void> {
  expect(r.ok).toBe(true);
  expect(r.type).toBe('DOCUMENT');
  const d = r.document;
  expect(d.title).toBe('Quarterly River Report');
  expect(d.pageCount).toBe(5);
  expect(d.isEncrypted).toBe(false);
  expect(d.type).toBe('pdf');
  expect(d.author).toBe('Ann Hydrologist');
  expect(d.lastModified).toBe('2024-01-02T03:04:05.000Z');
  expect(d.language).toBe('en');
  // 5 pages x about 390 words: 9 minutes at 230 words a minute.
  expect(d.estimatedReadingTime).toBeGreaterThanOrEqual(8);
  expect(d.estimatedReadingTime).toBeLessThanOrEqual(10);
  expect(d.description).toMatch(/^The quick brown fox jumps over the lazy dog near the river bank\. Every page/);
  expect(d.description).not.toContain('Field Report on River Levels');
  expect(d.pages.map((p: any) => p.pageNumber)).toEqual([1, 2, 3]);
  for (const p of d.pages) expectImageSet(p.screenshot);
  expect(d.pages[0].screenshot.original.width).toBe(1024);
  // A4 portrait.
  expect(d.pages[0].screenshot.original.height).toBeGreaterThan(1400);
  expect(d.image).toEqual(d.pages[0].screenshot);
  const raw = await fetchAsset(d.rawTextUrl);
  expect(raw.status).toBe(200);
  expect(raw.type).toBe('text/plain; charset=utf-8');
  expect(raw.body.toString('utf8')).toContain('Field Report on River Levels');
  expect(raw.body.toString('utf8')).toContain('Water levels rose steadily');
  expect(r.title).toBe('Quarterly River Report');
  expect(r.description).toBe(d.description);
  expect(r.language).toBe('en');
  expect(r.image).toEqual(d.image);
  expect(r.size).toBe(pdfs.report.length);
}

describe('DOCUMENT (PDF)', () => {
  test('a PDF with Info, served with Range: every Document field, three page renders, raw text asset', async () => {
    await expectReport(await preview(server, fixture.url('/docs/report.pdf')));
  });

  test('the same PDF labelled octet-stream from a server without Range (magic bytes classify it)', async () => {
    await expectReport(await preview(server, fixture.url('/plain/report.pdf')));
  });

  test('no Info title: the first heading line is the title', async () => {
    const r = await preview(server, fixture.url('/docs/no-info.pdf'));
    expect(r.document.title).toBe('Heading Without Info');
    expect(r.document.pageCount).toBe(2);
    expect(r.document.pages).toHaveLength(2);
    expect(r.document.author).toBeUndefined();
  });

  test('no Info title and no heading: the file name is the title', async () => {
    const r = await preview(server, fixture.url('/docs/numbers-only.pdf'));
    expect(r.document.title).toBe('numbers-only.pdf');
    expect(r.document.pageCount).toBe(2);
  });

  test('encrypted with a user password: a record with what is known (pages counted, encrypted, file name)', async () => {
    const r = await preview(server, fixture.url('/docs/locked.pdf'));
    expect(r.ok).toBe(true);
    expect(r.type).toBe('DOCUMENT');
    expect(r.document).toEqual({ title: 'locked.pdf', pageCount: 2, isEncrypted: true, type: 'pdf' });
    expect(r.title).toBe('locked.pdf');
  });

  test('encrypted with an empty user password: readable, and still marked encrypted', async () => {
    const r = await preview(server, fixture.url('/docs/owner-only.pdf'));
    expect(r.document).toMatchObject({ title: 'Open But Encrypted', pageCount: 2, isEncrypted: true, language: 'en' });
    expect(r.document.rawTextUrl).toBeDefined();
    expectImageSet(r.document.image);
  });

  test('hostile: a Flate bomb inside a PDF is not inflated; the record has the known facts', async () => {
    const r = await preview(server, fixture.url('/docs/bomb.pdf'));
    expect(r.ok).toBe(true);
    // Only the facts read from the bytes: pdf.js never ran (no text, no renders, no language).
    expect(r.document).toEqual({ title: 'bomb.pdf', pageCount: 1, isEncrypted: false, type: 'pdf' });
  });

  test('hostile: a truncated PDF gives a record with the known facts', async () => {
    const r = await preview(server, fixture.url('/docs/cut.pdf'));
    expect(r.ok).toBe(true);
    expect(r.type).toBe('DOCUMENT');
    expect(r.document.isEncrypted).toBe(false);
    expect(r.document.pageCount).toBeGreaterThanOrEqual(1);
    expect(r.document.title).toEqual(expect.any(String));
  });

  test('a PDF whose document job cannot finish: the page count is the declared /Count, not the page objects of the bytes read', async () => {
    const prefix = pdfs.long.subarray(0, 8 * 1024).toString('latin1');
    // The premise: the 8 KiB read by the main fetch declares 12 pages but holds fewer page objects.
    expect(prefix).toMatch(/\/Type \/Pages [^>]*\/Count 12\b/);
    const objectsInPrefix = prefix.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
    expect(objectsInPrefix).toBeGreaterThanOrEqual(1);
    expect(objectsInPrefix).toBeLessThan(12);
    const r = await preview(server, fixture.url('/docs/once/survey.pdf'));
    expect(r).toMatchObject({ ok: true, type: 'DOCUMENT', status: 200 });
    // Nothing pdf.js would have given: the job did not finish.
    expect(r.document).toEqual({ title: 'survey.pdf', pageCount: 12, isEncrypted: false, type: 'pdf' });
  });

  test('hostile: a zip bomb labelled application/pdf is not a document (magic bytes win) and nothing inflates it', async () => {
    const r = await preview(server, fixture.url('/docs/zip.pdf'));
    expect(r.ok).toBe(true);
    expect(r.type).not.toBe('DOCUMENT');
    expect(r.document).toBeUndefined();
  });

  test('hostile: a PDF header with garbage behind it still gives a document record', async () => {
    const r = await preview(server, fixture.url('/docs/fake.pdf'));
    expect(r.ok).toBe(true);
    expect(r.document).toEqual({ title: 'fake.pdf', pageCount: 0, isEncrypted: false, type: 'pdf' });
  });
});

describe('TEXT', () => {
  test('plain text: size, reading time, raw text asset, language, title from the first line', async () => {
    const r = await preview(server, fixture.url('/text/notes.txt'));
    expect(r.ok).toBe(true);
    expect(r.type).toBe('TEXT');
    expect(r.text.size).toBe(Buffer.byteLength(FRENCH));
    expect(r.text.estimatedReadingTime).toBe(1);
    expect(r.title).toBe('Notes de voyage');
    expect(r.language).toBe('fr');
    expect(r.description).toMatch(/^Le matin, nous avons quitté la ville/);
    const raw = await fetchAsset(r.text.rawTextUrl);
    expect(raw.type).toBe('text/plain; charset=utf-8');
    expect(raw.body.toString('utf8')).toBe(FRENCH);
  });

  test('markdown: the heading is the title; a long text takes minutes to read', async () => {
    const r = await preview(server, fixture.url('/text/readme.md'));
    expect(r.type).toBe('TEXT');
    expect(r.title).toBe('Linklens Readme');
    // 2 + 60 x 13 words = 782 words: 4 minutes at 230 a minute.
    expect(r.text.estimatedReadingTime).toBe(4);
    expect(r.language).toBe('en');
    expect(r.text.rawTextUrl).toMatch(/\/assets\/[0-9a-f]{64}\/text\.txt$/);
  });

  test('CSV and JSON: data, so the file name is the title', async () => {
    const csv = await preview(server, fixture.url('/text/data.csv'));
    expect(csv.type).toBe('TEXT');
    expect(csv.title).toBe('data.csv');
    expect(csv.text.size).toBe(30);
    expect(csv.text.rawTextUrl).toBeDefined();
    const json = await preview(server, fixture.url('/text/data.json'));
    expect(json.type).toBe('TEXT');
    expect(json.title).toBe('data.json');
    expect(json.text.estimatedReadingTime).toBe(1);
  });
});
