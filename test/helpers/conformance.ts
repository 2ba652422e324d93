/**
 * Conformance of responses to openapi.yaml: every record and error body the test helpers see
 * is validated against the document's schemas (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses).
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../lib/contract/openapi';

let ajv: Ajv2020 | undefined;

function validator(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', ...openApiDocument() });
  }
  return ajv;
}

export function conformanceErrors(schemaName: string, value: unknown): string[] {
  const validate = validator().getSchema(`openapi#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`No schema ${schemaName} in openapi.yaml`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${e.params ? JSON.stringify(e.params) : ''}`);
}

/** Throws (failing the test that produced it) when a response body does not match the document. */
export function assertConforms(body: unknown): void {
  const isError = body !== null && typeof body === 'object' && 'errorCode' in (body as object);
  const schema = isError ? 'APIErrorResponseBody' : 'Link';
  const errors = conformanceErrors(schema, body);
  if (errors.length) throw new Error(`Response does not conform to openapi.yaml ${schema}:\n${errors.join('\n')}\n${JSON.stringify(body).slice(0, 2000)}`);
}
