import { hostOf, normalizeHost, onHost } from '../../lib/host.js';
import { matchAmazon } from '../../lib/platforms/amazon/index.js';
import { PLATFORM_REGISTRY } from '../../lib/platforms/index.js';
import { sameSite, siteOf } from '../../lib/site.js';

describe('one host helper', () => {
  it('normalizes case, brackets, trailing dots and IDN', () => {
    expect(normalizeHost('WWW.Example.COM.')).toBe('www.example.com');
    expect(normalizeHost('[::1]')).toBe('::1');
    expect(normalizeHost('bücher.example')).toBe('xn--bcher-kva.example');
    expect(hostOf('https://X.com./user/status/1')).toBe('x.com');
    expect(hostOf('not a url')).toBe('');
  });

  it('matches a host or its subdomains, never a look-alike', () => {
    expect(onHost('a.b.example.com', 'example.com')).toBe(true);
    expect(onHost('example.com.', 'EXAMPLE.com')).toBe(true);
    expect(onHost('badexample.com', 'example.com')).toBe(false);
    expect(onHost('example.com', '')).toBe(false);
  });
});

describe('siteOf by the Public Suffix List', () => {
  it.each([
    ['attacker.github.io', 'victim.github.io'],
    ['a.evil.me.uk', 'bank.me.uk'],
    ['one.s3.amazonaws.com', 'two.s3.amazonaws.com'],
    ['mine.pages.dev', 'yours.pages.dev'],
  ])('%s and %s are two sites', (a, b) => {
    expect(siteOf(a)).not.toBe(siteOf(b));
    expect(sameSite(`https://${a}/`, `https://${b}/`)).toBe(false);
  });

  it.each([
    ['news.bbc.co.uk', 'bbc.co.uk'],
    ['www.youtube.com', 'youtube.com'],
    ['docs.example.com.', 'example.com'],
    ['attacker.github.io', 'attacker.github.io'],
    ['github.io', 'github.io'],
    ['127.0.0.1', '127.0.0.1'],
    ['localhost', 'localhost'],
  ])('%s belongs to %s', (host, site) => {
    expect(siteOf(host)).toBe(site);
  });

  it('keeps no hand-written list of second-level labels', async () => {
    const { readFile } = await import('node:fs/promises');
    const ids = await readFile(`${__dirname}/../../lib/ids.ts`, 'utf8');
    expect(ids).not.toMatch(/siteOf|SECOND_LEVEL/);
  });
});

describe('platform matchers strip a trailing dot', () => {
  const registry = PLATFORM_REGISTRY;
  it.each([
    'https://x.com./jack/status/20',
    'https://www.tiktok.com./@user/video/7100000000000000000',
    'https://www.instagram.com./p/Cabc123/',
    'https://www.etsy.com./listing/123456789/a-thing',
    'https://www.youtube.com./watch?v=dQw4w9WgXcQ',
    'https://www.reddit.com./r/pics/comments/abc123/a_title/',
    'https://github.com./owner/repo',
  ])('%s matches its platform', (link) => {
    expect(registry.match(new URL(link))).toBeDefined();
  });
  it('amazon too', () => {
    expect(matchAmazon(new URL('https://www.amazon.com./dp/B000000000'))).toBeDefined();
  });
});
