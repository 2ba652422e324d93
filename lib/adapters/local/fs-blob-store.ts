import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { BlobStore, PutOptions } from '../../ports.js';

/** Blobs as files under a data directory; `<key>` plus a `<key>.meta.json` with its Content-Type. */
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
    await fs.writeFile(`${file}.meta.json`, JSON.stringify({ contentType: options.contentType, cacheControl: options.cacheControl }));
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

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.resolve(key));
    } catch {
      return undefined;
    }
  }

  async meta(key: string): Promise<{ contentType?: string; cacheControl?: string }> {
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
