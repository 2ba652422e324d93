/**
 * The local blob store's put: a blob appears whole with its sidecar (Content-Type, Cache-Control,
 * metadata) or not at all, its directory is made once by the first put (the others beside it wait
 * for that one), and a directory removed since is made again. Writing behind: a put held in memory
 * answers every read until its file is in place.
 */
import { existsSync, promises as fsPromises, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../../lib/adapters/local/fs-blob-store';
import { stillPending } from '../../helpers/pending';

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

describe('writing behind (the local server: FsBlobStoreOptions.writeBehind)', () => {
  let behind: FsBlobStore;
  const failures: string[] = [];
  beforeEach(() => {
    failures.length = 0;
    behind = new FsBlobStore(root, () => 'http://localhost:1', { writeBehind: true, onWriteError: (key) => failures.push(key) });
  });

  /** Holds every file write until the returned function is called. */
  function holdWrites(): () => void {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = fsPromises.writeFile.bind(fsPromises);
    const spy = jest.spyOn(fsPromises, 'writeFile').mockImplementation(async (...args: Parameters<typeof fsPromises.writeFile>) => {
      await gate;
      return real(...args);
    });
    return () => {
      release();
      spy.mockRestore();
    };
  }

  test('a put returns before its file is written; every read answers from memory until it is, then from the disk', async () => {
    const release = holdWrites();
    try {
      await behind.put('assets/wb/medium.webp', Buffer.from('held'), { ...webp, metadata: { size: '640x336' } });
      expect(existsSync(path.join(root, 'assets/wb/medium.webp'))).toBe(false);
      expect(await behind.has('assets/wb/medium.webp')).toBe(true);
      expect(await behind.get('assets/wb/medium.webp')).toEqual(Buffer.from('held'));
      expect(await behind.head('assets/wb/medium.webp')).toEqual({ metadata: { size: '640x336' } });
      expect(await behind.meta('assets/wb/medium.webp')).toEqual({ ...webp, metadata: { size: '640x336' } });
      await behind.put('assets/wb/page.txt', 'text, as UTF-8: é', { contentType: 'text/plain; charset=utf-8' });
      expect(await behind.get('assets/wb/page.txt')).toEqual(Buffer.from('text, as UTF-8: é', 'utf8'));
    } finally {
      release();
    }
    await behind.flush();
    expect(readFileSync(path.join(root, 'assets/wb/medium.webp'), 'utf8')).toBe('held');
    expect(readFileSync(path.join(root, 'assets/wb/page.txt'), 'utf8')).toBe('text, as UTF-8: é');
    // Another store on the same directory (what a restarted server reads) sees the same blob.
    expect(await store.head('assets/wb/medium.webp')).toEqual({ metadata: { size: '640x336' } });
    expect(failures).toEqual([]);
  });

  test('puts of one key are written in their order: the last one is what the disk keeps', async () => {
    const release = holdWrites();
    try {
      await behind.put('assets/wb/original.webp', Buffer.from('one'), { ...webp, metadata: { manifest: '1' } });
      await behind.put('assets/wb/original.webp', Buffer.from('two'), { ...webp, metadata: { manifest: '2' } });
      expect(await behind.get('assets/wb/original.webp')).toEqual(Buffer.from('two'));
    } finally {
      release();
    }
    await behind.flush();
    expect(await store.get('assets/wb/original.webp')).toEqual(Buffer.from('two'));
    expect(await store.head('assets/wb/original.webp')).toEqual({ metadata: { manifest: '2' } });
    expect(await behind.head('assets/wb/original.webp')).toEqual({ metadata: { manifest: '2' } });
  });

  test('a write that fails is reported and the blob is gone; a durable put waits for its write and fails with it', async () => {
    await behind.put('assets/file', Buffer.from('x'), { ...webp, durable: true });
    await behind.put('assets/file/medium.webp', Buffer.from('y'), webp);
    await behind.flush();
    expect(failures).toEqual(['assets/file/medium.webp']);
    expect(await behind.get('assets/file/medium.webp')).toBeUndefined();
    await expect(behind.put('assets/file/large.webp', Buffer.from('z'), { ...webp, durable: true })).rejects.toThrow();
    await behind.put('jobs/probe.json', '{}', { contentType: 'application/json', durable: true });
    expect(existsSync(path.join(root, 'jobs/probe.json'))).toBe(true);
  });
  /** A promise settled by hand: what a put's bytes still being made look like (BlobStore.putLater). */
  function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    return { promise, resolve, reject };
  }
  test('putLater: the key is there at once, its readers wait for the bytes, and its file follows', async () => {
    const made = deferred<{ body: Buffer; options: typeof webp & { metadata: Record<string, string> } }>();
    const written = behind.putLater?.('assets/pl/medium.webp', made.promise);
    expect(written).toBeDefined();
    expect(await behind.has('assets/pl/medium.webp')).toBe(true);
    const read = behind.get('assets/pl/medium.webp');
    const head = behind.head('assets/pl/medium.webp');
    expect(await stillPending(read)).toBe(true);
    expect(await stillPending(head)).toBe(true);
    made.resolve({ body: Buffer.from('encoded'), options: { ...webp, metadata: { size: '640x336' } } });
    expect(await read).toEqual(Buffer.from('encoded'));
    expect(await head).toEqual({ metadata: { size: '640x336' } });
    await written;
    expect(readFileSync(path.join(root, 'assets/pl/medium.webp'), 'utf8')).toBe('encoded');
    expect(await store.meta('assets/pl/medium.webp')).toEqual({ ...webp, metadata: { size: '640x336' } });
    expect(failures).toEqual([]);
  });

  test('putLater with `after`: its readers do not wait for it, its file does (a manifest after the sizes it names)', async () => {
    const sizes = deferred<void>();
    const written = behind.putLater?.('assets/pl/original.webp', Promise.resolve({ body: Buffer.from('orig'), options: webp }), sizes.promise);
    expect(await behind.get('assets/pl/original.webp')).toEqual(Buffer.from('orig'));
    expect(await stillPending(written as Promise<void>)).toBe(true);
    expect(existsSync(path.join(root, 'assets/pl/original.webp'))).toBe(false);
    sizes.reject(new Error('a size failed')); // the file is written once `after` settled, however
    await written;
    expect(readFileSync(path.join(root, 'assets/pl/original.webp'), 'utf8')).toBe('orig');
  });

  test("putLater whose bytes fail: reported, and the key is what it was before (the disk's blob, or none)", async () => {
    await store.put('assets/pl/large.webp', Buffer.from('stored before'), webp);
    const made = deferred<{ body: Buffer; options: typeof webp }>();
    const written = behind.putLater?.('assets/pl/large.webp', made.promise);
    const gone = behind.putLater?.('assets/pl/thumbnail.webp', Promise.reject(new Error('encode failed')));
    const read = behind.get('assets/pl/large.webp');
    made.reject(new Error('encode failed'));
    await expect(written).rejects.toThrow('encode failed');
    await expect(gone).rejects.toThrow('encode failed');
    expect(await read).toEqual(Buffer.from('stored before'));
    expect(await behind.get('assets/pl/thumbnail.webp')).toBeUndefined();
    expect(await behind.has('assets/pl/thumbnail.webp')).toBe(false);
    expect(failures.sort()).toEqual(['assets/pl/large.webp', 'assets/pl/thumbnail.webp']);
  });

  test("flush waits for a putLater's bytes and file; a store that does not write behind has no putLater", async () => {
    const made = deferred<{ body: string; options: { contentType: string } }>();
    void behind.putLater?.('assets/pl/page.txt', made.promise);
    const flushed = behind.flush();
    expect(await stillPending(flushed)).toBe(true);
    made.resolve({ body: 'later', options: { contentType: 'text/plain' } });
    await flushed;
    expect(readFileSync(path.join(root, 'assets/pl/page.txt'), 'utf8')).toBe('later');
    expect(store.putLater).toBeUndefined();
  });
});
