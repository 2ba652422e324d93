/**
 * The request/response contract of POST /, one test per rule of the spec's Endpoints,
 * Authentication and Errors sections, through the real middy handler and local adapters.
 */
import iconv from 'iconv-lite';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, recordingLog, TEST_KEY, type TestHandler } from '../helpers/service';

let site: FixtureServer;
let svc: TestHandler;
const json = (o: unknown) => JSON.stringify(o);

beforeAll(async () => {
  site = await startFixtureServer({
    '/article': {
      body: html(
        '<title>Plain title</title><meta property="og:title" content="OG &amp; title"><meta name="description" content="  A   description "><meta property="og:description" content="The og description">',
        '<p>Body</p>',
        'en-GB',
      ),
    },
    '/moved': { status: 301, headers: { location: '/article' } },
    '/gone': { status: 404, body: html('<title>Not here</title>') },
    '/oops': { status: 503, body: 'down' },
    '/echo-lang': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(html(`<title>${req.headers['accept-language'] ?? 'none'}</title>`));
    },
    '/blank.html': { body: '<html><body></body></html>' },
  });
  svc = createTestHandler();
});
afterAll(async () => {
  await site.close();
  svc.cleanup();
});

const REQUIRED = ['id', 'ok', 'updatedAt', 'url', 'domain', 'type', 'status', 'redirected'];

describe('rule 1: a valid, authorized request gets 200 and a Link record with every required field', () => {
  test('JSON in, JSON out', async () => {
    const res = await svc.post(json({ link: site.url('/article') }));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    for (const f of REQUIRED) expect(res.json).toHaveProperty(f);
    expect(res.json).toMatchObject({
      ok: true,
      status: 200,
      type: 'PAGE',
      url: site.url('/article'),
      domain: '127.0.0.1',
      redirected: false,
      title: 'OG & title',
      description: 'The og description',
      language: 'en-GB',
      redirectionCount: 0,
    });
    expect(Number.isSafeInteger(res.json.id)).toBe(true);
    expect(new Date(res.json.updatedAt).toISOString()).toBe(res.json.updatedAt);
    expect(res.json.size).toBeGreaterThan(100);
  });

  test('the id is stable for the same link and differs for another', async () => {
    const a = await svc.post(json({ link: site.url('/article') }));
    const b = await svc.post(json({ link: `  ${site.url('/article')}#frag ` }));
    const c = await svc.post(json({ link: site.url('/gone') }));
    expect(a.json.id).toBe(b.json.id);
    expect(a.json.id).not.toBe(c.json.id);
  });

  test('redirects: redirected, redirectionUrl, count and trail', async () => {
    const res = await svc.post(json({ link: site.url('/moved') }));
    expect(res.json).toMatchObject({
      ok: true,
      status: 200,
      redirected: true,
      redirectionUrl: site.url('/article'),
      redirectionCount: 1,
      redirectionTrail: [site.url('/moved'), site.url('/article')],
      url: site.url('/moved'),
    });
  });

  test('a page with nothing to extract still has a title and a description (inferred defaults)', async () => {
    const res = await svc.post(json({ link: site.url('/blank.html') }));
    expect(res.json.ok).toBe(true);
    expect(res.json.title).toBe('blank');
    expect(res.json.description).toBe('');
  });
});

