import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { BlobHead, BlobStore, PutOptions } from '../../ports.js';

/** What `<key>.meta.json` holds. */
interface StoredMeta {
  contentType: string;
  cacheControl?: string;
  metadata?: Record<string, string>;
}

/** Blobs as files under a data directory; `<key>` plus a `<key>.meta.json` with its Content-Type, Cache-Control and metadata. */
export class FsBlobStore implements BlobStore {
  constructor(
    readonly root: string,
    private readonly baseUrl: () => string,
  ) {}

  resolve(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`Invalid blob key: ${key}`);
    return full;
  }

  async put(key: string, body: Buffer | string, options: PutOptions): Promise<void> {
    const file = this.resolve(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await fs.writeFile(tmp, body);
    const meta: StoredMeta = {
      contentType: options.contentType,
      cacheControl: options.cacheControl,
      ...(options.metadata ? { metadata: options.metadata } : {}),
    };
    await fs.writeFile(`${file}.meta.json`, JSON.stringify(meta));
    await fs.rename(tmp, file);
  }

  /** A blob is a regular file: a directory on the way to blobs (`assets/<sha>`) is none. */
  async has(key: string): Promise<boolean> {
    try {
      return (await fs.stat(this.resolve(key))).isFile();
    } catch {
      return false;
    }
  }

  async head(key: string): Promise<BlobHead | undefined> {
    if (!(await this.has(key))) return undefined;
    const { metadata } = await this.meta(key);
    return { metadata: metadata && typeof metadata === 'object' ? metadata : {} };
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.resolve(key));
    } catch {
      return undefined;
    }
  }

  async meta(key: string): Promise<Partial<StoredMeta>> {
    try {
      return JSON.parse(await fs.readFile(`${this.resolve(key)}.meta.json`, 'utf8'));
    } catch {
      return {};
    }
  }

  publicUrl(key: string): string {
    return `${this.baseUrl()}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }
}
