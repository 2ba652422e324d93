/**
 * The local blob store's put: a blob appears whole with its sidecar (Content-Type, Cache-Control,
 * metadata) or not at all, its directory is made once by the first put (the others beside it wait
 * for that one), and a directory removed since is made again.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../../lib/adapters/local/fs-blob-store';

let root: string;
let store: FsBlobStore;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'fs-blob-store-'));
  store = new FsBlobStore(root, () => 'http://localhost:1');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const webp = { contentType: 'image/webp', cacheControl: 'public, max-age=31536000, immutable' };

test('a put is read back with its sidecar; no temporary file is left', async () => {
  await store.put('assets/abc/medium.webp', Buffer.from('body'), { ...webp, metadata: { size: '640x336' } });
  expect(await store.get('assets/abc/medium.webp')).toEqual(Buffer.from('body'));
  expect(await store.head('assets/abc/medium.webp')).toEqual({ metadata: { size: '640x336' } });
  expect(await store.meta('assets/abc/medium.webp')).toEqual({ ...webp, metadata: { size: '640x336' } });
  expect(readdirSync(path.join(root, 'assets/abc')).sort()).toEqual(['medium.webp', 'medium.webp.meta.json']);
});

test('puts beside each other in a new directory, then one over a stored blob (its metadata replaced)', async () => {
  await Promise.all(['thumbnail', 'medium', 'large'].map((n) => store.put(`assets/d/${n}.webp`, Buffer.from(n), webp)));
  await store.put('assets/d/original.webp', Buffer.from('one'), { ...webp, metadata: { manifest: '1' } });
  await store.put('assets/d/original.webp', Buffer.from('two'), { ...webp, metadata: { manifest: '2' } });
  for (const n of ['thumbnail', 'medium', 'large']) expect(await store.get(`assets/d/${n}.webp`)).toEqual(Buffer.from(n));
  expect(await store.get('assets/d/original.webp')).toEqual(Buffer.from('two'));
  expect(await store.head('assets/d/original.webp')).toEqual({ metadata: { manifest: '2' } });
  expect(readdirSync(path.join(root, 'assets/d')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
});

test('a directory removed after its first put is made again by the next', async () => {
  await store.put('assets/gone/thumbnail.webp', Buffer.from('a'), webp);
  rmSync(path.join(root, 'assets'), { recursive: true });
  await store.put('assets/gone/medium.webp', Buffer.from('b'), webp);
  expect(await store.get('assets/gone/medium.webp')).toEqual(Buffer.from('b'));
  expect(existsSync(path.join(root, 'assets/gone/medium.webp.meta.json'))).toBe(true);
});

test('a put that cannot be written fails (a file where its directory should be)', async () => {
  await store.put('assets/file', Buffer.from('x'), webp);
  await expect(store.put('assets/file/medium.webp', Buffer.from('y'), webp)).rejects.toThrow();
});
