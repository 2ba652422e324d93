import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument } from '../../lib/contract/openapi';
import { LINK_TYPES } from '../../lib/contract/link';
import { conformanceErrors } from '../helpers/conformance';
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
    const broken = createApiHandler({ ...svc.deps, blobs: { ...svc.deps.blobs, put: async () => { throw new Error('EACCES /secret/path'); } } });
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
