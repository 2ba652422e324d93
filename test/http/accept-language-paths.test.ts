/**
 * A bad `accept-language` never fails the caller's preview, on every entry point: through the
 * handler (an HTTP API event, a REST event, a direct invocation), the local server over real HTTP,
 * and the Lambda handler (functions/preview.ts). The preview is `ok: true`, and the site sees the
 * valid entries only, or the fetcher's default when none is valid. The parser itself:
 * test/contract/accept-language.test.ts.
 *
 * node:http refuses some values itself, before linklens sees them (its own 400 or 431, the
 * connection closed): CR/LF followed by whitespace (a folded line), a bare CR or LF, NUL and the
 * other control characters, and a header section over 16 KiB (a 200,000-character value). A CR/LF
 * followed by `Name: value` ends the header: node reads a second header. UTF-8 bytes (U+2028,
 * non-ASCII letters) are accepted and read as Latin-1.
 */
import net from 'node:net';
import { createObservability } from '../../functions/observability';
import { createLambdaPreviewHandler } from '../../functions/preview';
import { buildLocalDeps } from '../../functions/wiring';
import { InvocationBudget } from '../../lib/budget';
import type { HttpResponse } from '../../lib/http/preview-handler';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, silentLog, startTestServer, TEST_KEY, type TestHandler } from '../helpers/service';

/** What the fetcher sends when the caller gives no valid language (lib/fetch/safe-fetch.ts). */
const DEFAULT_LANGUAGE = 'en-US,en;q=0.8';
const LONG = 200_000;

let site: FixtureServer;
let svc: TestHandler;
let cases = 0;

beforeAll(async () => {
  site = await startFixtureServer({ '/lang': { body: html('<title>Language page</title>') } });
  svc = createTestHandler();
});
afterAll(async () => {
  await site.close();
  svc.cleanup();
});

/** A link of its own for each preview, and the accept-language the site saw for it. */
function nextLink(): { link: string; seen: () => (string | undefined)[] } {
  const path = `/lang?case=${++cases}`;
  return {
    link: site.url(path),
    seen: () => site.requests.filter((r) => r.url === path).map((r) => r.headers['accept-language'] as string | undefined),
  };
}

const json = (o: unknown) => JSON.stringify(o);

/** Each value the caller may send, and what the site must see. */
const VALUES: [string, string, string][] = [
  ['CR/LF and a header line', 'de-CH\r\nX-Injected: 1, fr;q=0.5', 'fr;q=0.5'],
  ['CR/LF alone', '\r\n', DEFAULT_LANGUAGE],
  ['U+2028', 'de\u2028, it;q=0.4', 'it;q=0.4'],
  ['U+2028 alone', '\u2028', DEFAULT_LANGUAGE],
  ['non-ASCII letters', 'español, 日本語, ja;q=0.9', 'ja;q=0.9'],
  ['control characters', 'de\u0000, fr\u0007', DEFAULT_LANGUAGE],
  [`${LONG} characters`, 'a'.repeat(LONG), DEFAULT_LANGUAGE],
  [`${LONG} characters after a valid entry`, `pt-BR, ${'x-'.repeat(LONG / 2)}`, 'pt-BR'],
  ['a valid list', 'de-CH, de;q=0.9, *;q=0.1', 'de-CH,de;q=0.9,*;q=0.1'],
];

describe('through the handler (an HTTP API event: the Lambda behind API Gateway)', () => {
  test.each(VALUES)('%s: ok, and the site sees a clean header', async (_name, value, clean) => {
    const { link, seen } = nextLink();
    const res = await svc.post(json({ link }), { 'accept-language': value });
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: true, status: 200, title: 'Language page' });
    expect(seen()).toEqual([clean]);
  });

  test('a REST event whose repeated header holds CR/LF: the valid entries of both', async () => {
    const { link, seen } = nextLink();
    const event = {
      httpMethod: 'POST',
      path: '/',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      multiValueHeaders: { 'accept-language': ['de\r\nX-Injected: 1', 'fr, 日本語'] },
      requestContext: { requestId: 'rest-lang', stage: 'prod', path: '/prod/' },
      body: json({ link }),
      isBase64Encoded: false,
    };
    const out = (await svc.invoke(event)) as HttpResponse;
    expect(out.statusCode).toBe(200);
    expect(JSON.parse(out.body)).toMatchObject({ ok: true });
    expect(seen()).toEqual(['fr']);
  });

  test('a direct invocation (the CLI, the Lambda client) carries no language: the default goes out', async () => {
    const { link, seen } = nextLink();
    expect(await svc.invoke({ link, 'accept-language': 'de\r\nX-Injected: 1' })).toMatchObject({ ok: true });
    expect(seen()).toEqual([DEFAULT_LANGUAGE]);
  });
});