describe('request bodies: application/json, multipart/form-data, text/plain', () => {
  test('JSON with a charset parameter', async () => {
    const res = await svc.post(json({ link: site.url('/article') }), { 'content-type': 'application/json; charset=UTF-8' });
    expect(res.statusCode).toBe(200);
  });

  test('JSON in a legacy charset is decoded by its charset parameter', async () => {
    const body = iconv.encode(json({ link: site.url('/article'), source: 'WEB' }), 'utf-16le');
    const res = await svc.post(body, { 'content-type': 'application/json; charset=utf-16le' });
    expect(res.statusCode).toBe(200);
    expect(res.json.ok).toBe(true);
  });

  test('multipart/form-data', async () => {
    const boundary = '----linklensBoundary7MA4YWxk';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="link"\r\n\r\n${site.url('/article')}\r\n--${boundary}\r\nContent-Disposition: form-data; name="source"\r\n\r\nWEB\r\n--${boundary}--\r\n`;
    const res = await svc.post(body, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(res.statusCode).toBe(200);
    expect(res.json.title).toBe('OG & title');
  });

  test('multipart with a quoted boundary and a charset', async () => {
    const boundary = 'abc123';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="link"\r\n\r\n${site.url('/article')}\r\n--${boundary}--\r\n`;
    const res = await svc.post(body, { 'content-type': `multipart/form-data; charset=utf-8; boundary="${boundary}"` });
    expect(res.statusCode).toBe(200);
  });

  test('text/plain holding JSON', async () => {
    const res = await svc.post(json({ link: site.url('/article') }), { 'content-type': 'text/plain;charset=utf-8' });
    expect(res.statusCode).toBe(200);
    expect(res.json.ok).toBe(true);
  });

  test('text/plain holding a bare URL', async () => {
    const res = await svc.post(`  ${site.url('/article')}\n`, { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(200);
    expect(res.json.url).toBe(site.url('/article'));
  });

  test.each([
    ['application/x-www-form-urlencoded', 'link=x'],
    ['application/xml', '<link/>'],
    ['image/png', 'x'],
  ])('any other content type is 400 UNSUPPORTED_MEDIA_TYPE (%s)', async (ct, body) => {
    const res = await svc.post(body, { 'content-type': ct });
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ ok: false, status: 400, errorCode: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  test('a missing Content-Type is 400 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await svc.post(json({ link: site.url('/article') }), { 'content-type': '' });
    expect(res.statusCode).toBe(400);
    expect(res.json.errorCode).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  test('an unknown charset is 400 UNSUPPORTED_CHARSET', async () => {
    const res = await svc.post(json({ link: 'x' }), { 'content-type': 'application/json; charset=klingon' });
    expect(res.json).toMatchObject({ status: 400, errorCode: 'UNSUPPORTED_CHARSET' });
  });

  // Pseudo-charsets turn any bytes into text (iconv-lite knows them all): each body below is a
  // valid request once decoded by its "charset". Only the WHATWG Encoding Standard's labels are charsets.
  test.each([
    ['utf-7', Buffer.from('+AHs-"link":"https://example.com/"+AH0-')],
    ['UTF-7', Buffer.from('+AHs-"link":"https://example.com/"+AH0-')],
    ['utf7-imap', Buffer.from('&AHs-"link":"https://example.com/"&AH0-')],
    ['hex', Buffer.from(Buffer.from('{"link":"https://example.com/"}').toString('hex'))],
    ['base64', Buffer.from(Buffer.from('{"link":"https://example.com/"}').toString('base64'))],
    ['binary', Buffer.from('{"link":"https://example.com/"}')],
    ['utf-32', iconv.encode('{"link":"https://example.com/"}', 'utf-32le')],
    ['cp437', Buffer.from('{"link":"https://example.com/"}')],
    ['iso-2022-kr', Buffer.from('{"link":"https://example.com/"}')],
    ['x-user-defined', Buffer.from('{"link":"https://example.com/"}')],
  ])('a charset that is not a WHATWG text encoding is 400 UNSUPPORTED_CHARSET (%s)', async (charset, body) => {
    for (const ct of ['application/json', 'text/plain', 'multipart/form-data; boundary=b']) {
      const res = await svc.post(body, { 'content-type': `${ct}; charset=${charset}` });
      expect(res.statusCode).toBe(400);
      expect(res.json).toMatchObject({ ok: false, status: 400, errorCode: 'UNSUPPORTED_CHARSET' });
    }
  });

  test('every label of the WHATWG Encoding Standard is a charset, decoded as the standard decodes it', async () => {
    const { decodeBodyText, parseContentType } = await import('../../lib/http/body');
    const decode = (bytes: Buffer, contentType: string) => decodeBodyText(bytes.toString('base64'), true, parseContentType(contentType).charset);
    expect(parseContentType('text/plain; charset=" Shift_JIS "').charset).toBe('shift_jis');
    expect(parseContentType('text/plain; charset=latin1').charset).toBe('windows-1252');
    expect(parseContentType('text/plain; charset=unicode-1-1-utf-8').charset).toBe('utf-8');
    expect(parseContentType('text/plain; charset=ucs-2').charset).toBe('utf-16le');
    expect(decode(iconv.encode('日本語のページ', 'shift_jis'), 'text/plain; charset=sjis')).toBe('日本語のページ');
    expect(decode(Buffer.from([0x80, 0x93, 0x94]), 'text/plain; charset=iso-8859-1')).toBe('€“”'); // windows-1252, not ISO-8859-1
    expect(decode(Buffer.from('\x1b$BF|K\\\x1b(B', 'latin1'), 'text/plain; charset=iso-2022-jp')).toBe('日本');
    expect(decode(Buffer.from([0xbf]), 'text/plain; charset=x-mac-ukrainian')).toBe('њ');
    expect(decode(iconv.encode('Țară și ș', 'iso-8859-16'), 'text/plain; charset=iso-8859-16')).toBe('Țară și ș');
    // A byte order mark wins over the label.
    expect(decode(Buffer.from([0xfe, 0xff, 0x00, 0x41]), 'text/plain; charset=utf-8')).toBe('A');
    expect(decode(Buffer.from([0xef, 0xbb, 0xbf, 0xc3, 0xa9]), 'text/plain; charset=windows-1252')).toBe('é');
    const res = await svc.post(iconv.encode(json({ link: site.url('/article') }), 'utf-16be'), { 'content-type': 'application/json; charset=UnicodeFFFE' });
    expect(res.statusCode).toBe(200);
  });

  test.each([
    ['{"link": ', 'malformed JSON'],
    ['', 'empty body'],
  ])('%s is 400 BODY_INVALID (%s)', async (body) => {
    const res = await svc.post(body);
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ ok: false, status: 400, errorCode: 'BODY_INVALID' });
  });

  test.each(['[]', '"https://example.com"', '42', 'null', 'true'])('a JSON body that is not an object is 400 BODY_INVALID (%s)', async (body) => {
    const res = await svc.post(body);
    expect(res.json).toMatchObject({ status: 400, errorCode: 'BODY_INVALID' });
  });

  test('malformed JSON in text/plain is 400 BODY_INVALID', async () => {
    const res = await svc.post('{"link":', { 'content-type': 'text/plain' });
    expect(res.json).toMatchObject({ status: 400, errorCode: 'BODY_INVALID' });
  });

  test('regressions found by fuzzing: repeated `name[]` fields, an empty charset, a null direct payload', async () => {
    const b = 'fz';
    const body = `--${b}\r\nContent-Disposition: form-data; name="link"\r\n\r\n${site.url('/article')}\r\n--${b}\r\nContent-Disposition: form-data; name="link[]"\r\n\r\nx\r\n--${b}--\r\n`;
    const multi = await svc.post(body, { 'content-type': `multipart/form-data; boundary=${b}` });
    expect(multi.statusCode).toBe(200);
    expect(multi.json.url).toBe(site.url('/article'));
    const empty = await svc.post(json({ link: site.url('/article') }), { 'content-type': 'application/json; charset=' });
    expect(empty.statusCode).toBe(200);
    expect(await svc.invoke(null)).toMatchObject({ ok: false, status: 400, errorCode: 'BODY_INVALID' });
  });

  test('multipart with an unsupported boundary is 400 BODY_INVALID', async () => {
    const res = await svc.post('x', { 'content-type': 'multipart/form-data; boundary=a_b' });
    expect(res.json).toMatchObject({ status: 400, errorCode: 'BODY_INVALID' });
  });
});

describe('validation (rules 2, 3, 4)', () => {
  test.each([
    [{}, 'LINK_REQUIRED', 'link'],
    [{ link: '' }, 'LINK_REQUIRED', 'link'],
    [{ link: '   ' }, 'LINK_REQUIRED', 'link'],
    [{ link: null }, 'LINK_REQUIRED', 'link'],
    [{ link: 42 }, 'LINK_INVALID', 'link'],
    [{ link: 'ftp://example.com/x' }, 'LINK_INVALID', 'link'],
    [{ link: 'javascript:alert(1)' }, 'LINK_INVALID', 'link'],
    [{ link: 'mailto:a@b.c' }, 'LINK_INVALID', 'link'],
    [{ link: 'http://exa mple.com' }, 'LINK_INVALID', 'link'],
    [{ link: 'http://' }, 'LINK_INVALID', 'link'],
    [{ link: `https://example.com/${'a'.repeat(5000)}` }, 'LINK_INVALID', 'link'],
    [{ link: 'https://example.com', source: 'CLI' }, 'SOURCE_INVALID', 'source'],
    [{ link: 'https://example.com', source: 1 }, 'SOURCE_INVALID', 'source'],
    [{ link: 'https://example.com', forceNewSnapshot: 'yes' }, 'FORCE_NEW_SNAPSHOT_INVALID', 'forceNewSnapshot'],
    [{ link: 'https://example.com', forceNewSnapshotRecursive: 1 }, 'FORCE_NEW_SNAPSHOT_RECURSIVE_INVALID', 'forceNewSnapshotRecursive'],
  ])('%j -> 400 %s naming the field', async (body, code, field) => {
    const res = await svc.post(json(body));
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ ok: false, status: 400, error: 'Bad Request', errorCode: code, details: { field } });
    expect(res.json.message).toContain(field);
  });

  test('a bare example.com/x is taken as https, trimmed', async () => {
    const { validatePreviewRequest } = await import('../../lib/contract/request');
    expect(validatePreviewRequest({ link: '  example.com/x ' }).link).toBe('https://example.com/x');
    expect(validatePreviewRequest({ link: 'example.com:8443/x' }).link).toBe('https://example.com:8443/x');
    expect(validatePreviewRequest({ link: '//example.com/y' }).link).toBe('https://example.com/y');
  });

  test('source defaults to API and the snapshot flags to true; JSON booleans and "false" strings are accepted', async () => {
    const { validatePreviewRequest } = await import('../../lib/contract/request');
    expect(validatePreviewRequest({ link: 'https://example.com' })).toEqual({
      link: 'https://example.com/',
      source: 'API',
      forceNewSnapshot: true,
      forceNewSnapshotRecursive: true,
    });
    expect(validatePreviewRequest({ link: 'https://example.com', source: 'WEB', forceNewSnapshot: 'false', forceNewSnapshotRecursive: false })).toMatchObject({
      source: 'WEB',
      forceNewSnapshot: false,
      forceNewSnapshotRecursive: false,
    });
  });
});

describe('authentication', () => {
  const noAuth = (headers: Record<string, string>) =>
    svc.invoke(httpApiEvent({ 'content-type': 'application/json', ...headers }, Buffer.from(json({ link: site.url('/article') }))));

  test.each([
    [{}, 'missing'],
    [{ authorization: 'Bearer wrong-key' }, 'wrong'],
    [{ authorization: `Basic ${TEST_KEY}` }, 'other scheme'],
    [{ authorization: `Bearer ${TEST_KEY}x` }, 'longer'],
    [{ authorization: `Bearer ${TEST_KEY.slice(0, -1)}` }, 'prefix'],
    [{ authorization: 'Bearer' }, 'empty'],
  ] as [Record<string, string>, string][])('%j (%s) is 401 UNAUTHORIZED with the error body', async (headers) => {
    const res = (await noAuth(headers)) as any;
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toContain('Bearer');
    expect(JSON.parse(res.body)).toMatchObject({ ok: false, status: 401, errorCode: 'UNAUTHORIZED' });
  });

  /** The status of one request to `h` with `authorization`. */
  const statusWith = async (h: TestHandler, authorization: string): Promise<number> =>
    ((await h.invoke(httpApiEvent({ 'content-type': 'application/json', authorization }, Buffer.from(json({ link: site.url('/article') }))))) as any)
      .statusCode;

  test('the scheme is case-insensitive and every configured key works, not only the last', async () => {
    const three = createTestHandler({ config: { apiKeys: ['k1', 'k2', 'k3'] } });
    try {
      const seen: Record<string, number> = {};
      for (const auth of ['bearer k1', 'Bearer k2', 'BEARER k3', 'Bearer k4', 'Bearer k1k2']) seen[auth] = await statusWith(three, auth);
      expect(seen).toEqual({ 'bearer k1': 200, 'Bearer k2': 200, 'BEARER k3': 200, 'Bearer k4': 401, 'Bearer k1k2': 401 });
    } finally {
      three.cleanup();
    }
  });

  test('keys given as SHA-256 hashes (the AWS stack) work, every one of them, and a digest is not a key', async () => {
    const { sha256Hex } = await import('../../lib/auth/key-store');
    const hashed = createTestHandler({ config: { apiKeys: [], apiKeyHashes: [sha256Hex('secret-key'), sha256Hex('other-key')] } });
    try {
      const seen: Record<string, number> = {};
      for (const key of ['secret-key', 'other-key', sha256Hex('secret-key'), sha256Hex('other-key')]) seen[key] = await statusWith(hashed, `Bearer ${key}`);
      expect(seen).toEqual({ 'secret-key': 200, 'other-key': 200, [sha256Hex('secret-key')]: 401, [sha256Hex('other-key')]: 401 });
    } finally {
      hashed.cleanup();
    }
  });

  test('plain keys and hashed keys together: every one of them works', async () => {
    const { sha256Hex } = await import('../../lib/auth/key-store');
    const both = createTestHandler({ config: { apiKeys: ['plain-1', 'plain-2'], apiKeyHashes: [sha256Hex('hashed-1'), sha256Hex('hashed-2')] } });
    try {
      const seen: Record<string, number> = {};
      for (const key of ['plain-1', 'plain-2', 'hashed-1', 'hashed-2', 'plain-3']) seen[key] = await statusWith(both, `Bearer ${key}`);
      expect(seen).toEqual({ 'plain-1': 200, 'plain-2': 200, 'hashed-1': 200, 'hashed-2': 200, 'plain-3': 401 });
    } finally {
      both.cleanup();
    }
  });

  test('with no key configured every request is refused', async () => {
    const none = createTestHandler({ config: { apiKeys: [] } });
    const res = (await none.invoke(httpApiEvent({ 'content-type': 'application/json', authorization: 'Bearer ' }, Buffer.from('{}')))) as any;
    none.cleanup();
    expect(res.statusCode).toBe(401);
  });

  test('the key is checked before the body', async () => {
    const res = (await noAuth({ 'content-type': 'application/xml' })) as any;
    expect(res.statusCode).toBe(401);
  });

  test('failed attempts are counted and the key never reaches a log line', async () => {
    const log = recordingLog();
    let failures = 0;
    const h = createTestHandler({ log });
    h.deps.onAuthFailure = () => {
      failures++;
    };
    const { createPreviewHandler } = await import('../../lib/http/preview-handler');
    const handler = createPreviewHandler(h.deps);
    await handler(httpApiEvent({ 'content-type': 'application/json', authorization: 'Bearer not-the-key-SECRET' }, Buffer.from('{}')), {});
    await handler(
      httpApiEvent({ 'content-type': 'application/json', authorization: `Bearer ${TEST_KEY}` }, Buffer.from(json({ link: site.url('/article') }))),
      {},
    );
    h.cleanup();
    expect(failures).toBe(1);
    const logged = JSON.stringify(log.lines);
    expect(log.lines.length).toBeGreaterThan(0);
    expect(logged).not.toContain('not-the-key-SECRET');
    expect(logged).not.toContain(TEST_KEY);
  });
});

describe('response negotiation by Accept', () => {
  test.each([
    ['*/*', 'application/json; charset=utf-8'],
    ['application/json', 'application/json; charset=utf-8'],
    ['application/*', 'application/json; charset=utf-8'],
    ['text/plain', 'text/plain; charset=utf-8'],
    ['text/*;q=0.9, application/json;q=0.1', 'text/plain; charset=utf-8'],
    ['text/html, */*;q=0.1', 'application/json; charset=utf-8'],
  ])('Accept: %s -> %s', async (accept, ct) => {
    const res = await svc.post(json({ link: site.url('/article') }), { accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(ct);
    expect(res.json.title).toBe('OG & title'); // text/plain carries the same JSON text
  });

  test('multipart/form-data: one part per top-level field, objects JSON-encoded', async () => {
    const res = await svc.post(json({ link: site.url('/moved') }), { accept: 'multipart/form-data' });
    expect(res.statusCode).toBe(200);
    const boundary = /boundary=(.+)$/.exec(res.headers['content-type'])![1];
    const parts = res.body.split(`--${boundary}`).slice(1, -1);
    const fields = Object.fromEntries(
      parts.map((p) => {
        const [head, value] = p.split('\r\n\r\n');
        return [/name="([^"]+)"/.exec(head)![1], { head, value: value.replace(/\r\n$/, '') }];
      }),
    );
    expect(fields.title.value).toBe('OG & title');
    expect(fields.ok.value).toBe('true');
    expect(JSON.parse(fields.redirectionTrail.value)).toEqual([site.url('/moved'), site.url('/article')]);
    expect(fields.redirectionTrail.head).toContain('application/json');
    expect(res.body.endsWith(`--${boundary}--\r\n`)).toBe(true);
  });

  test.each(['text/html', 'image/png', 'application/xml;q=1, application/json;q=0'])('Accept: %s -> 406 with the error body', async (accept) => {
    const res = await svc.post(json({ link: site.url('/article') }), { accept });
    expect(res.statusCode).toBe(406);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json).toMatchObject({ ok: false, status: 406, errorCode: 'NOT_ACCEPTABLE' });
  });

  test('errors follow the negotiated type too', async () => {
    const res = await svc.post(json({}), { accept: 'text/plain' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.json.errorCode).toBe('LINK_REQUIRED');
  });
});

describe('upstream failures are 200 records with ok:false (spec errors rule 6)', () => {
  test.each([
    ['/gone', 404],
    ['/oops', 503],
  ])('%s -> ok:false, status %d', async (route, status) => {
    const res = await svc.post(json({ link: site.url(route) }));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false, status });
    expect(res.json.title === undefined || typeof res.json.title === 'string').toBe(true);
  });

  test('DNS failure -> ok:false, status 0, with the reason in a header', async () => {
    const res = await svc.post(json({ link: 'http://no-such-host.invalid/' }));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false, status: 0, type: 'UNKNOWN', redirected: false, domain: 'no-such-host.invalid' });
    expect(res.headers['x-linklens-upstream-error']).toBe('DNS_FAILURE');
  });

  test('a timeout -> ok:false, status 0', async () => {
    site.route('/hang', () => {
      /* never answers */
    });
    const slow = createTestHandler({ config: { fetchTimeoutMs: 300 } });
    const res = await slow.post(json({ link: site.url('/hang') }));
    slow.cleanup();
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false, status: 0 });
    expect(res.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
  });

  test('accept-language is passed on to the outbound fetch', async () => {
    const res = await svc.post(json({ link: site.url('/echo-lang') }), { 'accept-language': 'de-CH,de;q=0.9' });
    expect(res.json.title).toBe('de-CH,de;q=0.9');
  });
});

