/**
 * The OpenAPI document (openapi.yaml at the project root), parsed once. The Lambda bundle ships
 * the file next to the handler (the CDK bundling copies it); a configured path (Config's
 * `openApiPath`, LINKPREVIEW_OPENAPI_PATH) comes first.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

/** Parsed documents by configured path ('' for the default places). */
const cached = new Map<string, Record<string, unknown>>();

export function openApiPath(configured = ''): string {
  const candidates = [
    configured,
    path.resolve(process.cwd(), 'openapi.yaml'),
    typeof __dirname === 'string' ? path.resolve(__dirname, '../../openapi.yaml') : undefined,
    typeof __dirname === 'string' ? path.resolve(__dirname, 'openapi.yaml') : undefined,
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`openapi.yaml not found (looked in ${candidates.join(', ')})`);
  return found;
}

export function openApiDocument(configured = ''): Record<string, unknown> {
  let doc = cached.get(configured);
  if (!doc) {
    doc = YAML.parse(readFileSync(openApiPath(configured), 'utf8')) as Record<string, unknown>;
    cached.set(configured, doc);
  }
  return doc;
}
