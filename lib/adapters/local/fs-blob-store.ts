import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { BlobHead, BlobStore, BlobToPut, PutOptions } from '../../ports.js';

/** What `<key>.meta.json` holds. */
interface StoredMeta {
  contentType: string;
  cacheControl?: string;
  metadata?: Record<string, string>;
}

export interface FsBlobStoreOptions {
  /**
   * A put returns once the blob is held in memory, and is written to disk behind it: until it is
   * there, this store's reads (has, head, get, meta: the local server's /assets/) answer from
   * memory, so a record's address answers the moment the record goes out, and the writes of one
   * preview never hold its record up nor share the disk's time with the next one's reads. Puts of
   * one key are written in their order. `flush` waits for every write. Off: a put returns once the
   * file is in place (another process reading the directory sees it then).
   */
  writeBehind?: boolean;
  /** A write behind that failed (the blob is then gone from memory as well: a 404). */
  onWriteError?: (key: string, err: unknown) => void;
}

/** A put being written behind: its bytes and sidecar (once made: BlobStore.putLater), served until the file is in place. */
interface Writing {
  /** The bytes and sidecar; undefined once their making failed. */
  ready: Promise<{ body: Buffer; meta: StoredMeta } | undefined>;
  done: Promise<void>;
}

const metaOf = (options: PutOptions): StoredMeta => ({
  contentType: options.contentType,
  cacheControl: options.cacheControl,
  ...(options.metadata ? { metadata: options.metadata } : {}),
});

/** Blobs as files under a data directory; `<key>` plus a `<key>.meta.json` with its Content-Type, Cache-Control and metadata. */
export class FsBlobStore implements BlobStore {
  private readonly writing = new Map<string, Writing>();

  constructor(
    readonly root: string,
    private readonly baseUrl: () => string,
    private readonly options: FsBlobStoreOptions = {},
  ) {
    if (options.writeBehind)
      this.putLater = (key, made, after) => {
        const written = this.hold(key, this.resolve(key), made, after);
        written.catch(() => undefined); // logged by hold (onWriteError)
        return written;
      };
  }