describe('LINK_NOT_ALLOWED with the guard closed (the production default)', () => {
  let closed: TestHandler;
  beforeAll(() => {
    closed = createTestHandler({ config: { allowPrivateNetworks: false } });
  });
  afterAll(() => closed.cleanup());

  test.each([
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
    'http://localhost/',
    'http://localhost./',
  ])('%s -> 400 LINK_NOT_ALLOWED', async (link) => {
    const res = await closed.post(json({ link }));
    expect(res.statusCode).toBe(400);
    expect(res.json).toMatchObject({ ok: false, status: 400, errorCode: 'LINK_NOT_ALLOWED' });
  });

  test('the loopback fixture itself is refused (port and address)', async () => {
    const res = await closed.post(json({ link: site.url('/article') }));
    expect(res.json.errorCode).toBe('LINK_NOT_ALLOWED');
  });
});

describe('errors, ids and timing on every response', () => {
  test('x-request-id and requestId come from the API Gateway request id', async () => {
    const res = await svc.post(json({ link: site.url('/article') }));
    expect(res.headers['x-request-id']).toBe('apigw-req-1');
    expect(res.json.requestId).toBe('apigw-req-1');
    const bad = await svc.post(json({}));
    expect(bad.headers['x-request-id']).toBe('apigw-req-1');
    expect(bad.json.requestId).toBe('apigw-req-1');
  });

  test('Server-Timing names each phase', async () => {
    // A URL of its own: the versions of /article, previewed above, are remembered (no content job then).
    const res = await svc.post(json({ link: site.url('/article?server-timing') }));
    // The page's icon (its /favicon.ico) is an image job, its versions the content job (timed when
    // its read came before the record went out: the record does not wait for it); no sub-fetch, no screenshot.
    expect(res.headers['server-timing']).toMatch(
      /^fetch;dur=[\d.]+, extract;dur=[\d.]+, jobs;dur=[\d.]+, platform;dur=[\d.]+, images;dur=[\d.]+, (content;dur=[\d.]+, )?route;desc="direct", wire;desc="opened=\d+ reused=\d+ page-rtt=[12] image-rtt=\d+", total;dur=[\d.]+$/,
    );
    const bad = await svc.post(json({}));
    expect(bad.headers['server-timing']).toMatch(/total;dur=/);
  });

  test('an unexpected exception is a 500 error body without a stack, and the stack is logged', async () => {
    const log = recordingLog();
    const h = createTestHandler({ log });
    const { createPreviewHandler } = await import('../../lib/http/preview-handler');
    const broken = createPreviewHandler({
      ...h.deps,
      fetch: async () => {
        throw new TypeError('kaboom at secret/place.ts:12');
      },
    });
    const res = (await broken(
      httpApiEvent({ 'content-type': 'application/json', authorization: `Bearer ${TEST_KEY}` }, Buffer.from(json({ link: site.url('/article') }))),
      {},
    )) as any;
    h.cleanup();
    expect(res.statusCode).toBe(500);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ ok: false, status: 500, error: 'Internal Server Error', errorCode: 'INTERNAL_ERROR' });
    expect(res.body).not.toContain('kaboom');
    expect(res.body).not.toContain('place.ts');
    const logged = log.lines.find((l) => l.level === 'error');
    expect(JSON.stringify(logged)).toContain('kaboom');
  });

  test('other methods and paths get 405 / 404 with the error body', async () => {
    const get = (await svc.invoke(httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.alloc(0), 'GET'))) as any;
    expect(get.statusCode).toBe(405);
    expect(JSON.parse(get.body)).toMatchObject({ status: 405, errorCode: 'METHOD_NOT_ALLOWED' });
    const other = (await svc.invoke(
      httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from('{}'), 'POST', '/v2'),
    )) as any;
    expect(other.statusCode).toBe(404);
  });
});

