import { Validator } from '@seriousme/openapi-schema-validator';
import { LINK_TYPES } from '../../lib/contract/link';
import { openApiDocument } from '../../lib/contract/openapi';
import { PHASE_ORDER } from '../../lib/timing';
import { conformanceErrors, type Exchange, exchangeErrors } from '../helpers/conformance';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, httpApiEvent, TEST_KEY } from '../helpers/service';

test('openapi.yaml is a valid OpenAPI 3.1 document, version 1.0.0', async () => {
  const doc = openApiDocument();
  const result = await new Validator().validate(doc as never);
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
});

test('POST / declares the three request types, bearer security on the operation, and the error body', () => {
  const doc = openApiDocument() as any;
  const op = doc.paths['/'].post;
  expect(op.operationId).toBe('postIndex');
  expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data', 'text/plain']);
  expect(op.security).toEqual([{ bearerAuth: [] }]);
  expect(doc.security).toBeUndefined(); // no global requirement (spec: authentication rule 3)
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(op.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/APIErrorResponseBody');
  expect(doc.components.schemas.LinkType.enum).toEqual([...LINK_TYPES]);
});

test('the conformance check catches records that drift from the document', () => {
  const good = { id: 1, ok: true, updatedAt: '2026-01-01T00:00:00.000Z', url: 'https://a.b/', domain: 'a.b', type: 'PAGE', status: 200, redirected: false };
  expect(conformanceErrors('Link', good)).toEqual([]);
  expect(conformanceErrors('Link', { ...good, type: 'WEBPAGE' }).join()).toMatch(/type/);
  expect(conformanceErrors('Link', { ...good, undocumented: 1 }).join()).toMatch(/additional/);
  const { ok, ...missing } = good;
  void ok;
  expect(conformanceErrors('Link', missing).join()).toMatch(/ok/);
  expect(conformanceErrors('Link', { ...good, image: { thumbnail: { width: 1, height: 1, url: 'x' } } }).join()).toMatch(/medium/);
  expect(conformanceErrors('APIErrorResponseBody', { ok: false, status: 400, errorCode: 'NOPE' }).join()).toMatch(/errorCode/);
});

test('servers: the local server and the API Gateway URL, with its id and region as variables', () => {
  const { servers } = openApiDocument() as any;
  expect(servers[0].url).toBe('http://127.0.0.1:3000');
  const gateway = servers.find((s: any) => s.url.includes('execute-api'));
  expect(gateway.url).toBe('https://{apiId}.execute-api.{region}.amazonaws.com');
  expect(Object.keys(gateway.variables).sort()).toEqual(['apiId', 'region']);
  for (const v of Object.values(gateway.variables) as any[]) expect(typeof v.default).toBe('string');
});

/** Every response object of every operation, and of components/responses, with where it is. */
function everyResponse(doc: any): [string, any][] {
  const out: [string, any][] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      for (const [status, res] of Object.entries<any>(op.responses ?? {})) out.push([`${method.toUpperCase()} ${path} ${status}`, res]);
    }
  }
  for (const [name, res] of Object.entries<any>(doc.components.responses ?? {})) out.push([`components/responses/${name}`, res]);
  return out;
}

test('every response declares x-request-id and Server-Timing, each defined once in components/headers', () => {
  const doc = openApiDocument() as any;
  expect(doc.components.headers.XRequestId).toMatchObject({ required: true, schema: { type: 'string' } });
  expect(doc.components.headers.ServerTiming).toMatchObject({ required: true, schema: { type: 'string' } });
  const missing: string[] = [];
  for (const [where, res] of everyResponse(doc)) {
    if (res.$ref) continue; // a components/responses entry, checked on its own
    if (res.headers?.['x-request-id']?.$ref !== '#/components/headers/XRequestId') missing.push(`${where} x-request-id`);
    if (res.headers?.['Server-Timing']?.$ref !== '#/components/headers/ServerTiming') missing.push(`${where} Server-Timing`);
  }
  expect(missing).toEqual([]);
});

