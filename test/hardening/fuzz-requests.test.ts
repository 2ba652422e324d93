/**
 * Request fuzzing with fast-check: whatever the body, headers, content type, multipart boundary
 * or URL shape, the answer is a 200 Link record or a 4xx error body of the right shape (both
 * validated against openapi.yaml by the test helper), never a 500. Outbound fetches cannot leave
 * the machine: DNS is a resolver that always fails, and the Jest safety net refuses sockets.
 */
import fc from 'fast-check';
import { parseMultipart } from '../../lib/http/multipart';
import { createTestHandler, httpApiEvent, TEST_KEY, type TestHandler } from '../helpers/service';

let svc: TestHandler;
beforeAll(() => {
  svc = createTestHandler({
    config: { allowPrivateNetworks: false, fetchTimeoutMs: 300 },
    resolver: async () => {
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    },
  });
});
afterAll(() => svc.cleanup());

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

interface Answer {
  statusCode: number;
  body?: string;
  isBase64Encoded?: boolean;
  headers?: Record<string, string>;
}

/** The answer's body as a value: JSON, or a multipart/form-data answer's fields (objects are JSON parts). */
async function answerValue(res: Answer): Promise<any> {
  const raw = res.isBase64Encoded ? Buffer.from(res.body ?? '', 'base64') : Buffer.from(res.body ?? '');
  const ct = res.headers?.['content-type'] ?? '';
  if (!ct.startsWith('multipart/form-data')) return JSON.parse(raw.toString());
  const fields = await parseMultipart(raw, ct);
  const value: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(fields)) {
    try {
      value[name] = JSON.parse(text);
    } catch {
      value[name] = text;
    }
  }
  return value;
}

/** A 200 Link record or a 4xx error body, whichever of the three response types it came in. */
async function expectWellFormed(res: Answer) {
  expect(res.statusCode).not.toBe(500);
  const json = await answerValue(res);
  if (res.statusCode === 200) {
    expect(typeof json.ok).toBe('boolean');
    expect(typeof json.id).toBe('number');
  } else {
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(json).toMatchObject({ ok: false, status: res.statusCode });
    expect(typeof json.errorCode).toBe('string');
  }
}

const urlShapes = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string({ maxLength: 80 }),
  fc.constantFrom(
    'http://[::1',
    'http://%',
    'https://a..b',
    'http://0x7f.1',
    'HTTP://EXAMPLE.COM',
    'http://ex ample.com',
    'javascript:alert(1)',
    '\u0000',
    'http://xn--nxasmq6b',
    '//x',
    'example.com:99999',
    'http://user:pass@host/',
  ),
  fc.tuple(fc.constantFrom('http://', 'https://', ''), fc.domain(), fc.webPath()).map(([a, b, c]) => `${a}${b}${c}`),
);

const bodyValues = fc.oneof(
  fc.record({ link: urlShapes }, { requiredKeys: [] }),
  fc.record(
    {
      link: urlShapes,
      source: fc.oneof(fc.constantFrom('API', 'WEB'), fc.string()),
      forceNewSnapshot: fc.oneof(fc.boolean(), fc.constantFrom('true', 'false'), fc.string(), fc.integer()),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
  fc.anything(),
);

test('JSON bodies of any shape', async () => {
  await fc.assert(
    fc.asyncProperty(bodyValues, async (body) => {
      let text: string;
      try {
        text = JSON.stringify(body) ?? 'undefined';
      } catch {
        text = '{';
      }
      await expectWellFormed(await svc.post(text));
    }),
    { numRuns: RUNS },
  );
});

test('arbitrary bytes under any content type and Accept', async () => {
  const contentTypes = fc.oneof(
    fc.constantFrom(
      'application/json',
      'text/plain',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary="a b"',
      'application/json; charset=',
      'text/plain; charset=utf-16',
      'application/x-www-form-urlencoded',
      '',
    ),
    fc.string({ maxLength: 60 }),
  );
  const accepts = fc.oneof(
    fc.constantFrom('*/*', 'text/plain', 'multipart/form-data', 'application/json;q=0', 'text/*, image/*', ''),
    fc.string({ maxLength: 40 }),
  );
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), contentTypes, accepts, async (bytes, ct, accept) => {
      await expectWellFormed(await svc.post(Buffer.from(bytes), { 'content-type': ct, accept }));
    }),
    { numRuns: RUNS },
  );
});

test('multipart bodies with fuzzed boundaries and fields', async () => {
  const boundary = fc.stringMatching(/^[a-zA-Z0-9-]{1,70}$/);
  await fc.assert(
    fc.asyncProperty(
      boundary,
      fc.array(fc.tuple(fc.constantFrom('link', 'source', 'forceNewSnapshot', 'x', 'link[]'), fc.string({ maxLength: 60 })), { maxLength: 5 }),
      fc.boolean(),
      async (b, fields, truncate) => {
        let body = `${fields.map(([n, val]) => `--${b}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${val}\r\n`).join('')}--${b}--\r\n`;
        if (truncate) body = body.slice(0, Math.floor(body.length / 2));
        await expectWellFormed(await svc.post(body, { 'content-type': `multipart/form-data; boundary=${b}` }));
      },
    ),
    { numRuns: RUNS },
  );
});

test('headers of any shape, including the Authorization header', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 20 }).map((s) => s.toLowerCase()),
        fc.string({ maxLength: 80 }),
        { maxKeys: 6 },
      ),
      fc.option(fc.string({ maxLength: 60 })),
      async (headers, auth) => {
        const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
        h.authorization = auth === null ? `Bearer ${TEST_KEY}` : auth;
        const out = (await svc.invoke(httpApiEvent(h, Buffer.from(JSON.stringify({ link: 'https://example.com/' }))))) as Answer;
        // Any header name may come in any case: the answer's own headers are looked up lower-cased.
        const answered = Object.fromEntries(Object.entries(out.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
        await expectWellFormed({ ...out, headers: answered });
      },
    ),
    { numRuns: RUNS },
  );
});

test('direct invocations with any payload', async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(bodyValues, fc.string()), async (payload) => {
      const out = (await svc.invoke(payload)) as any;
      expect(out).toHaveProperty('ok');
      if ('errorCode' in out) expect(out.status).toBeGreaterThanOrEqual(400);
      expect(out.status).not.toBe(500);
    }),
    { numRuns: RUNS },
  );
});

test('a multipart answer is checked too: its fields are the record or the error body', async () => {
  const ok = await svc.post(JSON.stringify({ link: 'https://example.com/' }), { accept: 'multipart/form-data' });
  expect(ok.headers?.['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  expect(ok.statusCode).toBe(200);
  expect(await answerValue(ok)).toMatchObject({ ok: false, url: 'https://example.com/', id: expect.any(Number) });
  const refused = await svc.post('{', { accept: 'multipart/form-data' });
  expect(refused.headers?.['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  expect(await answerValue(refused)).toMatchObject({ ok: false, status: 400, errorCode: expect.any(String) });
  await expectWellFormed(ok);
  await expectWellFormed(refused);
});
