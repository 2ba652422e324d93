/** Shared checks for the media-type tests: previews through the real local server, ImageSet shape, asset fetch-back. */
import type { Config } from '../../lib/config';
import { assertConforms } from '../helpers/conformance';
import { startTestServer } from '../helpers/service';

export type Server = Awaited<ReturnType<typeof startTestServer>>;

export function startServer(config: Partial<Config>): Promise<Server> {
  return startTestServer({ fetchTimeoutMs: 10_000, jobWaitMs: 25_000, ...config });
}

export async function preview(server: Server, link: string): Promise<any> {
  const res = await fetch(`${server.url}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  });
  expect(res.status).toBe(200);
  const record = await res.json();
  // Every record is checked against the OpenAPI document (the spec's objects and required fields).
  assertConforms(record);
  return record;
}

export function expectImageSet(set: any, source?: { width: number; height: number }): void {
  expect(set).toBeDefined();
  for (const size of ['thumbnail', 'medium', 'large', 'original']) {
    const a = set[size];
    expect(a).toEqual({ width: expect.any(Number), height: expect.any(Number), url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/assets\//) });
    expect(a.width).toBeGreaterThan(0);
    expect(a.height).toBeGreaterThan(0);
  }
  if (source) expect({ width: set.original.width, height: set.original.height }).toEqual(source);
  // Every hosted image carries its placeholders (the image job's: test/media/placeholders.test.ts).
  expect(set.dominantColor).toMatch(/^#[0-9a-f]{6}$/);
  expect(typeof set.blurhash).toBe('string');
}

export async function fetchAsset(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