test("the Server-Timing header documents the phases in the order lib/timing.ts reports them (its steps, then JOB_SPECS' phases)", () => {
  const doc = openApiDocument() as any;
  const description: string = doc.components.headers.ServerTiming.description;
  const listed = /^Time per phase \(fetch, extract, jobs, (.*?), total; and, when they ran, (.*?), which overlap the jobs phase;/.exec(description);
  expect(listed).not.toBeNull();
  const documented = [listed?.[1], listed?.[2]].flatMap((names) => names?.split(', ') ?? []);
  expect(documented).toEqual([...PHASE_ORDER]);
});

test('POST / documents each error status the service answers: 400, 401, 406, 413, 500, 503 (and 404/405 as components)', () => {
  const doc = openApiDocument() as any;
  expect(Object.keys(doc.paths['/'].post.responses).sort()).toEqual(['200', '400', '401', '406', '413', '500', '503']);
  expect(Object.keys(doc.paths['/'].post.responses['413'].content)).toEqual(['application/json']);
  expect(doc.paths['/'].post.responses['503'].headers['Retry-After'].$ref).toBe('#/components/headers/RetryAfter');
  expect(doc.components.responses.Unauthorized.headers['WWW-Authenticate'].$ref).toBe('#/components/headers/WWWAuthenticate');
  expect(Object.keys(doc.components.responses)).toEqual(expect.arrayContaining(['NotFound', 'MethodNotAllowed']));
});

test('GET /oembed: its oEmbed parameters, the bearer key or the query key (on no other operation), its statuses and the OEmbed schema', () => {
  const doc = openApiDocument() as any;
  const op = doc.paths['/oembed'].get;
  expect(op.operationId).toBe('getOEmbed');
  expect(op.parameters.map((p: any) => `${p.in} ${p.name} ${p.required}`)).toEqual([
    'query url true',
    'query maxwidth false',
    'query maxheight false',
    'query format false',
  ]);
  expect(op.security).toEqual([{ bearerAuth: [] }, { oembedKey: [] }]);
  expect(doc.components.securitySchemes.oembedKey).toMatchObject({ type: 'apiKey', in: 'query', name: 'key' });
  const others = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).flatMap(([method, o]) => ((o.security ?? []) as any[]).filter((r) => 'oembedKey' in r).map(() => `${method} ${path}`)),
  );
  expect(others).toEqual(['get /oembed']);
  expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '404', '500', '501', '503']);
  expect(op.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/OEmbed');
  expect(op.responses['200'].headers['Referrer-Policy'].$ref).toBe('#/components/headers/ReferrerPolicy');
  expect(doc.components.schemas.OEmbed.properties.type.enum).toEqual(['photo', 'video', 'rich', 'link']);
});

test('a text/plain answer is documented as a string: the JSON text of the record or error body', () => {
  const doc = openApiDocument() as any;
  const resolve = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
  for (const [status, schema] of [
    ['200', 'Link'],
    ['400', 'APIErrorResponseBody'],
    ['500', 'APIErrorResponseBody'],
  ]) {
    const text = resolve(doc.paths['/'].post.responses[status].content['text/plain'].schema);
    expect([status, text]).toEqual([
      status,
      expect.objectContaining({ type: 'string', contentMediaType: 'application/json', contentSchema: { $ref: `#/components/schemas/${schema}` } }),
    ]);
  }
});

test('the request forms the service accepts are valid against the document (as a validating proxy checks them)', () => {
  for (const body of [
    { link: 'https://example.com/' },
    { link: 'example.com/x' },
    { link: '//example.com/x', source: 'WEB' },
    { link: 'https://example.com/', forceNewSnapshot: 'false', forceNewSnapshotRecursive: 'true' },
    { link: 'https://example.com/', forceNewSnapshot: false, forceNewSnapshotRecursive: true },
  ]) {
    expect([body, conformanceErrors('LinkPreviewRequestBody', body)]).toEqual([body, []]);
  }
  expect(conformanceErrors('LinkPreviewRequestBody', { source: 'API' }).join()).toMatch(/link/);
  expect(conformanceErrors('LinkPreviewRequestBody', { link: 'x', forceNewSnapshot: 'yes' }).length).toBeGreaterThan(0);
  expect(conformanceErrors('LinkPreviewRequestBody', { link: 'x', forceNewSnapshotRecursive: 1 }).length).toBeGreaterThan(0);
  expect(conformanceErrors('LinkPreviewRequestBody', { link: 'x', source: 'CLI' }).join()).toMatch(/source/);
});