  resolve(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`Invalid blob key: ${key}`);
    return full;
  }

  /**
   * Writes the body to a temporary file and renames it into place, so a reader (the local server's
   * /assets/, a HEAD) sees the whole blob or none; the sidecar is written before the rename (beside
   * the body's write: they do not depend on each other), so a blob that exists has its
   * Content-Type and metadata. No fsync: the data directory is a cache of renders and versions a
   * preview can make again, not a record of its own. A directory is made once per process
   * (`dirs`), and again if it went missing since.
   */
  async put(key: string, body: Buffer | string, options: PutOptions): Promise<void> {
    const file = this.resolve(key);
    if (!this.options.writeBehind) return this.write(file, body, metaOf(options));
    const written = this.hold(key, file, Promise.resolve({ body, options }));
    // A durable put is this put's own write, its failure included.
    if (options.durable) await written;
  }

  /**
   * BlobStore.putLater, when this store writes behind (else absent: a put waits for its file):
   * the key is held, and its readers wait for the bytes, from now on.
   */
  readonly putLater?: (key: string, made: Promise<BlobToPut>, after?: Promise<unknown>) => Promise<void>;

  /** A put held in memory until its file is written (after the key's earlier puts); its own write, failure included. */
  private hold(key: string, file: string, made: Promise<BlobToPut>, after?: Promise<unknown>): Promise<void> {
    const before = this.writing.get(key)?.done ?? Promise.resolve();
    const ready = made.then(({ body, options }) => ({ body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body, meta: metaOf(options) }));
    const written = Promise.all([ready, before, after?.catch(() => undefined)]).then(([r]) => this.write(file, r.body, r.meta));
    const entry: Writing = { ready: ready.catch(() => undefined), done: before };
    entry.done = written
      .catch((err: unknown) => this.options.onWriteError?.(key, err))
      .finally(() => {
        if (this.writing.get(key) === entry) this.writing.delete(key);
      });
    this.writing.set(key, entry);
    return written;
  }

  /** Once every put made so far is on disk (each written or failed); puts made meanwhile are not waited for. */
  async flush(): Promise<void> {
    await Promise.all([...this.writing.values()].map((w) => w.done));
  }

  /** The file and its sidecar, in place. */
  private async write(file: string, body: Buffer | string, meta: StoredMeta): Promise<void> {
    const dir = path.dirname(file);
    await this.directory(dir);
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    // Both settled before a retry, so no write to `tmp` is still running when it starts again.
    const write = async () => {
      const failed = (await Promise.allSettled([fs.writeFile(tmp, body), fs.writeFile(`${file}.meta.json`, JSON.stringify(meta))])).find(
        (r) => r.status === 'rejected',
      );
      if (failed) throw failed.reason;
    };
    try {
      await write();
    } catch (err) {
      // The directory was removed since it was made (a test, an operator clearing the cache): once more.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.dirs.delete(dir);
      await this.directory(dir);
      await write();
    }
    await fs.rename(tmp, file);
  }

  /**
   * The directories this store made (or is making), so a key's `assets/<sha>` is made once, by the
   * first of its puts, and the puts after it (or beside it) wait for that one. Bounded: cleared when full.
   */
  private readonly dirs = new Map<string, Promise<unknown>>();

  private directory(dir: string): Promise<unknown> {
    let made = this.dirs.get(dir);
    if (!made) {
      if (this.dirs.size >= 10_000) this.dirs.clear();
      made = fs.mkdir(dir, { recursive: true });
      made.catch(() => this.dirs.delete(dir));
      this.dirs.set(dir, made);
    }
    return made;
  }

  /** A blob is a regular file: a directory on the way to blobs (`assets/<sha>`) is none. */
  async has(key: string): Promise<boolean> {
    if (this.writing.has(key)) return true;
    try {
      return (await fs.stat(this.resolve(key))).isFile();
    } catch {
      return false;
    }
  }

  /** The bytes and sidecar of a put held here, once made (undefined: none held, or its making failed). */
  private async held(key: string): Promise<{ body: Buffer; meta: StoredMeta } | undefined> {
    return this.writing.get(key)?.ready;
  }

  async head(key: string): Promise<BlobHead | undefined> {
    const writing = await this.held(key);
    if (writing) return { metadata: writing.meta.metadata ?? {} };
    if (!(await this.has(key))) return undefined;
    const { metadata } = await this.meta(key);
    return { metadata: metadata && typeof metadata === 'object' ? metadata : {} };
  }

  async get(key: string): Promise<Buffer | undefined> {
    const writing = await this.held(key);
    if (writing) return writing.body;
    try {
      return await fs.readFile(this.resolve(key));
    } catch {
      return undefined;
    }
  }

  async meta(key: string): Promise<Partial<StoredMeta>> {
    const writing = await this.held(key);
    if (writing) return writing.meta;
    try {
      return JSON.parse(await fs.readFile(`${this.resolve(key)}.meta.json`, 'utf8'));
    } catch {
      return {};
    }
  }

  /** The blobs directly in the folder `prefix` names (it ends with `/`), written or being written behind. */
  async list(prefix: string): Promise<string[]> {
    const dir = this.resolve(`${folderOf(prefix)}x`).slice(0, -1);
    const names = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    const keys = new Set(names.filter((d) => d.isFile() && !d.name.endsWith('.meta.json') && !d.name.endsWith('.tmp')).map((d) => prefix + d.name));
    for (const key of this.writing.keys()) if (key.startsWith(prefix) && !key.slice(prefix.length).includes('/')) keys.add(key);
    return [...keys];
  }

  async delete(key: string): Promise<void> {
    await this.writing.get(key)?.done;
    const file = this.resolve(key);
    await Promise.all([fs.rm(file, { force: true }), fs.rm(`${file}.meta.json`, { force: true })]);
  }

  publicUrl(key: string): string {
    return `${this.baseUrl()}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }
}

/** A list's prefix: a folder, ending with `/`. */
function folderOf(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Error(`A list names a folder (ending with /): ${prefix}`);
  return prefix;
}
