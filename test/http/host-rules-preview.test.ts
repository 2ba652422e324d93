/**
 * The host rules (LINKPREVIEW_HOST_RULES) in whole previews, wired as the local server wires them:
 * a denied link answers 400 LINK_NOT_ALLOWED; a redirect into a denied host is an ok:false record
 * with that upstream error; an image, icon or manifest on a denied host is not fetched; a closed
 * deployment (`...=allow;*=deny`) previews its allowed hosts alone; a metadata-only link gets its
 * fields and leaves nothing in the asset store. Every name is the one loopback fixture: its request
 * log (by Host) proves what was never asked.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import type { Resolver } from '../../lib/fetch/address-guard';
import { awaitVersion } from '../../lib/page/page-versions';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';
import { png } from '../platforms/harness';

jest.setTimeout(30_000);

/** Every name is the fixture; denied.test's names are it at an address of their own (a denied host's address is denied for every name). */
const resolver: Resolver = async (host) => [{ address: /(^|\.)denied\.test$/.test(host) ? '127.0.0.2' : '127.0.0.1', family: 4 }];

let site: FixtureServer;
let contentImage: Buffer;
let ownImage: Buffer;
const at = (host: string, p: string) => `http://${host}:${site.port}${p}`;
/** `host/path` of every request the fixture saw. */
const asked = () => site.requests.map((r) => `${String(r.headers.host).split(':')[0]}${r.url}`);
const askedHost = (host: string) => asked().filter((a) => a.split('/')[0].endsWith(host));

beforeAll(async () => {
  site = await startFixtureServer();
  await site.alsoOn('127.0.0.2');
  const image = await png(800, 420);
  const icon = await png(64, 64, { r: 20, g: 120, b: 200 });
  const page = (imageHost: string) =>
    html(
      `<title>A page</title><meta name="description" content="What the page says."><meta property="og:image" content="${at(imageHost, '/og.png')}"><link rel="icon" href="${at(imageHost, '/favicon.png')}"><link rel="manifest" href="${at(imageHost, '/manifest.json')}">`,
      `<article><h1>A page</h1><p>${'Words of the article, long enough to be read. '.repeat(30)}</p></article>`,
    );
  site.route('/own-images', { body: page('photos.test') });
  site.route('/other-images', { body: page('denied.test') });
  site.route('/hop', (_req, res) => {
    res.writeHead(302, { location: at('denied.test', '/own-images') });
    res.end();
  });
  site.route('/og.png', { headers: { 'content-type': 'image/png' }, body: image });
  // An article whose content images are on two hosts: its own (news.test) and a metadata-only one (photos.test).
  contentImage = await png(820, 540, { r: 200, g: 80, b: 40 });
  ownImage = await png(760, 500, { r: 40, g: 160, b: 90 });
  site.route('/content.png', { headers: { 'content-type': 'image/png' }, body: contentImage });
  site.route('/own.png', { headers: { 'content-type': 'image/png' }, body: ownImage });
  const words = (n: number) => `<p>${'The harbour wall was rebuilt stone by stone over the winter. '.repeat(n)}</p>`;
  site.route('/article-images', {
    body: html(
      '<title>The harbour wall</title><meta name="description" content="How the wall was rebuilt.">',
      `<article><h1>The harbour wall</h1>${words(12)}<figure><img src="${at('photos.test', '/content.png')}" width="820" height="540" alt="The wall at dawn"><figcaption>The wall at dawn.</figcaption></figure>${words(12)}<img src="${at('news.test', '/own.png')}" width="760" height="500" alt="The crane">${words(12)}</article>`,
    ),
  });
  site.route('/favicon.png', { headers: { 'content-type': 'image/png' }, body: icon });
  site.route('/manifest.json', { headers: { 'content-type': 'application/manifest+json' }, body: '{"name":"Photos"}' });
});
afterAll(() => site.close());
beforeEach(() => {
  site.requests.length = 0;
});

function handler(rules: string): TestHandler {
  return createTestHandler({ config: { hostRules: loadConfig({ LINKPREVIEW_HOST_RULES: rules }).hostRules }, resolver });
}

async function preview(rules: string, link: string) {
  const h = handler(rules);
  try {
    const res = await h.post(JSON.stringify({ link }));
    // The versions are built after the record: wait for them as whoever serves their address does.
    const htmlUrl: string | undefined = res.json?.page?.htmlUrl;
    if (htmlUrl) await awaitVersion(h.deps.blobs, htmlUrl.replace('http://assets.test/', ''));
    const files = filesUnder(h.config.dataDir);
    const pageHtml = files.find((f) => f.endsWith('page.html'));
    return { res, files, pageHtml: pageHtml && readFileSync(path.join(h.config.dataDir, pageHtml), 'utf8') };
  } finally {
    h.cleanup();
  }
}

