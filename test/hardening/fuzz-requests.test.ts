/**
 * Request fuzzing with fast-check: whatever the body, headers, content type, multipart boundary
 * or URL shape, the answer is a 200 Link record or a 4xx error body of the right shape (both
 * validated against openapi.yaml by the test helper), never a 500. Outbound fetches cannot leave
 * the machine: DNS is a resolver that always fails, and the Jest safety net refuses sockets.
 */
import fc from 'fast-check';
import { createTestHandler, httpApiEvent, TEST_KEY, type TestHandler } from '../helpers/service';

let svc: TestHandler;
beforeAll(() => {
  svc = createTestHandler({
    config: { allowPrivateNetworks: false, fetchTimeoutMs: 300 },
    resolver: async () => { throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }); },
  });
});
afterAll(() => svc.cleanup());

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

function expectWellFormed(res: { statusCode: number; json: any; headers?: Record<string, string> }) {
  expect(res.statusCode).not.toBe(500);
  if (res.headers?.['content-type']?.startsWith('multipart/form-data')) {
    expect(res.statusCode === 200 ? res.json : undefined).toBeUndefined();
    return; // the encoder's own tests cover multipart answers
  }
  if (res.statusCode === 200) {
    expect(typeof res.json.ok).toBe('boolean');
    expect(typeof res.json.id).toBe('number');
  } else {
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json).toMatchObject({ ok: false, status: res.statusCode });
    expect(typeof res.json.errorCode).toBe('string');
  }
}

const urlShapes = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string({ maxLength: 80 }),
  fc.constantFrom('http://[::1', 'http://%', 'https://a..b', 'http://0x7f.1', 'HTTP://EXAMPLE.COM', 'http://ex ample.com', 'javascript:alert(1)', '\u0000', 'http://xn--nxasmq6b', '//x', 'example.com:99999', 'http://user:pass@host/'),
  fc.tuple(fc.constantFrom('http://', 'https://', ''), fc.domain(), fc.webPath()).map(([a, b, c]) => `${a}${b}${c}`),
);

const bodyValues = fc.oneof(
  fc.record({ link: urlShapes }, { requiredKeys: [] }),
  fc.record({ link: urlShapes, source: fc.oneof(fc.constantFrom('API', 'WEB'), fc.string()), forceNewSnapshot: fc.oneof(fc.boolean(), fc.constantFrom('true', 'false'), fc.string(), fc.integer()) }, { requiredKeys: [] }),
  fc.jsonValue(),
  fc.anything(),
);

test('JSON bodies of any shape', async () => {
  await fc.assert(
    fc.asyncProperty(bodyValues, async (body) => {
      let text: string;
      try { text = JSON.stringify(body) ?? 'undefined'; } catch { text = '{'; }
      expectWellFormed(await svc.post(text));
    }),
    { numRuns: RUNS },
  );
});

test('arbitrary bytes under any content type and Accept', async () => {
  const contentTypes = fc.oneof(
    fc.constantFrom('application/json', 'text/plain', 'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="a b"', 'application/json; charset=', 'text/plain; charset=utf-16', 'application/x-www-form-urlencoded', ''),
    fc.string({ maxLength: 60 }),
  );
  const accepts = fc.oneof(fc.constantFrom('*/*', 'text/plain', 'multipart/form-data', 'application/json;q=0', 'text/*, image/*', ''), fc.string({ maxLength: 40 }));
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), contentTypes, accepts, async (bytes, ct, accept) => {
      expectWellFormed(await svc.post(Buffer.from(bytes), { 'content-type': ct, accept }));
    }),
    { numRuns: RUNS },
  );
});

test('multipart bodies with fuzzed boundaries and fields', async () => {
  const boundary = fc.stringMatching(/^[a-zA-Z0-9-]{1,70}$/);
  await fc.assert(
    fc.asyncProperty(boundary, fc.array(fc.tuple(fc.constantFrom('link', 'source', 'forceNewSnapshot', 'x', 'link[]'), fc.string({ maxLength: 60 })), { maxLength: 5 }), fc.boolean(), async (b, fields, truncate) => {
      let body = fields.map(([n, val]) => `--${b}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${val}\r\n`).join('') + `--${b}--\r\n`;
      if (truncate) body = body.slice(0, Math.floor(body.length / 2));
      expectWellFormed(await svc.post(body, { 'content-type': `multipart/form-data; boundary=${b}` }));
    }),
    { numRuns: RUNS },
  );
});

test('headers of any shape, including the Authorization header', async () => {
  await fc.assert(
    fc.asyncProperty(fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }).map((s) => s.toLowerCase()), fc.string({ maxLength: 80 }), { maxKeys: 6 }), fc.option(fc.string({ maxLength: 60 })), async (headers, auth) => {
      const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
      h.authorization = auth === null ? `Bearer ${TEST_KEY}` : auth;
      const out = (await svc.invoke(httpApiEvent(h, Buffer.from(JSON.stringify({ link: 'https://example.com/' }))))) as { statusCode: number; body: string };
      let json: unknown;
      try { json = JSON.parse(out.body); } catch { json = undefined; }
      if (out.statusCode === 200 && (h.accept ?? '').includes('multipart')) return; // multipart answers are not JSON
      expectWellFormed({ statusCode: out.statusCode, json: json ?? {} });
    }),
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