test('the exchange check catches answers the document does not have', () => {
  const headers = { 'x-request-id': 'r1', 'server-timing': 'total;dur=1', 'content-type': 'application/json; charset=utf-8' };
  const error = (status: number, errorCode: string) => JSON.stringify({ ok: false, status, errorCode, requestId: 'r1' });
  const record = JSON.stringify({
    id: 1,
    ok: true,
    updatedAt: '2026-01-01T00:00:00.000Z',
    url: 'https://a.b/',
    domain: 'a.b',
    type: 'PAGE',
    status: 200,
    redirected: false,
  });
  const ok: Exchange = { method: 'POST', path: '/', status: 200, headers: { ...headers, 'x-linklens-route': 'direct' }, body: record };
  expect(exchangeErrors(ok)).toEqual([]);
  // A preview says which route its fetch took, one of the three.
  expect(exchangeErrors({ ...ok, headers }).join()).toMatch(/x-linklens-route is missing/);
  expect(exchangeErrors({ ...ok, headers: { ...headers, 'x-linklens-route': 'sideways' } }).join()).toMatch(/x-linklens-route/);
  expect(exchangeErrors({ ...ok, method: 'GET', path: '/status', body: '{}' }).join()).toMatch(/deep|required/);
  expect(exchangeErrors({ ...ok, status: 418, body: error(418, 'INTERNAL_ERROR') }).join()).toMatch(/status 418 is not documented/);
  expect(exchangeErrors({ ...ok, headers: { ...headers, 'content-type': 'text/html' } }).join()).toMatch(/text\/html is not documented/);
  expect(exchangeErrors({ ...ok, status: 406, headers: { ...headers, 'content-type': 'text/plain' }, body: error(406, 'NOT_ACCEPTABLE') }).join()).toMatch(
    /text\/plain is not documented/,
  );
  expect(exchangeErrors({ ...ok, headers: { ...headers, 'content-type': 'text/plain' }, body: 'not json' }).join()).toMatch(/not the JSON text/);
  expect(exchangeErrors({ ...ok, headers: { 'content-type': 'application/json' } }).join()).toMatch(/x-request-id is missing.*server-timing is missing/);
  expect(exchangeErrors({ ...ok, status: 503, body: error(503, 'OVERLOADED') }).join()).toMatch(/retry-after is missing/);
  expect(exchangeErrors({ ...ok, status: 503, headers: { ...headers, 'retry-after': 'soon' }, body: error(503, 'OVERLOADED') }).join()).toMatch(/retry-after/);
  expect(exchangeErrors({ ...ok, status: 401, body: error(401, 'UNAUTHORIZED') }).join()).toMatch(/www-authenticate is missing/);
  // A path or method the document does not list: only its NotFound / MethodNotAllowed answers.
  expect(exchangeErrors({ ...ok, method: 'GET', path: '/nope', status: 404, body: error(404, 'NOT_FOUND') })).toEqual([]);
  expect(exchangeErrors({ ...ok, method: 'DELETE', path: '/', status: 405, body: error(405, 'METHOD_NOT_ALLOWED') })).toEqual([]);
  expect(exchangeErrors({ ...ok, method: 'GET', path: '/nope', status: 200 }).join()).toMatch(/not documented/);
  expect(exchangeErrors({ ...ok, method: 'GET', path: '/nope', status: 405, body: error(405, 'METHOD_NOT_ALLOWED') }).join()).toMatch(/not documented/);
  // An accepted request whose body a validating proxy would have refused.
  expect(exchangeErrors({ ...ok, request: { contentType: 'application/json', body: '{"link":"x","forceNewSnapshot":1}' } }).join()).toMatch(
    /accepted request body/,
  );
  expect(exchangeErrors({ ...ok, request: { contentType: 'application/json', body: '{"link":"example.com","forceNewSnapshot":false}' } })).toEqual([]);
});

