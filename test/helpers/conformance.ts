/**
 * Conformance of responses to openapi.yaml: every record and error body the test helpers see
 * is validated against the document's schemas (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses),
 * and every exchange against the operation, status, content type and headers it documents
 * (exchangeErrors).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../lib/contract/openapi';
import { isRootPath, routePath } from '../../lib/http/event';

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

/**
 * One HTTP exchange a test saw. `path` is the raw path (a stage prefix is removed as the
 * handler removes it); `headers` are the response headers; `request` is given when the request
 * body is known.
 */
export interface Exchange {
  method: string;
  path: string;
  stage?: string;
  status: number;
  headers: Record<string, string | number | string[] | undefined>;
  body?: string | Buffer;
  request?: { contentType?: string; body: string };
}

type Json = Record<string, any>;

/**
 * The local server's stored files (`/assets/...`): URLs inside records, on AWS another host
 * entirely, not operations of the API; their keys hold slashes, which an OpenAPI path template
 * cannot match. The exchange check leaves them out.
 */
export const isAssetPath = (path: string) => path.split('?')[0].startsWith('/assets/');

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows a `#/...` reference inside the document; returns the object and its JSON pointer. */
function deref(node: Json, pointer: string): { node: Json; pointer: string } {
  let n = node;
  let p = pointer;
  for (let i = 0; i < 10 && n && typeof n.$ref === 'string'; i++) {
    p = (n.$ref as string).replace(/^#/, '');
    n = p
      .split('/')
      .slice(1)
      .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], openApiDocument());
  }
  return { node: n, pointer: p };
}

