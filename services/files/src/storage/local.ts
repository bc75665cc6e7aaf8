import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FileStorage } from './storage.js';

/**
 * Files on a local directory (a volume in Kubernetes). A file is written under a temporary name and renamed when
 * complete, so a reader never sees a partial file and a crash leaves only `.partial` files behind.
 */
export class LocalStorage implements FileStorage {
  readonly kind = 'local';
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    // Keys are made by the service (company id / file id), never by a client; refuse anything leaving the root anyway.
    if (!path.startsWith(this.root + sep)) throw new Error(`storage key outside the root: ${key}`);
    return path;
  }

  async put(key: string, body: Readable): Promise<void> {
    const path = this.path(key);
    const partial = `${path}.partial`;
    await mkdir(dirname(path), { recursive: true });
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Readable | null> {
    const path = this.path(key);
    try {
      await stat(path);
    } catch {
      return null;
    }
    return createReadStream(path);
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await stat(join(this.root));
  }
}