describe('through the Lambda handler (functions/preview.ts)', () => {
  let handler: ReturnType<typeof createLambdaPreviewHandler>;
  beforeAll(() => {
    const config = svc.config;
    handler = createLambdaPreviewHandler({
      config,
      obs: createObservability('linklens-lang-test', { ...config, logLevel: 'silent' }),
      budget: new InvocationBudget(config.requestBudgetMs),
      deps: buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test' }),
    });
  });
  test.each(VALUES.filter(([name]) => /CR\/LF|U\+2028|non-ASCII|characters$/.test(name)))(
    '%s: ok, and the site sees a clean header',
    async (_name, value, clean) => {
      const { link, seen } = nextLink();
      const event = httpApiEvent(
        { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'accept-language': value },
        Buffer.from(json({ link })),
      );
      const ends = Date.now() + 20_000;
      const out = (await handler(event, { awsRequestId: 'lambda-lang', getRemainingTimeInMillis: () => ends - Date.now() } as never)) as HttpResponse;
      expect(out.statusCode).toBe(200);
      expect(JSON.parse(out.body)).toMatchObject({ ok: true, status: 200 });
      expect(seen()).toEqual([clean]);
    },
  );
});

describe('through the local server (real HTTP)', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
    server.cleanup();
  });

  /** POST / with the accept-language header's bytes written as they are; the status and the body of the answer. */
  function rawPost(link: string, language: Buffer): Promise<{ status: number; body: string }> {
    const { port } = new URL(server.url);
    const body = Buffer.from(json({ link }));
    const head = Buffer.from(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nAccept-Language: `,
    );
    return new Promise((resolve, reject) => {
      const sock = net.connect(Number(port), '127.0.0.1', () => sock.write(Buffer.concat([head, language, Buffer.from('\r\n\r\n'), body])));
      const chunks: Buffer[] = [];
      sock.on('data', (d: Buffer) => chunks.push(d));
      sock.on('error', reject);
      sock.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
    });
  }

  /** The record of an answer sent with Content-Length or chunked. */
  const record = (body: string) => JSON.parse(body.trimStart().startsWith('{') ? body : body.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n|\r\n0\r\n\r\n$/gi, ''));

  test.each([
    ['CR/LF and a header line (node reads two headers)', Buffer.from('de-CH\r\nX-Injected: 1'), 'de-CH'],
    ['U+2028 in UTF-8 (read as Latin-1)', Buffer.from('de\u2028, it;q=0.4', 'utf8'), 'it;q=0.4'],
    ['non-ASCII letters in UTF-8', Buffer.from('español, 日本語, ja;q=0.9', 'utf8'), 'ja;q=0.9'],
    ['Latin-1 bytes and a C1 control', Buffer.from('fran\u00e7ais, de\u0080, fr', 'latin1'), 'fr'],
    ['12,000 characters (what fits in node:http 16 KiB)', Buffer.from(`${'a'.repeat(12_000)}, sv`), 'sv'],
  ])('%s: ok, and the site sees a clean header', async (_name, language, clean) => {
    const { link, seen } = nextLink();
    const res = await rawPost(link, language);
    expect(res.status).toBe(200);
    expect(record(res.body)).toMatchObject({ ok: true, status: 200, title: 'Language page' });
    expect(seen()).toEqual([clean]);
  });

  test.each([
    ['CR/LF and whitespace (a folded line)', Buffer.from('de,\r\n fr'), 400],
    ['a bare CR', Buffer.from('de\rfr'), 400],
    ['a bare LF', Buffer.from('de\nfr'), 400],
    ['NUL', Buffer.from('de\u0000fr'), 400],
    [`${LONG} characters`, Buffer.from('a'.repeat(LONG)), 431],
  ])('%s: node:http refuses it itself, the site sees nothing, and the server goes on', async (_name, language, status) => {
    const { link, seen } = nextLink();
    expect((await rawPost(link, language)).status).toBe(status);
    expect(seen()).toEqual([]);
    const after = nextLink();
    const res = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'accept-language': 'nb, da;q=0.5' },
      body: json({ link: after.link }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
    expect(after.seen()).toEqual(['nb,da;q=0.5']);
  });
});