function schemaErrorsAt(pointer: string, value: unknown): string[] {
  const validate = validator().getSchema(`openapi#${pointer}`);
  if (!validate) return [`no schema at ${pointer}`];
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${e.params ? JSON.stringify(e.params) : ''}`);
}

let headerAjv: Ajv2020 | undefined;
const headerValidators = new WeakMap<Json, ValidateFunction>();
/** A header value against its schema, the string converted to the schema's type (simple style). */
function headerValueErrors(schema: Json, value: string): string[] {
  headerAjv ??= new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  let validate = headerValidators.get(schema);
  if (!validate) {
    validate = headerAjv.compile({ type: 'object', properties: { value: schema } });
    headerValidators.set(schema, validate);
  }
  return validate({ value }) ? [] : (validate.errors ?? []).map((e) => `${e.message}`);
}

/** The document's path for a request path, as the handler routes it; undefined when it lists none. */
function documentedPath(path: string, stage?: string): string | undefined {
  if (isRootPath(path, stage)) return '/';
  const route = routePath(path, stage);
  const paths = (openApiDocument().paths ?? {}) as Json;
  if (route === '/') return undefined;
  if (paths[route]) return route;
  // A templated path (`/previews/{batchId}`): each {name} is one segment.
  return Object.keys(paths).find((p) => p.includes('{') && new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(route));
}

const mediaType = (contentType: string | undefined) => contentType?.split(';')[0].trim().toLowerCase() || undefined;

/**
 * What is wrong with an exchange, as openapi.yaml has it (empty when nothing): the operation
 * (path and method; HEAD is checked as GET), the status among its responses, the content type
 * among the response's media types, the headers the response declares (those required must be
 * there, every value must match its schema, and x-request-id and Server-Timing must be declared
 * on every response), the body against the media type's schema (JSON, and text/plain as JSON
 * text when the schema says so), and an accepted (200) JSON request body against the request
 * schema, as a validating proxy would check it. A path the document does not list must be
 * answered with its NotFound response, a method it does not list with NotFound or
 * MethodNotAllowed.
 */
export function exchangeErrors(x: Exchange): string[] {
  const doc = openApiDocument() as Json;
  const errors: string[] = [];
  const method = x.method.toLowerCase();
  const path = documentedPath(x.path, x.stage);
  const item: Json | undefined = path ? doc.paths[path] : undefined;
  const op: Json | undefined = item?.[method] ?? (method === 'head' ? item?.get : undefined);
  const where = `${x.method.toUpperCase()} ${x.path} -> ${x.status}`;

  let response: { node: Json; pointer: string } | undefined;
  if (op) {
    const base = `/paths/${escapePointer(path!)}/${item![method] ? method : 'get'}/responses`;
    const key = op.responses?.[String(x.status)] ? String(x.status) : op.responses?.default ? 'default' : undefined;
    if (!key) return [`${where}: status ${x.status} is not documented for ${x.method.toUpperCase()} ${path}`];
    response = deref(op.responses[key], `${base}/${key}`);
  } else {
    const allowed = path ? { 404: 'NotFound', 405: 'MethodNotAllowed' } : { 404: 'NotFound' };
    const name = (allowed as Record<number, string>)[x.status];
    if (!name)
      return [
        `${where}: ${path ? `${x.method.toUpperCase()} ${path}` : 'the path'} is not documented, and the answer is not ${Object.keys(allowed).join(' or ')}`,
      ];
    response = deref({ $ref: `#/components/responses/${name}` }, '');
  }

  // Headers: names are case-insensitive.
  const headers = new Map<string, string>();
  for (const [k, v] of Object.entries(x.headers)) if (v !== undefined) headers.set(k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v));
  const declared = new Map<string, Json>();
  for (const [name, h] of Object.entries((response.node.headers ?? {}) as Json)) declared.set(name.toLowerCase(), deref(h, '').node);
  for (const name of ['x-request-id', 'server-timing']) {
    if (!declared.has(name)) errors.push(`${where}: the documented response does not declare the ${name} header`);
  }
  for (const [name, h] of declared) {
    const value = headers.get(name);
    if (value === undefined) {
      if (h.required) errors.push(`${where}: the required header ${name} is missing`);
    } else if (h.schema) {
      for (const e of headerValueErrors(h.schema, value)) errors.push(`${where}: header ${name}: ${JSON.stringify(value)} ${e}`);
    }
  }

  // Content type and body.
  const type = mediaType(headers.get('content-type'));
  const body = x.body === undefined ? '' : Buffer.isBuffer(x.body) ? x.body.toString('utf8') : x.body;
  const content = (response.node.content ?? {}) as Json;
  if (type === undefined) {
    if (body.length > 0) errors.push(`${where}: a body without a content type`);
  } else if (!content[type]) {
    errors.push(`${where}: content type ${type} is not documented (documented: ${Object.keys(content).join(', ') || 'none'})`);
  } else if (body.length > 0 && content[type].schema) {
    const at = `${response.pointer}/content/${escapePointer(type)}/schema`;
    const schema = deref(content[type].schema, at);
    if (type === 'application/json' || type.endsWith('+json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        errors.push(`${where}: the ${type} body is not JSON`);
      }
      if (parsed !== undefined) for (const e of schemaErrorsAt(schema.pointer, parsed)) errors.push(`${where}: body ${e}`);
    } else if (type === 'text/plain') {
      for (const e of schemaErrorsAt(schema.pointer, body)) errors.push(`${where}: body ${e}`);
      if (schema.node.contentMediaType === 'application/json' && schema.node.contentSchema) {
        const inner = deref(schema.node.contentSchema, `${schema.pointer}/contentSchema`);
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          errors.push(`${where}: the text/plain body is not the JSON text the document says`);
        }
        if (parsed !== undefined) for (const e of schemaErrorsAt(inner.pointer, parsed)) errors.push(`${where}: body ${e}`);
      }
    }
    // multipart/form-data answers: the type is checked, the parts are not.
  }

  // An accepted request: a validating proxy in front of the service must have let it through.
  if (op && x.status === 200 && x.request && op.requestBody) {
    const rb = deref(op.requestBody, `/paths/${escapePointer(path!)}/${method}/requestBody`);
    const reqType = mediaType(x.request.contentType);
    if (reqType === 'application/json' && rb.node.content?.[reqType]) {
      const at = deref(rb.node.content[reqType].schema, `${rb.pointer}/content/${escapePointer(reqType)}/schema`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(x.request.body);
      } catch {
        parsed = undefined;
      }
      if (parsed !== undefined)
        for (const e of schemaErrorsAt(at.pointer, parsed)) errors.push(`${where}: the accepted request body does not match the document: ${e}`);
    }
  }
  return errors;
}

/** Throws (failing the test that made the exchange) when exchangeErrors finds anything. */
export function assertExchange(x: Exchange): void {
  const errors = exchangeErrors(x);
  if (errors.length) throw new Error(`The answer does not match openapi.yaml:\n${errors.join('\n')}\n${String(x.body ?? '').slice(0, 1000)}`);
}
