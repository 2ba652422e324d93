/**
 * Every sub-fetch goes through the same guard: a page on a "public" host (a loopback fixture
 * trusted in code) whose image, icon, manifest and oEmbed point at private addresses yields a
 * record without them, and no request reaches a private address (the Jest safety net would
 * refuse the socket; here we also check the fixture saw nothing but the page).
 */
import sharp from 'sharp';
import { createFetcher } from '../../lib/fetch/safe-fetch';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server';
import { createTestHandler, type TestHandler } from '../helpers/service';

let site: FixtureServer;
let svc: TestHandler;
const resolved: string[] = [];

beforeAll(async () => {
  site = await startFixtureServer();
  const page = (port: number) => `<!doctype html><html lang="en"><head><title>Public page</title>
    <meta property="og:image" content="http://10.0.0.8/secret.png">
    <meta name="twitter:image" content="http://169.254.169.254/latest/meta-data/iam.png">
    <link rel="icon" href="http://[::1]:${port}/favicon.ico">
    <link rel="apple-touch-icon" href="http://internal.test:${port}/touch.png">
    <link rel="manifest" href="http://localhost:${port}/manifest.json">
    <link rel="alternate" type="application/json+oembed" href="http://internal.test:${port}/oembed?url=x">
    </head><body><p>Hello</p></body></html>`;
  site.route('/page', { body: page(site.port) });
  const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#3366cc' } }).png().toBuffer();
  site.route('/ok.png', { headers: { 'content-type': 'image/png' }, body: png });
  site.route('/page-ok', { body: `<html><head><title>Control</title><meta property="og:image" content="http://public.test:${site.port}/ok.png"></head></html>` });
  const fetch = createFetcher({
    allowPrivateNetworks: false,
    allowedPorts: [site.port],
    userAgent: 'linklens-test',
    maxRedirects: 10,
    trustedAddresses: ['127.0.0.1'],
    resolver: async (host) => {
      resolved.push(host);
      if (host === 'public.test') return [{ address: '127.0.0.1', family: 4 }];
      if (host === 'internal.test') return [{ address: '10.20.30.40', family: 4 }];
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    },
  });
  svc = createTestHandler({ config: { allowPrivateNetworks: false, allowedPorts: [site.port] }, fetch });
});
afterAll(async () => {
  await site.close();
  svc.cleanup();
});

test('control: the same guard lets an image on the public host through', async () => {
  const res = await svc.post(JSON.stringify({ link: `http://public.test:${site.port}/page-ok` }));
  expect(res.json.image?.original).toMatchObject({ width: 400, height: 300 });
});

test('image, icon, manifest and oEmbed on private addresses are all refused; the record still comes back', async () => {
  const res = await svc.post(JSON.stringify({ link: `http://public.test:${site.port}/page` }));
  expect(res.statusCode).toBe(200);
  expect(res.json).toMatchObject({ ok: true, title: 'Public page' });
  expect(res.json.image).toBeUndefined();
  expect(res.json.icon).toBeUndefined();
  // Only the page itself (and perhaps its /favicon.ico fallback on the same public host) reached the fixture.
  for (const r of site.requests) expect(['/page', '/favicon.ico', '/page-ok', '/ok.png']).toContain(r.url);
  // The private names were resolved (so the sub-fetches were attempted) and then refused.
  expect(resolved).toContain('internal.test');
});