describe("the service's answers to the request forms it accepts conform, in each response type", () => {
  let site: FixtureServer;
  const svc = createTestHandler();
  beforeAll(async () => {
    site = await startFixtureServer({ '/': { body: html('<title>Contract</title>') } });
  });
  afterAll(async () => {
    await site.close();
    svc.cleanup();
  });

  test('JSON booleans for the snapshot flags, a bare link, and the text/plain answer (svc.post checks each exchange)', async () => {
    const link = site.url('/').replace(/^http:\/\//, '');
    const res = await svc.post(JSON.stringify({ link: site.url('/'), forceNewSnapshot: false, forceNewSnapshotRecursive: true }));
    expect(res.statusCode).toBe(200);
    expect((await svc.post(JSON.stringify({ link: site.url('/'), source: 'WEB', forceNewSnapshot: 'true' }))).statusCode).toBe(200);
    // A bare link is taken as https: the plain-HTTP fixture fails the TLS handshake, a 200 record with ok false.
    const bare = await svc.post(JSON.stringify({ link }));
    expect(bare.statusCode).toBe(200);
    expect(bare.json).toMatchObject({ ok: false, url: `https://${link}` });
    expect(bare.headers['x-linklens-upstream-error']).toBeDefined();
    const text = await svc.post(JSON.stringify({ link: site.url('/') }), { accept: 'text/plain' });
    expect(text.statusCode).toBe(200);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.json).toMatchObject({ ok: true, title: 'Contract' });
  });
});

describe('GET /status and GET /openapi.json need no key', () => {
  const svc = createTestHandler();
  afterAll(() => svc.cleanup());

  test('/status reports version, uptime and each dependency, and nothing sensitive', async () => {
    const res = (await svc.invoke(httpApiEvent({}, Buffer.alloc(0), 'GET', '/status'))) as any;
    expect(res.statusCode).toBe(200);
    const status = JSON.parse(res.body);
    expect(conformanceErrors('ServiceStatus', status)).toEqual([]);
    expect(status).toMatchObject({ ok: true, deep: false, version: '1.0.0', dependencies: { blobStore: { ok: true }, jobRunner: { ok: true } } });
    expect(typeof status.uptimeSeconds).toBe('number');
    expect(res.body).not.toContain(svc.config.dataDir);
    expect(res.body).not.toMatch(/test-key/);
  });

  test('/status with the key (deep check) conforms too, and is 503 when a required dependency fails', async () => {
    const deep = (await svc.invoke(httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.alloc(0), 'GET', '/status'))) as any;
    expect(deep.statusCode).toBe(200);
    expect(conformanceErrors('ServiceStatus', JSON.parse(deep.body))).toEqual([]);
    expect(JSON.parse(deep.body)).toMatchObject({ ok: true, deep: true, dependencies: { blobStore: { ok: true }, jobRunner: { ok: true } } });
    const { createApiHandler } = await import('../../lib/http/api-handler');
    const broken = createApiHandler({
      ...svc.deps,
      blobs: {
        ...svc.deps.blobs,
        put: async () => {
          throw new Error('EACCES /secret/path');
        },
      },
    });
    const res = (await broken(httpApiEvent({ authorization: `Bearer ${TEST_KEY}` }, Buffer.alloc(0), 'GET', '/status'), {})) as any;
    expect(res.statusCode).toBe(503);
    expect(conformanceErrors('ServiceStatus', JSON.parse(res.body))).toEqual([]);
    expect(JSON.parse(res.body).dependencies.blobStore).toEqual({ ok: false, detail: 'unavailable' });
    expect(res.body).not.toContain('/secret/path');
    expect(res.body).not.toMatch(/test-key/);
  });

  test('/status with a wrong key is the 401 error body', async () => {
    const res = (await svc.invoke(httpApiEvent({ authorization: 'Bearer wrong' }, Buffer.alloc(0), 'GET', '/status'))) as any;
    expect(res.statusCode).toBe(401);
    expect(conformanceErrors('APIErrorResponseBody', JSON.parse(res.body))).toEqual([]);
  });

  test('/openapi.json serves the document', async () => {
    const res = (await svc.invoke(httpApiEvent({}, Buffer.alloc(0), 'GET', '/openapi.json'))) as any;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual(openApiDocument());
  });
});