describe('invocation shapes', () => {
  test('API Gateway REST (v1) event with mixed-case headers', async () => {
    const event = {
      resource: '/',
      path: '/',
      httpMethod: 'POST',
      headers: { Authorization: `Bearer ${TEST_KEY}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      multiValueHeaders: {},
      queryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      requestContext: { requestId: 'rest-req-9', stage: 'prod', path: '/prod/' },
      body: json({ link: site.url('/article') }),
      isBase64Encoded: false,
    };
    const res = (await svc.invoke(event)) as any;
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('rest-req-9');
    expect(JSON.parse(res.body)).toMatchObject({ ok: true, title: 'OG & title', requestId: 'rest-req-9' });
  });

  test('direct Lambda invocation: the payload is the body, the result is the Link record itself', async () => {
    const record = (await svc.invoke({ link: site.url('/article') })) as any;
    expect(record).toMatchObject({ ok: true, type: 'PAGE', title: 'OG & title', requestId: 'lambda-req-1' });
    expect(record.statusCode).toBeUndefined();
  });

  test('direct invocation needs no key, and errors come back as the error body', async () => {
    const err = (await svc.invoke({ source: 'API' })) as any;
    expect(err).toEqual(expect.objectContaining({ ok: false, status: 400, errorCode: 'LINK_REQUIRED' }));
    const bad = (await svc.invoke({ link: 'http://127.0.0.1:1/' })) as any;
    expect(bad.ok).toBe(false);
  });
});
