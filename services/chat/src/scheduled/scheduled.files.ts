import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Decision 0067: bytes are streamed in and out, never held whole. */
export interface ScheduledFileStore {
  /** Writes the stream under `key` and resolves with its size; nothing is left under `key` when it fails. */
  put(key: string, stream: Readable, guard?: (bytes: number) => void): Promise<number>;
  open(key: string): Readable;
  /** Removes the keys; absent ones are ignored. */
  remove(keys: string[]): Promise<void>;
  /** Removes what is stored (whole or partial) under no key of `keep` and was last written before `before`. */
  sweep(keep: Set<string>, before: Date): Promise<number>;
}

const KEY = /^[0-9a-f-]{36}$/;

/** Written under a temporary name and renamed, so a key is whole or absent; every scheduler replica must share the folder. */
export class DirFileStore implements ScheduledFileStore {
  constructor(private readonly dir: string) {}

  private pathOf(key: string) {
    if (!KEY.test(key)) throw new Error(`bad scheduled file key ${key}`);
    return path.join(this.dir, key);
  }

  async put(key: string, stream: Readable, guard: (bytes: number) => void = () => {}): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    const final = this.pathOf(key);
    const partial = `${final}.part`;
    let bytes = 0;
    try {
      await pipeline(
        stream,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            guard(bytes);
            yield chunk;
          }
        },
        createWriteStream(partial),
      );
      await rename(partial, final);
      return bytes;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  open(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  async remove(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => rm(this.pathOf(k), { force: true })));
  }

  async sweep(keep: Set<string>, before: Date): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const key = name.replace(/\.part$/, '');
      if (!KEY.test(key) || keep.has(key)) continue;
      const file = path.join(this.dir, name);
      const info = await stat(file).catch(() => null);
      if (!info || info.mtimeMs >= before.getTime()) continue;
      await rm(file, { force: true });
      removed++;
    }
    return removed;
  }
}

/** A file of a scheduled message (spec, Scheduled message `attachments`); `id` is its key in the file store. */
export interface Attachment {
  id: string;
  file_name: string;
  mime_type: string;
  file_size: number;
}

export const attachmentIds = (row: { attachments: unknown[] }) => (row.attachments as Attachment[]).map((a) => a.id);
