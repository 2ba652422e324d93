/** Shared checks for the media-type tests: previews through the real local server, ImageSet shape, asset fetch-back. */
import type { Config } from '../../lib/config';
import { previewOn, startTestServer } from '../helpers/service';

export type Server = Awaited<ReturnType<typeof startTestServer>>;

export function startServer(config: Partial<Config>): Promise<Server> {
  return startTestServer({ fetchTimeoutMs: 10_000, jobWaitMs: 25_000, ...config });
}

/** A preview through the local server: 200, and every record checked against the OpenAPI document (the spec's objects and required fields). */
export const preview = previewOn;

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
