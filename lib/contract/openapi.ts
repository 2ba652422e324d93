/**
 * The OpenAPI document (openapi.yaml at the project root), parsed once. The Lambda bundle ships
 * the file next to the handler (the CDK bundling copies it); LINKPREVIEW_OPENAPI_PATH overrides.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

let cached: Record<string, unknown> | undefined;

export function openApiPath(): string {
  const candidates = [
    process.env.LINKPREVIEW_OPENAPI_PATH,
    path.resolve(process.cwd(), 'openapi.yaml'),
    typeof __dirname === 'string' ? path.resolve(__dirname, '../../openapi.yaml') : undefined,
    typeof __dirname === 'string' ? path.resolve(__dirname, 'openapi.yaml') : undefined,
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`openapi.yaml not found (looked in ${candidates.join(', ')})`);
  return found;
}

export function openApiDocument(): Record<string, unknown> {
  cached ??= YAML.parse(readFileSync(openApiPath(), 'utf8')) as Record<string, unknown>;
  return cached;
}