/** Every file under dir. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('deny', () => {
  test('the link: 400 LINK_NOT_ALLOWED naming the URL and the rule; nothing asked', async () => {
    const link = at('www.denied.test', '/own-images');
    const { res } = await preview('denied.test=deny', link);
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ ok: false, status: 400, errorCode: 'LINK_NOT_ALLOWED', details: { url: link, hop: 0, rule: 'denied.test' } });
    expect(asked()).toEqual([]);
  });

  test('a one-time login path: 400, the rest of the host previewed', async () => {
    const { res } = await preview('photos.test/hop=deny', at('photos.test', '/hop?token=once'));
    expect(res.json).toMatchObject({ errorCode: 'LINK_NOT_ALLOWED' });
    expect(asked()).toEqual([]);
    const other = await preview('photos.test/hop=deny', at('photos.test', '/own-images'));
    expect(other.res.json).toMatchObject({ ok: true, title: 'A page' });
  });

  test('a redirect hop into a denied host: an ok:false record with the upstream error LINK_NOT_ALLOWED; the host never asked', async () => {
    const { res } = await preview('denied.test=deny', at('photos.test', '/hop'));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false, status: 302, redirected: true });
    expect(res.headers['x-linklens-upstream-error']).toBe('LINK_NOT_ALLOWED');
    expect(asked()).toEqual(['photos.test/hop']);
  });

  test("another page's image, icon and manifest on a denied host: the card without them; the host never asked", async () => {
    const { res } = await preview('denied.test=deny', at('photos.test', '/other-images'));
    expect(res.json).toMatchObject({ ok: true, title: 'A page', description: 'What the page says.' });
    expect(res.json.image).toBeUndefined();
    expect(askedHost('denied.test')).toEqual([]);
  });

  test('a closed deployment (allow, then *=deny): the allowed host is previewed, everything else never asked', async () => {
    const rules = 'photos.test=allow;*=deny';
    const ok = await preview(rules, at('photos.test', '/other-images'));
    expect(ok.res.json).toMatchObject({ ok: true, title: 'A page' });
    expect(askedHost('denied.test')).toEqual([]);
    const refused = await preview(rules, at('elsewhere.test', '/own-images'));
    expect(refused.res.json).toMatchObject({ errorCode: 'LINK_NOT_ALLOWED', details: { rule: '*' } });
    expect(askedHost('elsewhere.test')).toEqual([]);
  });
});

describe('metadata-only', () => {
  test("the record's fields, but nothing stored: no image, icon, page versions; the asset store stays empty", async () => {
    // The same page without the rule stores its image, icon and versions (what the rule takes away).
    const stored = await preview('', at('photos.test', '/own-images'));
    expect(stored.res.json.image).toBeDefined();
    expect(stored.files.length).toBeGreaterThan(0);

    site.requests.length = 0;
    const { res, files } = await preview('photos.test=metadata-only', at('photos.test', '/own-images'));
    expect(res.json).toMatchObject({ ok: true, type: 'PAGE', title: 'A page', description: 'What the page says.' });
    expect(res.json.image).toBeUndefined();
    expect(res.json.icon).toBeUndefined();
    expect(res.json.page).toBeUndefined();
    expect(res.json.screenshot).toBeUndefined();
    expect(files).toEqual([]);
    expect(asked()).not.toContain('photos.test/og.png');
    expect(asked()).not.toContain('photos.test/favicon.png');
  });

  test("another site's page with its image and icon on a metadata-only host: the card, without copying them", async () => {
    const { res, files } = await preview('photos.test=metadata-only', at('news.test', '/own-images'));
    expect(res.json).toMatchObject({ ok: true, title: 'A page' });
    expect(res.json.image).toBeUndefined();
    expect(res.json.icon).toBeUndefined();
    expect(res.json.page).toBeDefined();
    expect(askedHost('photos.test').filter((a) => /\.png$/.test(a))).toEqual([]);
    expect(files.length).toBeGreaterThan(0);
  });

  test("an article's image on a metadata-only host: left out of its page versions, never downloaded, no copy in the asset store", async () => {
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    // Without the rule, both content images are hosted inside the versions (what the rule takes away).
    const plain = await preview('', at('news.test', '/article-images'));
    expect(plain.files.some((f) => f.includes(digest(contentImage)))).toBe(true);
    expect(plain.pageHtml?.match(/<img /g)).toHaveLength(2);
    expect(asked()).toContain('photos.test/content.png');

    site.requests.length = 0;
    const { res, files, pageHtml } = await preview('photos.test=metadata-only', at('news.test', '/article-images'));
    expect(res.json).toMatchObject({ ok: true, title: 'The harbour wall' });
    expect(res.json.page?.htmlUrl).toBeDefined();
    // The store has the versions and the site's own image, nothing of the metadata-only host's.
    expect(files.some((f) => f.includes(digest(ownImage)))).toBe(true);
    expect(files.some((f) => f.includes(digest(contentImage)))).toBe(false);
    expect(asked()).toContain('news.test/own.png');
    expect(askedHost('photos.test')).toEqual([]);
    // The versions: the <img> removed (its figure too, the caption kept as text), no address of that host left.
    expect(pageHtml).toBeDefined();
    expect(pageHtml).not.toMatch(/photos\.test/);
    expect(pageHtml).toMatch(/<img [^>]*src="http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/medium\.webp"/);
    expect(pageHtml?.match(/<img /g)).toHaveLength(1);
  });
});
